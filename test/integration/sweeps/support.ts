/**
 * What the sweep tests share: synced clusters to sweep, and the EMF metric
 * lines and log lines the process wrote.
 */
import { randomUUID } from 'node:crypto';
import { vi } from 'vitest';
import {
  type Db,
  query,
  type Tx,
  withTransaction,
} from '../../../shared/db/pool.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import type { Tenant } from '../../helpers/inventory-db.ts';

/**
 * Syncs a small generated inventory stamped `at`, as received at `at` (an
 * agent whose clock is right); returns the cluster id.
 */
export async function syncedCluster(
  db: Db,
  tenant: Tenant,
  at: Date,
  agentId: string = randomUUID(),
): Promise<{ clusterId: string; agentId: string }> {
  const inventory = generateInventory({
    seed: agentId,
    agentId,
    clusterName: `c-${agentId.slice(0, 8)}`,
    timestamp: at.toISOString(),
  });
  const result = await syncInventory(
    db,
    { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
    inventory,
    { now: () => at },
  );
  // The sync stamps the database's now(); the sweeps judge silence by it.
  await query(db, 'update clusters set last_received_at = $2 where id = $1', [
    result.clusterId,
    at,
  ]);
  return { clusterId: result.clusterId, agentId };
}

/**
 * Captures what is written to stdout and stderr: Powertools logs (WARN and
 * ERROR go to stderr) and EMF metric lines.
 */
export function captureStdout() {
  const lines: string[] = [];
  const keep = (chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(keep),
    vi.spyOn(process.stderr, 'write').mockImplementation(keep),
  ];
  return {
    /** Parsed JSON lines. */
    json(): Record<string, unknown>[] {
      return lines
        .flatMap((l) => l.split('\n'))
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    /** Values of one EMF metric, over every line that carries it. */
    metric(name: string): number[] {
      return this.json()
        .filter((l) => '_aws' in l && name in l)
        .flatMap((l) => {
          const v = l[name];
          return Array.isArray(v) ? (v as number[]) : [v as number];
        });
    },
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}

/**
 * What a sync holds: the cluster row's lock (FOR NO KEY UPDATE), taken in a
 * transaction of its own, then `underLock` run in it; resolves once held.
 * `release` commits; `done` settles with the transaction.
 */
export async function holdClusterLock(
  db: Db,
  clusterId: string,
  underLock: (tx: Tx) => Promise<unknown> = async () => {},
): Promise<{ release: () => void; done: Promise<void> }> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const done = withTransaction(db, async (tx) => {
    await query(tx, 'select id from clusters where id = $1 for no key update', [
      clusterId,
    ]);
    await underLock(tx);
    locked();
    await held;
  });
  // A failure before the lock is held must not leave the caller waiting.
  await Promise.race([isLocked, done]);
  return { release, done };
}
