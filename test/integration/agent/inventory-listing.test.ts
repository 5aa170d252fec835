/**
 * The inventory's listing keeps each object slimmed as its page is parsed
 * (shared/agent/list.ts, slimForInventory: no managedFields, no
 * last-applied annotation), so a cluster of many pods fits the agent's
 * heap until the pod limit cuts; the message it builds is the one the
 * objects as served give. The live reads' listing (responder.ts calls
 * KubeApi.listAll with no `keep`) still answers with the objects as served.
 * Against the fake apiserver serving every real fixture, in pages of 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApi } from '../../../shared/agent/kube-api.ts';
import { collectInventory, listCluster } from '../../../shared/agent/list.ts';
import { COLLECTED, resourcePath } from '../../../shared/agent/resources.ts';
import { LAST_APPLIED } from '../../../shared/collector/annotations.ts';
import {
  buildInventory,
  type ClusterObjects,
} from '../../../shared/collector/collect.ts';
import type { K8sObject } from '../../../shared/collector/k8s.ts';
import {
  type FakeKube,
  serveCluster,
  startFakeKube,
} from '../../helpers/fake-kube.ts';
import { allRealObjects } from '../../helpers/real-fixtures.ts';

let kube: FakeKube;
let api: KubeApi;

beforeAll(async () => {
  kube = await startFakeKube();
  serveCluster(kube, allRealObjects());
  api = new KubeApi(kube.kubeConfig);
});

afterAll(async () => {
  await kube?.stop();
});

type Lists = Exclude<keyof ClusterObjects, 'version'>;

/** The served objects of each kind, in the order served. */
const served = (): [Lists, K8sObject[]][] =>
  Object.entries(allRealObjects()) as [Lists, K8sObject[]][];

const hasDropped = (o: K8sObject) =>
  o.metadata?.managedFields !== undefined ||
  o.metadata?.annotations?.[LAST_APPLIED] !== undefined;

/** `o` less managedFields and last-applied, written out here. */
function without(o: K8sObject): K8sObject {
  const metadata = structuredClone(o.metadata);
  delete metadata.managedFields;
  if (metadata.annotations) delete metadata.annotations[LAST_APPLIED];
  return { ...o, metadata };
}

describe('the inventory listing', () => {
  it('keeps every object without managedFields and last-applied, and nothing else left out', async () => {
    const { objects } = await listCluster(api, { pageSize: 2 });
    let slimmed = 0;
    for (const [field, list] of served()) {
      const listed = objects[field] ?? [];
      expect(listed.some(hasDropped), field).toBe(false);
      expect(listed, field).toEqual(list.map(without));
      slimmed += list.filter(hasDropped).length;
    }
    // The fixtures hold managedFields or last-applied in most kinds.
    expect(slimmed).toBeGreaterThan(50);
  });

  it('collects, byte for byte, the message the objects as served give', async () => {
    // The old path: every kind the listing read, listed whole, then built.
    const { objects } = await listCluster(api, { pageSize: 2 });
    const whole: ClusterObjects = { version: objects.version };
    for (const field of Object.keys(objects) as (keyof ClusterObjects)[]) {
      if (field === 'version') continue;
      whole[field] = await api.listAll(resourcePath(COLLECTED[field]), 2);
    }
    for (const options of [
      {},
      // The pod limit and the event cap cut, and a namespace excluded.
      { podLimit: 5, eventLimit: 4, excludeNamespaces: ['kube-system'] },
    ]) {
      const common = {
        agentId: '00000000-0000-4000-8000-000000000001',
        agentVersion: 'v0.9.0',
        timestamp: '2026-01-02T00:00:00Z',
        clusterName: 'fixtures',
        ...options,
      };
      const { message } = await collectInventory(api, {
        ...common,
        pageSize: 2,
      });
      const asServed = buildInventory(whole, {
        ...common,
        apiServerUrl: api.server,
      });
      expect(JSON.stringify(message)).toBe(JSON.stringify(asServed));
    }
  });
});

describe("the live reads' listing (KubeApi.listAll without keep)", () => {
  it('answers with the objects as served, managedFields and last-applied included', async () => {
    for (const [field, list] of served()) {
      const listed = await api.listAll(resourcePath(COLLECTED[field]), 2);
      expect(listed, field).toEqual(list);
    }
    const pods = await api.listAll(resourcePath(COLLECTED.pods), 2);
    expect(pods.filter(hasDropped).length).toBeGreaterThan(0);
  });

  it('keeps what `keep` returns of each item, in every page', async () => {
    const names = await api.listAll(
      resourcePath(COLLECTED.pods),
      2,
      {},
      (pod) => pod.metadata.name,
    );
    expect(names).toEqual(
      (allRealObjects().pods ?? []).map((p) => p.metadata.name),
    );
  });
});
