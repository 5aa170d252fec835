/**
 * What the live benchmark's agent answers: a Deployment manifest of about
 * 100 KB, ten revisions with their pod templates, and 200 stamped log lines
 * of the shapes the sanitizer looks at. Built from the real Deployment
 * fixture, grown with containers until it reaches the size.
 */
import { readFileSync } from 'node:fs';
import type { KubeQueryRequest } from '../shared/live/kube-query.ts';

const AGENT_VERSION = 'v0.9.0';
export const MANIFEST_BYTES = 100 * 1024;
export const LOG_LINES = 200;

const base = JSON.parse(
  readFileSync(
    new URL(
      '../../shared/fixtures/real/deployment-icx-db-secretkeyref-gke.json',
      import.meta.url,
    ),
    'utf8',
  ),
) as {
  spec: { template: { spec: { containers: Record<string, unknown>[] } } };
};

function bigManifest(): Record<string, unknown> {
  const object = structuredClone(base);
  const containers = object.spec.template.spec.containers;
  const first = containers[0] ?? {};
  for (let i = 0; JSON.stringify(object).length < MANIFEST_BYTES; i++) {
    containers.push({
      ...first,
      name: `worker-${i}`,
      env: Array.from({ length: 20 }, (_, j) => ({
        name: `SETTING_${i}_${j}`,
        value: `<redacted: ${10 + j} chars>`,
      })),
    });
  }
  return object as unknown as Record<string, unknown>;
}

const manifest = bigManifest();
const podTemplate = base.spec.template;

function logLines(): string[] {
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
    return `2026-10-01T11:${String(Math.floor(i / 60)).padStart(2, '0')}:${s}.${String(i).padStart(9, '0')}Z ${shapes[i % shapes.length]}`;
  });
}

const lines = logLines();

/** The benchmark agent's reply to `request`. */
export function benchAnswer(request: KubeQueryRequest): unknown {
  const ok = (result: unknown) => ({
    ok: true,
    agent_version: AGENT_VERSION,
    observed_at: new Date().toISOString(),
    notes: [],
    result,
  });
  switch (request.query) {
    case 'manifest':
      return ok({
        kind: request.kind,
        namespace: request.namespace,
        name: request.name,
        object: manifest,
      });
    case 'revisions':
      return ok({
        kind: request.kind,
        namespace: request.namespace,
        name: request.name,
        revisions: Array.from({ length: 10 }, (_, i) => ({
          revision: 10 - i,
          name: `${request.name}-${i}abcde`,
          created: '2026-09-01T10:00:00Z',
          replicas: i === 0 ? 3 : 0,
          template_hash: `${i}abcde`,
          containers: [{ name: 'db', image: `postgres:16.${10 - i}` }],
          pod_template: podTemplate,
        })),
        truncated: false,
      });
    case 'logs':
      return ok({
        pod: request.pod,
        container: request.container ?? 'app',
        previous: request.previous,
        lines: lines.slice(-request.tail),
        truncated: request.tail <= LOG_LINES,
        timestamps: request.timestamps,
      });
  }
}
