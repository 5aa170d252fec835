/**
 * What the live benchmark's cluster holds, for the agent's real responder
 * to read through a fake Kubernetes API: a Deployment of about 100 KB, ten
 * ReplicaSets it owns with their pod templates, and a pod whose container
 * has 200 log lines of the shapes the sanitizer looks at. Built from the
 * real Deployment fixture, grown with containers until it reaches the size.
 */
import { readFileSync } from 'node:fs';
import type { K8sObject } from '../shared/collector/k8s.ts';
import type { LogLine } from '../test/helpers/fake-kube.ts';

export const MANIFEST_BYTES = 100 * 1024;
export const LOG_LINES = 200;

const base = JSON.parse(
  readFileSync(
    new URL(
      '../test/fixtures/real/deployment-icx-db-secretkeyref-gke.json',
      import.meta.url,
    ),
    'utf8',
  ),
) as {
  metadata: { uid: string; name: string; namespace: string };
  spec: { template: { spec: { containers: Record<string, unknown>[] } } };
};

/** The real Deployment, grown with more containers to `bytes` of JSON. */
function bigManifest(bytes: number): K8sObject {
  const object = structuredClone(base);
  const containers = object.spec.template.spec.containers;
  const first = containers[0] ?? {};
  for (let i = 0; JSON.stringify(object).length < bytes; i++) {
    containers.push({
      ...first,
      name: `worker-${i}`,
      env: Array.from({ length: 20 }, (_, j) => ({
        name: `SETTING_${i}_${j}`,
        value: `<redacted: ${10 + j} chars>`,
      })),
    });
  }
  return object as unknown as K8sObject;
}

function logLines(): LogLine[] {
  const shapes = [
    'GET /api/orders/42 200 12ms user=alice',
    'connecting to postgres://app:hunter2@db:5432/orders',
    'level=info msg="request done" duration=12ms token=abc123def456',
    '{"level":"warn","msg":"slow query","password":"s3cr3t!","ms":812}',
    'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc',
    'worker 7 finished batch 1182 of 5000 in 381 ms',
  ];
  return Array.from({ length: LOG_LINES }, (_, i) => {
    const s = String(i % 60).padStart(2, '0');
    return {
      ts: `2026-10-01T11:${String(Math.floor(i / 60)).padStart(2, '0')}:${s}.${String(i).padStart(9, '0')}Z`,
      text: shapes[i % shapes.length] ?? '',
    };
  });
}

/**
 * The objects and logs of the benchmark's cluster: its Deployment grown to
 * MANIFEST_BYTES, or as it was read from its cluster (`asRead`: the
 * cold-start bench's everyday object).
 */
export function benchCluster(options: { asRead?: boolean } = {}) {
  const deployment = bigManifest(options.asRead ? 0 : MANIFEST_BYTES);
  const replicaSets: K8sObject[] = Array.from({ length: 10 }, (_, i) => ({
    metadata: {
      name: `icx-db-${i}abcde`,
      namespace: base.metadata.namespace,
      uid: `00000000-0000-4000-8000-00000000000${i}`,
      creationTimestamp: '2026-09-01T10:00:00Z',
      labels: { 'pod-template-hash': `${i}abcde` },
      annotations: { 'deployment.kubernetes.io/revision': String(10 - i) },
      ownerReferences: [{ kind: 'Deployment', uid: base.metadata.uid }],
    },
    spec: { replicas: i === 0 ? 3 : 0, template: base.spec.template },
  }));
  const pod: K8sObject = {
    metadata: { name: 'icx-db-1', namespace: base.metadata.namespace },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
  };
  return { deployment, replicaSets, pod, logLines: logLines() };
}
