/**
 * The one place a benchmark writes its figures down: bench/results/<name>.json
 * (BENCH_RESULTS_DIR elsewhere), with the machine it ran on, the date, the
 * commit, the command that reproduces it and the paths whose code it
 * measures. docs/slo.md and docs/cost.md are generated from these files
 * (bench/slo-page.ts, bench/cost.ts), never typed: a figure on them is only
 * ever one a bench wrote here.
 *
 * A figure an objective is judged on carries the objective's name and its
 * target, so the page generator needs no knowledge of the bench: any
 * results file of this shape becomes rows on docs/slo.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Queryable } from '../shared/db/pool.ts';
import { hostSpeedMs } from './host-speed.ts';

export interface Target {
  /** Met when the figure is at most this. */
  max?: number;
  /** Met when the figure is at least this. */
  min?: number;
  /** How the target reads on the page, e.g. "≤ 1.3× the floor". */
  text: string;
}

export interface Figure {
  value: number;
  /** 'ms', 'ms/row', '×', '/s', 'bytes', … */
  unit: string;
  /** The objective's row on docs/slo.md; unset: a supporting figure. */
  objective?: string;
  target?: Target;
  /** Shown beside the figure, e.g. "p50 12 ms". */
  detail?: string;
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  postgres?: string;
  /** 1, 5 and 15-minute load averages at the end of the run. */
  loadAverage: number[];
  /**
   * The host-speed probe's reading at the end of the run, in ms
   * (bench/host-speed.ts; lower is faster). Absent in files written before
   * it was recorded.
   */
  hostSpeedMs?: number;
}

export interface BenchResults {
  bench: string;
  date: string;
  /** HEAD when the bench ran. */
  commit: string;
  /** The measured paths had uncommitted changes: the commit is not what ran. */
  dirty: boolean;
  command: string;
  /** Paths (files or folders) whose code the figures measure. */
  measures: string[];
  machine: Machine;
  figures: Record<string, Figure>;
  notes?: string[];
}

export const RESULTS_DIR = new URL('./results/', import.meta.url).pathname;

export function resultsDir(): string {
  return process.env.BENCH_RESULTS_DIR ?? RESULTS_DIR;
}

function git(args: readonly string[]): string {
  try {
    return execFileSync('git', args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return '';
  }
}

/**
 * The command that reproduces this run: the BENCH_* settings it ran with,
 * then `npm run bench --` and its arguments.
 */
export function commandLine(
  argv: readonly string[] = process.argv,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const settings = Object.keys(env)
    // Where results and databases go does not change the figures.
    .filter(
      (k) =>
        k.startsWith('BENCH_') &&
        k !== 'BENCH_RESULTS_DIR' &&
        k !== 'BENCH_DB_SUFFIX',
    )
    .sort()
    .map((k) => `${k}=${env[k]}`);
  // argv: node, bench/run.ts, <bench>, flags…
  return [...settings, 'npm run bench --', ...argv.slice(2)].join(' ');
}

export async function machine(db?: Queryable): Promise<Machine> {
  let postgres: string | undefined;
  if (db) {
    const { rows } = await db.query<{ server_version: string }>(
      'show server_version',
    );
    postgres = rows[0]?.server_version;
  }
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    ...(postgres ? { postgres } : {}),
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
    hostSpeedMs: hostSpeedMs(),
  };
}

export interface WriteOptions {
  /** The results file's name: bench/results/<name>.json. */
  name: string;
  measures: readonly string[];
  figures: Record<string, Figure>;
  notes?: readonly string[];
  /** Asked for its PostgreSQL version. */
  db?: Queryable;
}

/** Writes bench/results/<name>.json; returns its path. */
export async function writeResults(options: WriteOptions): Promise<string> {
  const measures = [...options.measures];
  const results: BenchResults = {
    bench: options.name,
    date: new Date().toISOString(),
    commit: git(['rev-parse', 'HEAD']),
    dirty:
      git(['status', '--porcelain', '--untracked-files=no', '--', ...measures])
        .length > 0,
    command: commandLine(),
    measures,
    machine: await machine(options.db),
    figures: options.figures,
    ...(options.notes?.length ? { notes: [...options.notes] } : {}),
  };
  const dir = resultsDir();
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${options.name}.json`);
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nfigures written to ${path}`);
  return path;
}

/** A results file, or undefined when the bench has not written one. */
export function readResults(
  name: string,
  dir = resultsDir(),
): BenchResults | undefined {
  try {
    return JSON.parse(
      readFileSync(join(dir, `${name}.json`), 'utf8'),
    ) as BenchResults;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Rounds to a few significant digits: results files are read by people too. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const scale = 10 ** (digits - 1 - Math.floor(Math.log10(Math.abs(value))));
  return Math.round(value * scale) / scale;
}
