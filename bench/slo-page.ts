/**
 * docs/slo.md from the results files the benches write (bench/results.ts):
 * one row per figure that names an objective, with its target, whether it
 * is met, the machine, the date and the command that reproduces it. An
 * expected bench whose file is missing shows its objectives as "not
 * measured yet"; a figure whose measured code changed after the commit it
 * ran on is marked stale rather than shown as current.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import {
  type BenchResults,
  type Figure,
  readResults,
  resultsDir,
} from './results.ts';

/**
 * The benches the page expects, in its order, with the objectives each
 * one's figures are judged on (the rows shown while its file is missing)
 * and the command that writes it. A results file not listed here still
 * gets its rows, after these.
 */
export const EXPECTED: readonly {
  bench: string;
  objectives: readonly string[];
  command: string;
}[] = [
  {
    bench: 'ingest-steady',
    objectives: [
      'Freshness: snapshot published → queryable, p99',
      'Steady ingest: resyncs a second settled',
    ],
    command: 'npm run bench -- ingest --steady',
  },
  {
    bench: 'sync',
    objectives: [
      'Sync, large first snapshot, against the floor',
      'Sync, large no-change resync, against the floor',
      'Sync, large 10%-changed resync, against the floor',
    ],
    command: 'BENCH_SIZES=large npm run bench -- sync',
  },
  {
    bench: 'api',
    objectives: ['Read API p99 per route family (400k pods)'],
    command: 'npm run bench -- api',
  },
  {
    bench: 'events',
    objectives: ['Events timeline p99'],
    command: 'npm run bench -- events',
  },
  {
    bench: 'changes',
    objectives: ['What changed p99', 'Webhook notifications a second'],
    command: 'npm run bench -- changes',
  },
  {
    bench: 'live',
    objectives: ["Live reads' added latency, p99"],
    command: 'npm run bench -- live',
  },
  {
    bench: 'coldstart',
    objectives: [
      'Cold start, slowest API function, against the floor',
      'Cold start, sync, against the floor',
    ],
    command: 'npm run bench -- coldstart',
  },
  {
    bench: 'graph',
    objectives: [
      'Graph reads p99, slowest scenario',
      'PQL host search p99, slowest search',
    ],
    command: 'npm run bench -- graph',
  },
  {
    bench: 'scale',
    objectives: [
      'Read API p99 per route family at 2M pods',
      'Read API p99 growth, 400k → 2M pods',
    ],
    command: 'npm run bench -- scale --sizes=40k,400k,2m',
  },
  {
    bench: 'sync-scale',
    objectives: ['No-change resync cost per row, 500 → 20,000 pods'],
    command: 'npm run bench -- sync --per-row',
  },
  {
    bench: 'sync-lambda',
    objectives: ["Sync handler's own CPU per resync against PostgreSQL's"],
    command: 'npm run bench -- sync-lambda',
  },
];

export type Freshness =
  | { state: 'current' }
  | { state: 'uncommitted' }
  | { state: 'unknown-commit' }
  | { state: 'stale'; commits: string[] };

/** What the page asks git: which later commits touch the measured paths. */
export interface CodeHistory {
  /**
   * Commits on HEAD's history after `commit` that change any of `paths`,
   * newest first; undefined when `commit` is not on HEAD's history.
   */
  changedSince(commit: string, paths: readonly string[]): string[] | undefined;
}

export function gitHistory(cwd?: string): CodeHistory {
  const git = (args: string[]) =>
    execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  return {
    changedSince(commit, paths) {
      try {
        git(['merge-base', '--is-ancestor', commit, 'HEAD']);
      } catch {
        return undefined;
      }
      const out = git(['rev-list', `${commit}..HEAD`, '--', ...paths]);
      return out === '' ? [] : out.split('\n');
    },
  };
}

export function freshness(
  results: BenchResults,
  history: CodeHistory,
): Freshness {
  if (!/^[0-9a-f]{7,40}$/.test(results.commit)) {
    return { state: 'unknown-commit' };
  }
  const commits = history.changedSince(results.commit, results.measures);
  if (commits === undefined) return { state: 'unknown-commit' };
  if (commits.length > 0) return { state: 'stale', commits };
  return results.dirty ? { state: 'uncommitted' } : { state: 'current' };
}

function freshnessText(f: Freshness, measures: readonly string[]): string {
  switch (f.state) {
    case 'current':
      return '';
    case 'uncommitted':
      return 'stale: measured on uncommitted changes';
    case 'unknown-commit':
      return "stale: the commit it ran on is not in this branch's history";
    case 'stale':
      return `stale: ${f.commits.length} later commit${f.commits.length === 1 ? '' : 's'} (latest ${f.commits[0]?.slice(0, 7)}) change ${measures.join(', ')}`;
  }
}

export function formatValue(value: number, unit: string): string {
  const digits =
    Math.abs(value) >= 100
      ? 0
      : Math.abs(value) >= 10
        ? 1
        : unit === '×'
          ? 2
          : 2;
  const number = value.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: 0,
  });
  if (unit === '×') return `${number}×`;
  if (unit === '/s') return `${number}/s`;
  return `${number} ${unit}`;
}

/** 'met', or by how much it is missed. */
export function verdict(figure: Figure): string {
  const t = figure.target;
  if (!t) return '';
  if (t.max !== undefined && figure.value > t.max) {
    return `**missed** by ${(((figure.value - t.max) / t.max) * 100).toFixed(0)}%`;
  }
  if (t.min !== undefined && figure.value < t.min) {
    return `**missed** by ${(((t.min - figure.value) / t.min) * 100).toFixed(0)}%`;
  }
  return 'met';
}

export function machineText(r: BenchResults): string {
  const m = r.machine;
  return [
    `${m.cpus} × ${m.cpuModel}`,
    `${m.memoryGiB} GiB`,
    m.postgres ? `PostgreSQL ${m.postgres.split(' ')[0]}` : undefined,
    `Node ${m.node}`,
    `load ${m.loadAverage[0] ?? '?'}`,
    m.hostSpeedMs === undefined ? undefined : `probe ${m.hostSpeedMs} ms`,
  ]
    .filter(Boolean)
    .join(', ');
}

const cell = (text: string) => text.replaceAll('|', '\\|').replace(/\n/g, ' ');

/** When a bench ran, as the page shows it: `2026-12-06 15:04`, UTC. */
const ranAt = (r: BenchResults) => r.date.slice(0, 16).replace('T', ' ');

/** The line above a curve: the command that drew it, when and where it ran. */
const ranText = (r: BenchResults) =>
  `\`${r.command}\`, ${ranAt(r)} UTC, ${machineText(r)}.`;

/** A figure's value as the curves show it, or a dash when the bench wrote none. */
function shown(figures: Record<string, Figure>, key: string): string {
  const f = figures[key];
  return f ? formatValue(f.value, f.unit) : '–';
}

/** `| a | b |` rows of a markdown table. */
function markdownTable(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.map(cell).join(' | ')} |`,
    `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
}

/**
 * The scale curve (bench/scale.ts): each route family's p50 and p99 at each
 * size of one run, its p99's growth to the largest size, and the size of
 * each world. Its figures are keyed `<size>.<route>.<p50_ms|p99_ms>`; a
 * route's name is the one its objective row gives it (the text after the
 * objective's colon).
 */
export function scaleCurveSection(
  r: BenchResults,
  staleText: string,
): string[] {
  const sizes = Object.keys(r.figures)
    .filter((k) => k.endsWith('.database_mb'))
    .map((k) => k.slice(0, -'.database_mb'.length));
  const routes = [
    ...new Set(
      Object.keys(r.figures)
        .map((k) => /^[^.]+\.([^.]+)\.p99_ms$/.exec(k)?.[1])
        .filter((k): k is string => k !== undefined),
    ),
  ];
  const largest = sizes.at(-1) ?? '';
  const sizeLabel = (size: string) => size.toUpperCase().replace('K', 'k');
  const name = (route: string) => {
    const objective = r.figures[`${largest}.${route}.p99_ms`]?.objective;
    return objective?.slice(objective.indexOf(': ') + 2) ?? route;
  };
  const rows = routes.map((route) => [
    name(route),
    ...sizes.map(
      (size) =>
        `${shown(r.figures, `${size}.${route}.p50_ms`)} / ${shown(r.figures, `${size}.${route}.p99_ms`)}`,
    ),
    shown(r.figures, `growth.${route}`),
  ]);
  rows.push([
    'database size',
    ...sizes.map((size) => shown(r.figures, `${size}.database_mb`)),
    '',
  ]);
  return [
    '## The scale curve',
    '',
    `${ranText(r)} One run: the API bench's world at each size (${(r.notes ?? []).join('; ')}), each route family called by 8 callers; p50 / p99 per size, and the p99's growth from the size before the largest to the largest (target ≤ 1.5×; at the largest size every route's p99 ≤ 50 ms). \`EXPLAIN (ANALYZE, BUFFERS)\` of the slowest statement behind the reads at the largest size: [bench/results/scale-explain.txt](../bench/results/scale-explain.txt).`,
    ...(staleText ? ['', `**${staleText}.**`] : []),
    '',
    ...markdownTable(
      [
        'route',
        ...sizes.map((size) => `${sizeLabel(size)}: p50 / p99`),
        `p99 growth to ${sizeLabel(largest)}`,
      ],
      rows,
    ),
    '',
  ];
}

/**
 * The per-row cost of a no-change resync at each cluster size
 * (bench/sync-scale.ts), from its figures keyed `pods_<n>.<figure>`.
 */
export function perRowSection(r: BenchResults, staleText: string): string[] {
  const sizes = Object.keys(r.figures)
    .map((k) => /^pods_(\d+)\.rows$/.exec(k)?.[1])
    .filter((n): n is string => n !== undefined);
  return [
    '## A no-change resync, per row, as a cluster grows',
    '',
    `${ranText(r)} Wall-clock time and the sync's CPU are medians of the measured resyncs, PostgreSQL's CPU their mean (it is read in 10 ms clock ticks); target: the dearest size's wall-clock time a row within 1.3× the cheapest's.`,
    ...(staleText ? ['', `**${staleText}.**`] : []),
    '',
    ...markdownTable(
      [
        'pods',
        'rows',
        'resync',
        'µs a row',
        "sync's CPU µs a row",
        "PostgreSQL's CPU µs a row",
      ],
      sizes.map((n) => [
        Number(n).toLocaleString('en-US'),
        r.figures[`pods_${n}.rows`]?.value.toLocaleString('en-US') ?? '–',
        shown(r.figures, `pods_${n}.resync_ms`),
        shown(r.figures, `pods_${n}.us_per_row`),
        shown(r.figures, `pods_${n}.cpu_us_per_row`),
        shown(r.figures, `pods_${n}.postgres_us_per_row`),
      ]),
    ),
    '',
  ];
}

/** The benches whose figures the page also shows as a curve, after the table. */
const CURVES: Record<string, (r: BenchResults, staleText: string) => string[]> =
  {
    scale: scaleCurveSection,
    'sync-scale': perRowSection,
  };

export interface PageInput {
  /** Each bench's results, undefined when its file is missing. */
  results: ReadonlyMap<string, BenchResults | undefined>;
  history: CodeHistory;
}

export function renderSloPage({ results, history }: PageInput): string {
  const names = [
    ...EXPECTED.map((e) => e.bench),
    ...[...results.keys()]
      .filter((n) => !EXPECTED.some((e) => e.bench === n))
      .sort(),
  ];
  const rows: string[][] = [];
  const stale: string[] = [];
  const curves: string[] = [];
  for (const name of names) {
    const r = results.get(name);
    const expected = EXPECTED.find((e) => e.bench === name);
    if (!r) {
      for (const objective of expected?.objectives ?? []) {
        rows.push([
          objective,
          '',
          'not measured yet',
          '',
          '',
          '',
          `\`${expected?.command}\``,
        ]);
      }
      continue;
    }
    const f = freshness(r, history);
    const staleText = freshnessText(f, r.measures);
    if (staleText) stale.push(`- \`${name}\`: ${staleText}.`);
    curves.push(...(CURVES[name]?.(r, staleText) ?? []));
    const judged = Object.values(r.figures).filter((fig) => fig.objective);
    for (const fig of judged) {
      const shown = formatValue(fig.value, fig.unit);
      rows.push([
        fig.objective ?? '',
        fig.target?.text ?? '',
        `${staleText ? `~~${shown}~~ (stale)` : shown}${fig.detail ? `; ${fig.detail}` : ''}`,
        verdict(fig),
        machineText(r),
        ranAt(r),
        `\`${r.command}\``,
      ]);
    }
  }
  const header = [
    'Objective',
    'Target',
    'Latest',
    'Verdict',
    'Machine',
    'Date (UTC)',
    'Command',
  ];
  const table = [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
  const notes = names.flatMap((name) =>
    (results.get(name)?.notes ?? []).map((n) => `- \`${name}\`: ${n}`),
  );
  return [
    '# Service level objectives',
    '',
    '<!-- Generated by `npm run bench -- slo` (bench/slo-page.ts) from bench/results/*.json. Do not edit: rerun. -->',
    '',
    'What the system promises, what it measured, and how to measure it again. Every figure is the',
    'latest a bench wrote to `bench/results/<bench>.json`, with the machine it ran on and the',
    'command that reproduces it. A figure whose code changed after the commit it ran on is struck',
    'through and marked stale: rerun its command. `npm run bench -- slo` reruns the benches cheap',
    'enough for one sitting and rewrites this page; `npm run bench -- slo --render` only rewrites it.',
    'It leaves out the benches that need a world too large for one sitting (the graph bench seeds',
    '400k pods and 100k hosts; the scale curve; the per-row sync): their rows show the latest file',
    'their own command wrote. Cold start shows the slowest API function and the sync; every',
    "function's figures are in `bench/results/coldstart.json` and `bench/coldstart-results.md`.",
    'The machine column ends with the 1-minute load average when the run ended: above the number of',
    'CPUs, the machine was shared with other work and wall-clock figures (latencies, rates) are',
    'inflated; CPU-time figures and ratios measured side by side move less. Then the host-speed',
    "probe (`bench/host-speed.ts`): a fixed workload's time as the run ended, which also sees what",
    'the load average cannot, a neighbour on the same physical CPU. Lower is faster; compare a',
    'figure with an earlier one only when their probes are close (runs written before it have none).',
    '',
    ...table,
    '',
    ...(stale.length > 0 ? ['## Stale figures', '', ...stale, ''] : []),
    ...curves,
    ...(notes.length > 0 ? ['## Notes from the runs', '', ...notes, ''] : []),
    'The cost of a fleet, from the same results files: [cost.md](cost.md).',
    '',
  ].join('\n');
}

/** Every results file in the folder, plus the expected ones (undefined if missing). */
export function loadAllResults(
  dir = resultsDir(),
): Map<string, BenchResults | undefined> {
  const map = new Map<string, BenchResults | undefined>();
  for (const e of EXPECTED) map.set(e.bench, readResults(e.bench, dir));
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    // No results written yet.
  }
  for (const file of files) {
    const name = file.slice(0, -'.json'.length);
    if (!map.has(name)) map.set(name, readResults(name, dir));
  }
  return map;
}
