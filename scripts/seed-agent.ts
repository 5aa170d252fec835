/**
 * The agent id the seeder uses for a (client, environment, cluster): a
 * name-based UUID (version 5), so seeding the same names again reaches the
 * same cluster row instead of creating a new one.
 */
import { createHash } from 'node:crypto';

/**
 * The names the seeder publishes for when given none (the spec's CLI
 * Seeder: `./scripts/k8s-seed.sh` is internal / development / test-cluster);
 * the local stack creates this tenant on first start.
 */
export const SEED_DEFAULTS = {
  client: 'internal',
  environment: 'development',
  cluster: 'test-cluster',
} as const;

/** A fixed namespace for the seeder's names. */
const SEED_NAMESPACE = '6f1d3c1e-52a8-4c4b-9e0f-4a1b7c2d9e35';

export function seedAgentId(
  client: string,
  environment: string,
  cluster: string,
): string {
  const namespace = Buffer.from(SEED_NAMESPACE.replaceAll('-', ''), 'hex');
  const hash = createHash('sha1')
    .update(namespace)
    .update(`${client}/${environment}/${cluster}`, 'utf8')
    .digest();
  const b = hash.subarray(0, 16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x50;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
