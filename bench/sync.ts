/**
 * `npm run bench -- sync`: the sync of generated inventories of three sizes.
 * For each: a first sync, a no-change resync, and a resync with 10% of rows
 * changed (and 2% removed), in ms and rows/s. No change means none to what
 * is stored: in both resyncs every running pod's usage moves, as
 * metrics-server's figures do at each sync (mutateInventory). Beside them,
 * the same rows written by one bare SQL upsert per kind with no application
 * logic (the floor), and the ratio. Medians of several runs, each on its own cluster.
 * Last, what the workload change records cost: the large resyncs again with
 * inventories that carry no spec facts (the diff step has nothing to do).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../shared/db/pool.ts';
import { query, withTransaction } from '../shared/db/pool.ts';
import { eventHistoryRows, historyWindow } from '../shared/events/history.ts';
import {
  KIND_ORDER,
  KINDS,
  type KindDefinition,
  type KindKey,
} from '../shared/sync/kinds.ts';
import { upsertStatement } from '../shared/sync/repo.ts';
import { syncInventory } from '../shared/sync/sync.ts';
import { decodeInventoryJson } from '../shared/wire/decode.ts';
import {
  type Inventory,
  parseInventoryJson,
} from '../shared/wire/inventory.ts';
import {
  generateInventory,
  mutateInventory,
  type SizeName,
} from '../test/fixtures/generate.ts';
import { benchDatabase, median, ms } from './common.ts';
import { watchGc } from './gc-pauses.ts';
import { type Figure, round, writeResults } from './results.ts';
import { perRowScale } from './sync-scale.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SIZES: SizeName[] = (process.env.BENCH_SIZES?.split(
  ',',
) as SizeName[]) ?? ['small', 'medium', 'large'];

/** What the sync's figures measure: a change here makes them stale. */
export const SYNC_MEASURES = [
  'shared/sync',
  'shared/wire',
  'shared/events',
  'shared/db',
  'migrations',
  'bench/sync.ts',
];

const gcPauses = watchGc();

/** Milliseconds of GC pause between two performance.now() readings. */
async function gcPausedWithin(from: number, to: number): Promise<number> {
  // The observer is told of a pause after it: let it catch up.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const start = performance.timeOrigin + from;
  const end = performance.timeOrigin + to;
  return gcPauses
    .filter((p) => p.at >= start && p.at < end)
    .reduce((sum, p) => sum + p.ms, 0);
}

function rowCount(inv: Inventory): number {
  return KIND_ORDER.reduce((n, k) => n + (inv[k]?.length ?? 0), 0);
}

const DIGEST_GUARD =
  'where t.content_hash is distinct from excluded.content_hash';

/**
 * The floor: the sync's own upsert statement per kind (the same columns,
 * links resolved by the same joins, the same indexes and foreign keys), with
 * its digest guard replaced by the plain SQL one, a whole-row IS DISTINCT
 * FROM, and every row sent: no lock, digest, diff, linkage, facts, prune or
 * counts.
 */
function floorSql(kind: KindKey): string {
  const cols = (KINDS[kind] as KindDefinition).columns;
  const sql = upsertStatement(kind);
  if (!sql.includes(DIGEST_GUARD)) throw new Error('upsert guard changed');
  return sql.replace(
    DIGEST_GUARD,
    `where (${cols.map((c) => `t.${c}`).join(', ')})
      is distinct from (${cols.map((c) => `excluded.${c}`).join(', ')})`,
  );
}

async function floor(
  db: Db,
  clusterId: string,
  inv: Inventory,
): Promise<number> {
  // Serialization is the caller's: the floor is the database's share alone.
  const params = KIND_ORDER.filter((k) => inv[k]).map((k) => {
    const def = KINDS[k] as KindDefinition;
    const rows = (inv[k] ?? []).map((r) => ({
      ...def.toRow(r as never),
      content_hash: '',
    }));
    return [floorSql(k), JSON.stringify(rows)] as const;
  });
  const started = performance.now();
  await withTransaction(
    db,
    async (tx) => {
      for (const [sql, json] of params) await tx.query(sql, [clusterId, json]);
    },
    { settings: { work_mem: '64MB' } },
  );
  return performance.now() - started;
}

async function newCluster(db: Db, clientSlug: string): Promise<string> {
  const [row] = await query<{ id: string }>(
    db,
    `with a as (
       insert into assets (client_id, environment_id, asset_type, name, status)
       select e.client_id, e.id, 'cluster', 'floor', 'active'
       from environments e join clients c on c.id = e.client_id where c.slug = $1
       returning id, client_id, environment_id)
     insert into clusters (asset_id, client_id, environment_id, agent_id, name, slug)
     select id, client_id, environment_id, $2, 'floor', $3 from a returning id`,
    [clientSlug, randomUUID(), `floor-${randomUUID().slice(0, 8)}`],
  );
  return row?.id ?? '';
}

interface Measured {
  /** End to end from the message's JSON text: decode, validate, sync. */
  figures: Record<Step, number[]>;
  /** This process's CPU time (user + system) of the same. */
  cpu: Record<Step, number[]>;
  /** The garbage collector's pauses of this process within the same. */
  gc: Record<Step, number[]>;
  floors: Record<Step, number[]>;
  /** `JSON.parse` alone of the first snapshot's text. */
  parse: number[];
  rows: number;
  mb: number;
}

type Step = 'first' | 'same' | 'changed';

const steps = () => ({
  first: [] as number[],
  same: [] as number[],
  changed: [] as number[],
});

/** One message from its bytes to its commit, as the sync worker runs it. */
async function ingest(
  db: Db,
  agentId: string,
  body: Buffer,
  now: () => Date,
): Promise<void> {
  const subject = { clientSlug: 'bench', envSlug: 'prod', agentId };
  await syncInventory(db, subject, decodeInventoryJson(body), { now });
}

async function measure(
  db: Db,
  size: SizeName,
  specFacts: boolean,
  runs = RUNS,
): Promise<Measured> {
  const figures = steps();
  const cpu = steps();
  const gc = steps();
  const floors = steps();
  const parse: number[] = [];
  let rows = 0;
  let mb = 0;
  for (let run = 0; run < runs; run++) {
    const agentId = randomUUID();
    // The agent's own bytes: a resync's unchanged rows are byte for byte
    // those of the first snapshot, but for the pods' usage.
    const generated = generateInventory({
      size,
      specFacts,
      seed: run + 1,
      agentId,
      timestamp: '2026-06-15T12:00:00Z',
    });
    const texts = {
      first: JSON.stringify(generated),
      same: JSON.stringify(
        mutateInventory(generated, {
          seed: run + 3,
          changeFraction: 0,
          removeFraction: 0,
          timestamp: '2026-06-15T12:05:00Z',
        }),
      ),
      changed: JSON.stringify(
        mutateInventory(generated, {
          seed: run + 7,
          changeFraction: 0.1,
          removeFraction: 0.02,
          timestamp: '2026-06-15T12:10:00Z',
        }),
      ),
    };
    mb = texts.first.length / 1e6;
    const parseStart = performance.now();
    JSON.parse(texts.first);
    parse.push(performance.now() - parseStart);
    const now = () => new Date('2026-06-15T12:10:00Z');
    // As the worker receives a body: bytes (gunzipped or read from S3).
    const bodies = {
      first: Buffer.from(texts.first),
      same: Buffer.from(texts.same),
      changed: Buffer.from(texts.changed),
    };
    for (const step of ['first', 'same', 'changed'] as const) {
      const cpuStart = process.cpuUsage();
      const started = performance.now();
      await ingest(db, agentId, bodies[step], now);
      const ended = performance.now();
      figures[step].push(ended - started);
      const used = process.cpuUsage(cpuStart);
      cpu[step].push((used.user + used.system) / 1000);
      gc[step].push(await gcPausedWithin(started, ended));
    }
    const parsed = {
      first: parseInventoryJson(texts.first),
      same: parseInventoryJson(texts.same),
      changed: parseInventoryJson(texts.changed),
    };
    rows = rowCount(parsed.first);
    const floorCluster = await newCluster(db, 'bench');
    for (const step of ['first', 'same', 'changed'] as const) {
      floors[step].push(await floor(db, floorCluster, parsed[step]));
    }
  }
  return { figures, cpu, gc, floors, parse, rows, mb };
}

async function main(): Promise<void> {
  // A suffix keeps benchmarks run side by side out of each other's database.
  const bench = await benchDatabase(
    `k8s_inventory_bench_sync${process.env.BENCH_DB_SUFFIX ?? ''}`,
  );
  const { db } = bench;
  await query(db, `insert into clients (slug, name) values ('bench', 'bench')`);
  await query(
    db,
    `insert into environments (client_id, slug, name) select id, 'prod', 'prod' from clients`,
  );
  console.log(
    `sync benchmark: ${RUNS} runs per figure, medians; end to end from the JSON text (decode, validate, sync); cpu and GC pauses of this process; floor + JSON.parse beside it\n`,
  );
  console.log(
    [
      'size',
      'rows',
      'JSON MB',
      'JSON.parse',
      'step',
      'end to end',
      'cpu',
      'gc',
      'rows/s',
      'floor',
      'floor+parse',
      'ratio',
    ].join('\t'),
  );
  const written: Record<string, Figure> = {};
  try {
    for (const size of SIZES) {
      const { figures, cpu, gc, floors, parse, rows, mb } = await measure(
        db,
        size,
        true,
      );
      written[`${size}.json_bytes`] = {
        value: Math.round(mb * 1e6),
        unit: 'bytes',
      };
      for (const step of ['first', 'same', 'changed'] as const) {
        const sync = median(figures[step]);
        const base = median(floors[step]) + median(parse);
        Object.assign(
          written,
          syncFigures(size, step, rows, sync, median(cpu[step]), base),
        );
        console.log(
          [
            size,
            rows,
            mb.toFixed(1),
            ms(median(parse)),
            step === 'same'
              ? 'no-change'
              : step === 'changed'
                ? '10% changed'
                : 'first',
            ms(sync),
            ms(median(cpu[step])),
            ms(median(gc[step])),
            Math.round((rows / sync) * 1000).toLocaleString('en-US'),
            ms(median(floors[step])),
            ms(base),
            (sync / base).toFixed(2),
          ].join('\t'),
        );
      }
    }
    // BENCH_FACTS_SPLIT=0 leaves out the change records' share.
    if (SIZES.includes('large') && process.env.BENCH_FACTS_SPLIT !== '0') {
      // Interleaved, one cluster at a time, so a growing database weighs
      // on both sides alike.
      const without: number[][] = [[], []];
      const withFacts: number[][] = [[], []];
      for (let run = 0; run < RUNS; run++) {
        for (const [facts, into] of [
          [false, without],
          [true, withFacts],
        ] as const) {
          const m = await measure(db, 'large', facts, 1);
          into[0]?.push(...m.figures.same);
          into[1]?.push(...m.figures.changed);
        }
      }
      console.log(
        '\nchange records (large): resync without spec facts → with them',
      );
      for (const [i, step] of ['no-change', '10% changed'].entries()) {
        const before = median(without[i] ?? []);
        const after = median(withFacts[i] ?? []);
        const change = ((after - before) / before) * 100;
        console.log(
          `${step}\t${ms(before)} → ${ms(after)}\t(${change >= 0 ? '+' : ''}${change.toFixed(1)}%)`,
        );
      }
      historyShare(median(withFacts[0] ?? []));
    }
    await writeResults({
      name: 'sync',
      measures: SYNC_MEASURES,
      figures: written,
      db,
    });
  } finally {
    await bench.close();
  }
}

/** The target of each step of a large sync, as a multiple of the floor. */
const FLOOR_TARGETS = { first: 1.3, same: 0.5, changed: 0.8 } as const;
const STEP_NAMES = {
  first: 'first snapshot',
  same: 'no-change resync',
  changed: '10%-changed resync',
} as const;

function syncFigures(
  size: SizeName,
  step: Step,
  rows: number,
  syncMs: number,
  cpuMs: number,
  floorMs: number,
): Record<string, Figure> {
  const ratio = syncMs / floorMs;
  const judged = size === 'large';
  return {
    [`${size}.${step}.ms`]: { value: round(syncMs), unit: 'ms' },
    [`${size}.${step}.cpu_ms`]: { value: round(cpuMs), unit: 'ms' },
    [`${size}.${step}.floor_ms`]: { value: round(floorMs), unit: 'ms' },
    [`${size}.${step}.rows`]: { value: rows, unit: 'rows' },
    [`${size}.${step}.ratio`]: {
      value: round(ratio),
      unit: '×',
      ...(judged
        ? {
            objective: `Sync, large ${STEP_NAMES[step]}, against the floor`,
            target: {
              max: FLOOR_TARGETS[step],
              text: `≤ ${FLOOR_TARGETS[step]}× the floor (bare upserts + JSON.parse)`,
            },
            detail: `${ms(syncMs)} vs floor ${ms(floorMs)}, ${rows.toLocaleString('en-US')} rows, median of ${RUNS}`,
          }
        : {}),
    },
  };
}

/**
 * What the 14-day event history costs a no-change resync: no statement
 * (every event is unchanged, so nothing is copied), only the walk that
 * finds nothing to copy. Timed on the large inventory's events, against
 * that resync's median.
 */
function historyShare(noChangeMs: number): void {
  const inventory = parseInventoryJson(
    JSON.stringify(generateInventory({ size: 'large' })),
  );
  const events = inventory.events ?? [];
  const unchanged = new Set<unknown>(events);
  const window = historyWindow(new Date(), 14);
  const times: number[] = [];
  for (let i = 0; i < 21; i++) {
    const started = performance.now();
    const rows = eventHistoryRows(events, unchanged, window);
    times.push(performance.now() - started);
    if (rows !== undefined) throw new Error('an unchanged event was copied');
  }
  const cost = median(times);
  console.log(
    `\nevent history in a no-change resync (large, ${events.length} events): 0 statements, ${cost.toFixed(2)} ms of ${ms(noChangeMs)} (${((cost / noChangeMs) * 100).toFixed(2)}%; target at most 10%)`,
  );
}

if (process.argv.includes('--per-row')) {
  await perRowScale();
} else {
  await main();
}
