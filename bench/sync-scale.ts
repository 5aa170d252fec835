/**
 * `npm run bench -- sync --per-row [--pods=500,5000,20000]`: what a
 * no-change resync costs per row as a cluster grows. Each size is the large
 * preset's shape scaled to that many pods (every other kind in proportion).
 * Per run, a fresh cluster is synced once and resynced once unmeasured (the
 * first resync pays the first sync's garbage), then resynced three times
 * with nothing stored changed (every running pod's usage moves, as
 * metrics-server's figures do: mutateInventory). That is done BENCH_RUNS
 * times (3, in rounds: each round one cluster of every size), after one
 * unmeasured cluster of the largest size (the code compiled and optimized).
 * Prints, per size, the resync's wall time and this process's CPU (medians
 * over the measured resyncs) and PostgreSQL's CPU (the mean: it is read in
 * 10 ms clock ticks), each per row, and the spread of the per-row wall time
 * from the cheapest size to the dearest (target: within 1.3×). Writes
 * bench/results/sync-scale.json.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { type Db, query } from '../shared/db/pool.ts';
import { KIND_ORDER } from '../shared/sync/kinds.ts';
import { syncInventory } from '../shared/sync/sync.ts';
import { decodeInventoryJson } from '../shared/wire/decode.ts';
import type { Inventory } from '../shared/wire/inventory.ts';
import {
  generateInventory,
  mutateInventory,
  SIZES,
} from '../test/fixtures/generate.ts';
import { benchDatabase, mean, median, postgresCpuMs } from './common.ts';
import { type Figure, round, writeResults } from './results.ts';

const TARGET_SPREAD = 1.3;
/** No-change resyncs of each cluster measured. */
const RESYNCS = 3;

/** The large preset scaled to `pods` pods (200 a namespace, as large has). */
export function scaledShape(pods: number) {
  const large = SIZES.large;
  const largePods =
    large.namespaces * large.workloadsPerNamespace * large.podsPerWorkload;
  const f = pods / largePods;
  const scale = (n: number) => Math.max(1, Math.round(n * f));
  const perNamespace = large.workloadsPerNamespace * large.podsPerWorkload;
  const namespaces = Math.max(1, Math.round(pods / perNamespace));
  return {
    ...large,
    namespaces,
    workloadsPerNamespace: Math.max(
      1,
      Math.round(pods / namespaces / large.podsPerWorkload),
    ),
    nodes: scale(large.nodes),
    services: scale(large.services),
    events: scale(large.events),
    ingresses: scale(large.ingresses),
    pvcs: scale(large.pvcs),
    jobs: scale(large.jobs),
    hpas: scale(large.hpas),
    networkPolicies: scale(large.networkPolicies),
    resourceQuotas: scale(large.resourceQuotas),
    endpointSlices: scale(large.endpointSlices),
  };
}

const rowCount = (inv: Inventory) =>
  KIND_ORDER.reduce((n, k) => n + (inv[k]?.length ?? 0), 0);

/**
 * A fresh cluster of `pods` pods synced once; `resync(n)` resyncs it with
 * nothing stored changed (its pods' usage moved), n times five minutes on.
 */
async function syncedCluster(db: Db, pods: number, seed: number) {
  const agentId = randomUUID();
  const generated = generateInventory({
    ...scaledShape(pods),
    seed,
    agentId,
    clusterName: `scale-${pods}-${seed}`,
    timestamp: '2026-06-15T12:00:00Z',
  });
  const first = Buffer.from(JSON.stringify(generated));
  const subject = { clientSlug: 'bench', envSlug: 'prod', agentId };
  const at = (n: number) =>
    new Date(Date.parse('2026-06-15T12:00:00Z') + n * 300_000).toISOString();
  await syncInventory(db, subject, decodeInventoryJson(first), {
    now: () => new Date('2026-06-15T12:00:00Z'),
  });
  return {
    mb: first.length / 1e6,
    rows: rowCount(generated),
    /** The n-th resync's message, as the agent sends it (not measured). */
    message: (n: number) =>
      Buffer.from(
        JSON.stringify(
          mutateInventory(generated, {
            seed: n,
            changeFraction: 0,
            removeFraction: 0,
            timestamp: at(n),
          }),
        ),
      ),
    resync: async (n: number, message: Buffer) => {
      await syncInventory(db, subject, decodeInventoryJson(message), {
        now: () => new Date(at(n)),
      });
    },
  };
}

export async function perRowScale(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(3),
    options: {
      'per-row': { type: 'boolean', default: false },
      pods: { type: 'string', default: '500,5000,20000' },
    },
  });
  const sizes = values.pods.split(',').map(Number);
  if (sizes.some((n) => !(Number.isInteger(n) && n > 0))) {
    throw new Error('--pods is a comma-separated list of pod counts');
  }
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const bench = await benchDatabase('k8s_inventory_bench_sync_scale');
  const { db } = bench;
  const figures: Record<string, Figure> = {};
  const perRow: number[] = [];
  try {
    await query(
      db,
      `insert into clients (slug, name) values ('bench', 'bench')`,
    );
    await query(
      db,
      `insert into environments (client_id, slug, name) select id, 'prod', 'prod' from clients`,
    );
    // Unmeasured: a cluster of the largest size synced and resynced, so the
    // first size measured is not the one that pays for compiling and
    // optimizing the code (a warm-up of the first size, 500 pods, left it
    // half-optimized: that size read 16 µs a row measured first, 10 after
    // 5,000 pods).
    const warm = await syncedCluster(db, Math.max(...sizes), 0);
    for (let resync = 1; resync <= RESYNCS; resync++) {
      await warm.resync(resync, warm.message(resync));
    }
    console.log(
      `no-change resync per row, ${runs} runs per size (medians, after one unmeasured warm-up cluster of the largest size); each size is the large preset scaled\n`,
    );
    console.log(
      [
        'pods',
        'rows',
        'JSON MB',
        'resync',
        'µs/row',
        'cpu µs/row',
        'postgres µs/row',
      ].join('\t'),
    );
    // In rounds, each syncing one fresh cluster of every size, not every
    // cluster of one size and then the next: a machine whose speed drifts
    // over the bench's minutes (a shared host) then moves every size alike
    // instead of tilting the spread.
    const measured = new Map(
      sizes.map((pods) => [
        pods,
        {
          walls: [] as number[],
          cpus: [] as number[],
          // PostgreSQL's CPU comes in clock ticks (10 ms), coarser than a
          // small resync: summed over the size's measured resyncs, then
          // shared out.
          pgs: [] as number[],
          rows: 0,
          mb: 0,
        },
      ]),
    );
    for (let run = 0; run < runs; run++) {
      for (const [pods, into] of measured) {
        const cluster = await syncedCluster(db, pods, run + 1);
        into.mb = cluster.mb;
        into.rows = cluster.rows;
        // Unmeasured: the first resync after a first sync pays that sync's
        // garbage (at 500 pods it cost twice a steady resync), which says
        // nothing about a resync's own cost.
        await cluster.resync(1, cluster.message(1));
        for (let resync = 2; resync <= RESYNCS + 1; resync++) {
          const message = cluster.message(resync);
          const pgFrom = await postgresCpuMs(db);
          const cpuFrom = process.cpuUsage();
          const started = performance.now();
          await cluster.resync(resync, message);
          into.walls.push(performance.now() - started);
          const cpu = process.cpuUsage(cpuFrom);
          into.cpus.push((cpu.user + cpu.system) / 1000);
          const pgTo = await postgresCpuMs(db);
          if (pgFrom !== undefined && pgTo !== undefined) {
            into.pgs.push(pgTo - pgFrom);
          }
        }
      }
    }
    for (const [pods, { walls, cpus, pgs, rows, mb }] of measured) {
      const wall = median(walls);
      const us = (v: number) => (v * 1000) / rows;
      perRow.push(us(wall));
      console.log(
        [
          pods,
          rows,
          mb.toFixed(1),
          `${wall.toFixed(0)} ms`,
          us(wall).toFixed(1),
          us(median(cpus)).toFixed(1),
          pgs.length ? us(mean(pgs)).toFixed(1) : 'not read',
        ].join('\t'),
      );
      figures[`pods_${pods}.rows`] = { value: rows, unit: 'rows' };
      figures[`pods_${pods}.resync_ms`] = { value: round(wall), unit: 'ms' };
      figures[`pods_${pods}.us_per_row`] = {
        value: round(us(wall)),
        unit: 'µs',
      };
      figures[`pods_${pods}.cpu_us_per_row`] = {
        value: round(us(median(cpus))),
        unit: 'µs',
      };
      if (pgs.length) {
        figures[`pods_${pods}.postgres_us_per_row`] = {
          value: round(us(mean(pgs))),
          unit: 'µs',
        };
      }
    }
    const spread = Math.max(...perRow) / Math.min(...perRow);
    console.log(
      `\nper-row spread, dearest size over cheapest: ${spread.toFixed(2)}× (target ≤ ${TARGET_SPREAD}×)`,
    );
    figures.spread = {
      value: round(spread),
      unit: '×',
      objective: `No-change resync cost per row, ${sizes.map((n) => n.toLocaleString('en-US')).join(' → ')} pods`,
      target: {
        max: TARGET_SPREAD,
        text: `flat within ${TARGET_SPREAD}× (dearest per row over cheapest)`,
      },
      detail: sizes
        .map(
          (n, i) =>
            `${n.toLocaleString('en-US')} pods ${perRow[i]?.toFixed(1)} µs/row`,
        )
        .join(', '),
    };
    await writeResults({
      name: 'sync-scale',
      measures: [
        'shared/sync',
        'shared/wire',
        'shared/events',
        'shared/db',
        'migrations',
        'bench/sync-scale.ts',
      ],
      figures,
      db,
    });
  } finally {
    await bench.close();
  }
}
