/**
 * The cold-start bench's results file (bench/coldstart.ts →
 * bench/results/coldstart.json): every function's figures as supporting
 * figures, and two objective rows for docs/slo.md: the worst API function
 * against the floor (target ≤ 1.5×) and the sync (≤ 3×). The page stays
 * short; bench/coldstart-results.md keeps the table of every function.
 */
import { BUILD_INPUTS } from '../test/helpers/lambda-bundles.ts';
import { type Figure, round } from './results.ts';

/** The two reference rows' names in the table. */
export const FLOOR_NAME = 'floor (pg select 1)';
export const LIBRARIES_FLOOR_NAME =
  "libraries' floor (select 1 under middy, Powertools, zod)";
export const LIVE_FLOOR_NAME =
  "live floor (select 1 beside one agent's kube_query over NATS)";

/** Each target: a function's first answer over the floor's. */
export const COLDSTART_TARGETS = { api: 1.5, sync: 3 } as const;

/**
 * What the figures depend on: everything that goes into a bundle (the
 * digest the bundles are cached under), the floor, the bench and the
 * stand-ins and Node it runs the bundles with.
 */
export const COLDSTART_MEASURES = [
  ...BUILD_INPUTS,
  'bench/coldstart.ts',
  'bench/coldstart-floor.ts',
  'bench/coldstart-libraries-floor.ts',
  'bench/coldstart-live-floor.ts',
  'bench/live-agent.ts',
  'test/helpers/lambda-bundles.ts',
  'test/helpers/lambda-process.ts',
  'test/helpers/lambda-stage.ts',
  'test/helpers/lambda-runtime.mjs',
  'test/helpers/json-lines.mjs',
  'test/helpers/rds-proxy.ts',
  'scripts/node22',
];

/**
 * A function's medians. The times are on a backend the RDS Proxy stand-in
 * lends from its pool (every cold start once the proxy is warm: the
 * targets'), but for `newBackendAnswerMs`, on one it opens (the first after a
 * deploy). CPU: the function's process's, user + system.
 */
export interface ColdStartRow {
  name: string;
  /**
   * `libraries`: the libraries' floor; `live-floor`: the live reads' floor;
   * each a reference like the floor.
   */
  kind: 'floor' | 'libraries' | 'live-floor' | 'api' | 'sync' | 'other';
  bytes: number;
  importMs: number;
  answerMs: number;
  importCpuMs: number;
  answerCpuMs: number;
  newBackendAnswerMs: number;
  /** A live read: measured against the live floor too. */
  live?: true;
  /** The first answer was an error (its message). */
  failed?: string;
}

/** A function's key in the results file. */
const keyOf = (name: string) =>
  name.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '');

const times = (v: number) => `${v.toFixed(2)}×`;

export function coldStartFigures(
  rows: readonly ColdStartRow[],
  runs: number,
): Record<string, Figure> {
  const floor = rows.find((r) => r.kind === 'floor');
  if (!floor) throw new Error('no floor measured');
  const figures: Record<string, Figure> = {};
  const ratio = (r: ColdStartRow) => r.answerMs / floor.answerMs;
  for (const r of rows) {
    const key =
      r.kind === 'floor'
        ? 'floor'
        : r.kind === 'libraries'
          ? 'libraries_floor'
          : r.kind === 'live-floor'
            ? 'live_floor'
            : keyOf(r.name);
    figures[`${key}.answer_ms`] = { value: round(r.answerMs), unit: 'ms' };
    figures[`${key}.import_ms`] = { value: round(r.importMs), unit: 'ms' };
    figures[`${key}.answer_cpu_ms`] = {
      value: round(r.answerCpuMs),
      unit: 'ms',
    };
    figures[`${key}.import_cpu_ms`] = {
      value: round(r.importCpuMs),
      unit: 'ms',
    };
    figures[`${key}.new_backend_answer_ms`] = {
      value: round(r.newBackendAnswerMs),
      unit: 'ms',
    };
    figures[`${key}.bundle_bytes`] = { value: r.bytes, unit: 'bytes' };
    if (r.kind !== 'floor') {
      figures[`${key}.ratio`] = { value: round(ratio(r)), unit: '×' };
      figures[`${key}.new_backend_ratio`] = {
        value: round(r.newBackendAnswerMs / floor.newBackendAnswerMs),
        unit: '×',
      };
    }
  }
  const liveFloor = rows.find((r) => r.kind === 'live-floor');
  const live = rows.filter((r) => r.live);
  if (liveFloor) {
    for (const r of live) {
      figures[`${keyOf(r.name)}.live_floor_ratio`] = {
        value: round(r.answerMs / liveFloor.answerMs),
        unit: '×',
      };
    }
  }
  let liveText = '';
  if (liveFloor && live.length > 0) {
    const answers = live.map((r) => r.answerMs / liveFloor.answerMs);
    const [low, high] = [
      times(Math.min(...answers)),
      times(Math.max(...answers)),
    ];
    liveText = `; the live reads against the live floor (select 1 beside one kube_query to the agent over NATS, ${liveFloor.answerMs.toFixed(0)} ms): ${low === high ? low : `${low}–${high}`}`;
  }
  const against = (r: ColdStartRow) =>
    `${r.answerMs.toFixed(0)} ms vs floor ${floor.answerMs.toFixed(0)} ms on a pooled backend, ${runs === 1 ? 'one fresh process' : `median of ${runs} fresh processes`} (on a new backend ${(r.newBackendAnswerMs / floor.newBackendAnswerMs).toFixed(2)}×)`;
  const api = rows.filter((r) => r.kind === 'api');
  const libraries = rows.find((r) => r.kind === 'libraries');
  const librariesText = libraries
    ? `; the libraries every API function loads, alone: ${times(ratio(libraries))}`
    : '';
  const worst = api.reduce<ColdStartRow | undefined>(
    (w, r) => (w === undefined || r.answerMs > w.answerMs ? r : w),
    undefined,
  );
  if (worst) {
    const limit = COLDSTART_TARGETS.api;
    const over = api.filter((r) => ratio(r) > limit).length;
    const best = api.reduce((b, r) => (r.answerMs < b.answerMs ? r : b));
    figures['objective.api_worst_ratio'] = {
      value: round(ratio(worst)),
      unit: '×',
      objective: 'Cold start, slowest API function, against the floor',
      target: {
        max: limit,
        text: `every API function ≤ ${limit}× the floor's first answer`,
      },
      detail: `${worst.name}: ${against(worst)}; ${over} of ${api.length} API functions over ${limit}×, the quickest ${best.name} at ${times(ratio(best))}${librariesText}${liveText}; every function: bench/coldstart-results.md`,
    };
  }
  const sync = rows.find((r) => r.kind === 'sync');
  if (sync) {
    const limit = COLDSTART_TARGETS.sync;
    figures['objective.sync_ratio'] = {
      value: round(ratio(sync)),
      unit: '×',
      objective: 'Cold start, sync, against the floor',
      target: { max: limit, text: `≤ ${limit}× the floor's first answer` },
      detail: against(sync),
    };
  }
  return figures;
}

/** Functions whose first answer was an error: their time is not a success's. */
export function coldStartNotes(rows: readonly ColdStartRow[]): string[] {
  return rows
    .filter((r) => r.failed)
    .map((r) => `${r.name} answered with an error: ${r.failed}`);
}
