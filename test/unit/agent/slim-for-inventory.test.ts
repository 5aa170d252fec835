/**
 * slimForInventory (shared/agent/list.ts): what the inventory's listing
 * keeps of each object. It drops managedFields and the last-applied
 * annotation and nothing else, and the collector builds the same message
 * from the slimmed objects as from the objects as served.
 */
import { describe, expect, it } from 'vitest';
import { slimForInventory } from '../../../shared/agent/list.ts';
import { LAST_APPLIED } from '../../../shared/collector/annotations.ts';
import {
  buildInventory,
  type ClusterObjects,
} from '../../../shared/collector/collect.ts';
import type { K8sObject } from '../../../shared/collector/k8s.ts';
import { allRealObjects } from '../../helpers/real-fixtures.ts';

const OPTIONS = {
  agentId: '00000000-0000-4000-8000-000000000001',
  agentVersion: 'v0.9.0',
  timestamp: '2026-01-02T00:00:00Z',
  clusterName: 'fixtures',
  apiServerUrl: 'https://kube.example:6443',
};

/** Every list of `objects` passed through slimForInventory. */
function slimmed(objects: ClusterObjects): ClusterObjects {
  const out: ClusterObjects = { ...objects };
  for (const [field, list] of Object.entries(objects)) {
    if (field === 'version' || list === undefined) continue;
    (out as Record<string, K8sObject[]>)[field] = (list as K8sObject[]).map(
      slimForInventory,
    );
  }
  return out;
}

describe('slimForInventory', () => {
  it('drops managedFields and the last-applied annotation, keeps every other annotation in order, and leaves its input alone', () => {
    const served = {
      kind: 'Service',
      metadata: {
        name: 'web',
        namespace: 'shop',
        annotations: {
          'meta.helm.sh/release-name': 'web',
          [LAST_APPLIED]: '{"apiVersion":"v1","kind":"Service"}',
          'service.beta.kubernetes.io/aws-load-balancer-type': 'nlb',
        },
        managedFields: [{ manager: 'kubectl', operation: 'Update' }],
        labels: { app: 'web' },
      },
      spec: { type: 'ClusterIP' },
    };
    const copy = structuredClone(served);
    const slim = slimForInventory(served);
    expect(slim).toEqual({
      kind: 'Service',
      metadata: {
        name: 'web',
        namespace: 'shop',
        annotations: {
          'meta.helm.sh/release-name': 'web',
          'service.beta.kubernetes.io/aws-load-balancer-type': 'nlb',
        },
        labels: { app: 'web' },
      },
      spec: { type: 'ClusterIP' },
    });
    expect(Object.keys(slim.metadata.annotations)).toEqual([
      'meta.helm.sh/release-name',
      'service.beta.kubernetes.io/aws-load-balancer-type',
    ]);
    expect(served).toEqual(copy);
  });

  it('returns an object with neither as it is, and anything without metadata untouched', () => {
    const plain = { metadata: { name: 'a', annotations: { x: 'y' } } };
    expect(slimForInventory(plain)).toBe(plain);
    for (const odd of [null, undefined, 1, 'x', {}, { metadata: null }]) {
      expect(slimForInventory(odd)).toBe(odd);
    }
  });

  it('leaves nothing of either in the fixture cluster, and nothing else out', () => {
    let dropped = 0;
    for (const [field, list] of Object.entries(allRealObjects())) {
      if (field === 'version') continue;
      for (const o of list as K8sObject[]) {
        // The object less the two, written out here.
        const metadata = structuredClone(o.metadata);
        delete metadata.managedFields;
        if (metadata.annotations) delete metadata.annotations[LAST_APPLIED];
        const slim = slimForInventory(o);
        expect(slim, field).toEqual({ ...o, metadata });
        if (slim !== o) dropped += 1;
      }
    }
    // The fixtures hold either in most kinds.
    expect(dropped).toBeGreaterThan(50);
  });

  it('the collector builds the same message, byte for byte, from the slimmed fixture cluster as from the cluster as served', () => {
    for (const options of [
      OPTIONS,
      // The pod limit and the event cap cut, and a namespace excluded.
      {
        ...OPTIONS,
        podLimit: 5,
        eventLimit: 4,
        excludeNamespaces: ['kube-system'],
      },
    ]) {
      const asServed = buildInventory(allRealObjects(), options);
      const fromSlimmed = buildInventory(slimmed(allRealObjects()), options);
      expect(JSON.stringify(fromSlimmed)).toBe(JSON.stringify(asServed));
    }
  });
});
