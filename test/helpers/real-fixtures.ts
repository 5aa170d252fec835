/**
 * The captured Kubernetes objects in the repository's fixture set
 * (`test/fixtures/real/`, see its INDEX.md), read as the apiserver
 * would serve them: YAML timestamps stay strings (the core schema), and a
 * `*List` or `kind: List` file yields its items.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import type { ClusterObjects } from '../../shared/collector/collect.ts';
import type { K8sObject } from '../../shared/collector/k8s.ts';

const here = dirname(fileURLToPath(import.meta.url));
export const REAL_FIXTURES_DIR = resolve(here, '../fixtures/real');

export function realFixtureFiles(): string[] {
  return readdirSync(REAL_FIXTURES_DIR)
    .filter((f) => /\.(json|ya?ml)$/.test(f))
    .sort();
}

export function readRealFixture(file: string): K8sObject {
  const text = readFileSync(join(REAL_FIXTURES_DIR, file), 'utf8');
  return file.endsWith('.json')
    ? JSON.parse(text)
    : yaml.load(text, { schema: yaml.CORE_SCHEMA });
}

/** The objects of a file: a list's items, or the object itself. */
export function realObjects(file: string): K8sObject[] {
  const doc = readRealFixture(file);
  return Array.isArray(doc?.items) ? doc.items : [doc];
}

const FIELD_OF_KIND: Record<string, keyof ClusterObjects> = {
  Node: 'nodes',
  Namespace: 'namespaces',
  Deployment: 'deployments',
  StatefulSet: 'statefulsets',
  DaemonSet: 'daemonsets',
  Rollout: 'rollouts',
  ReplicaSet: 'replicasets',
  Pod: 'pods',
  Service: 'services',
  Ingress: 'ingresses',
  PersistentVolumeClaim: 'pvcs',
  Event: 'events',
  Job: 'jobs',
  CronJob: 'cronjobs',
  HorizontalPodAutoscaler: 'hpas',
  NetworkPolicy: 'networkPolicies',
  ResourceQuota: 'resourceQuotas',
  EndpointSlice: 'endpointSlices',
};

/** The file's objects, filed under the collector field of their kind. */
export function objectsOf(file: string): ClusterObjects {
  const doc = readRealFixture(file);
  const listKind =
    typeof doc.kind === 'string' &&
    doc.kind.endsWith('List') &&
    doc.kind !== 'List'
      ? doc.kind.slice(0, -4)
      : undefined;
  const out: ClusterObjects = {};
  for (const o of realObjects(file)) {
    const kind =
      o.kind ??
      listKind ??
      (file.startsWith('replicaset-') ? 'ReplicaSet' : undefined);
    const field = FIELD_OF_KIND[kind];
    if (field === undefined || field === 'version')
      throw new Error(`${file}: kind ${kind}`);
    // One upstream edit (the HPA) dropped the namespace; the apiserver never does.
    if (kind !== 'Node' && kind !== 'Namespace')
      o.metadata.namespace ??= 'default';
    out[field] ??= [];
    (out[field] as K8sObject[]).push(o);
  }
  return out;
}

/** Every fixture file's objects together: one cluster holding them all. */
export function allRealObjects(): ClusterObjects {
  const out: ClusterObjects = {};
  for (const file of realFixtureFiles()) {
    for (const [field, list] of Object.entries(objectsOf(file))) {
      const key = field as Exclude<keyof ClusterObjects, 'version'>;
      out[key] = [...(out[key] ?? []), ...(list as K8sObject[])];
    }
  }
  return out;
}
