import { describe, expect, it } from 'vitest';
import type { WorkloadRow } from '../../../shared/wire/inventory.ts';
import {
  realisticInventory,
  realisticInventoryMessage,
} from '../../fixtures/realistic.ts';
import { specFactsViolations } from './spec-facts-rules.ts';

function workload(kind: string, name: string): WorkloadRow {
  const found = realisticInventory().workloads?.find(
    (w) => w.kind === kind && w.name === name,
  );
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
}

describe('realisticInventory', () => {
  it('returns a fresh object on every call', () => {
    // Prepare
    const first = realisticInventory();

    // Act
    first.pods?.splice(0);
    first.cluster.name = 'changed';
    const second = realisticInventory();

    // Assess
    expect(second.cluster.name).toBe('prod-eu-1');
    expect(second.pods?.length).toBeGreaterThan(0);
  });

  it('sends its message the way an agent would, leaving unknown fields out', () => {
    // Act
    const message = realisticInventoryMessage();

    // Assess
    expect(message.pods?.[1]).not.toHaveProperty('owner_kind');
    expect(message.nodes?.[3]?.taints).toBeNull();
    expect(message.namespaces?.some((n) => n.uid === undefined)).toBe(true);
  });

  it('follows the spec facts rules on every workload that has facts', () => {
    // Prepare
    const workloads = realisticInventory().workloads ?? [];

    // Act
    const violations = workloads.flatMap((w) =>
      w.spec_facts
        ? specFactsViolations(`${w.namespace}/${w.name}`, w.spec_facts, w.kind)
        : [],
    );

    // Assess
    expect(violations).toEqual([]);
  });

  it('has a Deployment with init containers in spec order and a prefixed envFrom', () => {
    // Act
    const facts = workload('Deployment', 'rook-ceph-osd-0').spec_facts;

    // Assess
    expect(facts?.containers.map((c) => [c.name, c.init ?? false])).toEqual([
      ['osd', false],
      ['activate', true],
      ['chown-container-data-dir', true],
    ]);
    expect(facts?.containers[0]?.env_from).toEqual([
      'configmap:rook-ceph-osd-env#ROOK_',
      'secret:rook-ceph-osd-keys',
    ]);
    expect(facts?.containers[0]?.volume_refs).toEqual([
      'configmap:rook-config-override',
    ]);
  });

  it('has a StatefulSet whose claim template is a pvc-template ref', () => {
    // Act
    const facts = workload('StatefulSet', 'nginx-sts').spec_facts;

    // Assess
    expect(facts?.containers[0]?.volume_refs).toEqual(['pvc-template:www']);
    expect(facts?.replicas).toBe(4);
  });

  it('has a DaemonSet without replicas and Rollouts with and without facts', () => {
    // Act
    const daemonSet = workload('DaemonSet', 'kube-proxy');
    const canary = workload('Rollout', 'canary-demo');
    const byRef = workload('Rollout', 'rollout-ref-deployment');

    // Assess
    expect(daemonSet.spec_facts).not.toHaveProperty('replicas');
    expect(canary.spec_facts?.strategy?.type).toBe('canary');
    expect(canary.spec_facts?.containers[0]?.requests).toEqual({
      cpu: '5m',
      memory: '32Mi',
    });
    expect(byRef.spec_facts).toBeNull();
  });

  it('has an HPA targeting the Deployment in its namespace', () => {
    // Act
    const inventory = realisticInventory();
    const hpa = inventory.hpas?.[0];

    // Assess
    expect(hpa?.namespace).toBe('icx');
    expect(hpa?.target).toEqual({
      kind: 'Deployment',
      name: 'icx-db',
      api_version: 'apps/v1',
    });
    expect(workload('Deployment', 'icx-db').namespace).toBe('icx');
  });

  it('has pods in every state the summary counts', () => {
    // Act
    const pods = realisticInventory().pods ?? [];
    const states = pods.map((p) => {
      const reasons = p.containers.flatMap((c) => [
        c.waiting_reason,
        c.last_termination_reason,
      ]);
      return `${p.phase}:${reasons.filter(Boolean).join(',')}`;
    });

    // Assess
    expect(states).toEqual(
      expect.arrayContaining([
        'Pending:ImagePullBackOff',
        'Pending:',
        'Succeeded:Completed',
        'Failed:OOMKilled',
        'Running:CrashLoopBackOff,ContainerCannotRun',
      ]),
    );
  });

  it('has a CronJob with its Job and a FailedScheduling event seen through a series', () => {
    // Act
    const inventory = realisticInventory();
    const job = inventory.jobs?.find((j) => j.owner_cronjob === 'hello');
    const failed = inventory.events?.find(
      (e) => e.reason === 'FailedScheduling',
    );

    // Assess
    expect(inventory.jobs?.some((j) => j.kind === 'CronJob')).toBe(true);
    expect(job?.status).toBe('Complete');
    expect(failed?.type).toBe('Warning');
    expect(failed?.involved_object?.kind).toBe('Pod');
    expect(Date.parse(failed?.last_seen ?? '')).toBeGreaterThan(
      Date.parse(failed?.first_seen ?? ''),
    );
  });

  it('has ClusterIP, headless and hostname LoadBalancer services', () => {
    // Act
    const services = realisticInventory().services ?? [];

    // Assess
    expect(services.map((s) => [s.type, s.cluster_ip])).toEqual(
      expect.arrayContaining([
        ['ClusterIP', '172.30.136.24'],
        ['ClusterIP', 'None'],
        ['LoadBalancer', '100.69.46.185'],
      ]),
    );
    expect(
      services.find((s) => s.type === 'LoadBalancer')?.load_balancer_ingress,
    ).toEqual(['abc123.us-west-2.elb.amazonaws.com']);
  });

  it('has a node with a GCE topology zone and nodes without metrics', () => {
    // Act
    const nodes = realisticInventory().nodes ?? [];

    // Assess
    expect(nodes.find((n) => n.zone === 'us-east1-b')?.provider_id).toMatch(
      /^gce:\/\//,
    );
    expect(nodes.every((n) => n.usage === null)).toBe(true);
  });
});
