import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COLDSTART_MEASURES,
  type ColdStartRow,
  coldStartFigures,
  coldStartNotes,
  FLOOR_NAME,
  LIBRARIES_FLOOR_NAME,
  LIVE_FLOOR_NAME,
} from '../../../bench/coldstart-figures.ts';
import {
  GRAPH_MEASURES,
  type GraphMeasured,
  graphFigures,
} from '../../../bench/graph-figures.ts';
import { hostSpeedMs, probeWorkload } from '../../../bench/host-speed.ts';
import { type BenchResults, machine } from '../../../bench/results.ts';
import {
  freshness,
  gitHistory,
  loadAllResults,
  machineText,
  renderSloPage,
} from '../../../bench/slo-page.ts';

/** A git repository of its own: measured code, then a later change to it. */
let repo: string;
let measuredAt: string;
let unrelatedAt: string;
let changedAt: string;

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
}

function commit(file: string, text: string, message: string): string {
  mkdirSync(join(repo, file, '..'), { recursive: true });
  writeFileSync(join(repo, file), text);
  git('add', file);
  git('commit', '-q', '-m', message);
  return git('rev-parse', 'HEAD');
}

function results(
  bench: string,
  over: Partial<BenchResults> = {},
): BenchResults {
  return {
    bench,
    date: '2026-12-06T06:00:00.000Z',
    commit: measuredAt,
    dirty: false,
    command: `npm run bench -- ${bench}`,
    measures: ['shared/sync'],
    machine: {
      cpus: 2,
      cpuModel: 'Test CPU',
      memoryGiB: 24,
      node: 'v22.0.0',
      postgres: '15.20',
      loadAverage: [1.5, 1, 1],
    },
    figures: {},
    ...over,
  };
}

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), 'slo-page-'));
  git('init', '-q');
  git('config', 'user.email', 'test@example.com');
  git('config', 'user.name', 'test');
  measuredAt = commit('shared/sync/sync.ts', 'v1', 'sync v1');
  unrelatedAt = commit('shared/http/routes.ts', 'v1', 'routes v1');
  changedAt = commit('shared/sync/sync.ts', 'v2', 'sync v2');
});

afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe('freshness', () => {
  it('is current when no later commit touches the measured paths', () => {
    const history = gitHistory(repo);
    expect(
      freshness(
        results('api', { measures: ['shared/http'], commit: unrelatedAt }),
        history,
      ),
    ).toEqual({ state: 'current' });
    // Measured before the routes changed: the routes' figures are stale,
    // a later commit to other code does not matter.
    expect(
      freshness(
        results('api', { measures: ['shared/http'], commit: measuredAt }),
        history,
      ),
    ).toEqual({ state: 'stale', commits: [unrelatedAt] });
  });

  it('is stale when the measured code changed after the commit it ran on', () => {
    expect(freshness(results('sync'), gitHistory(repo))).toEqual({
      state: 'stale',
      commits: [changedAt],
    });
  });

  it('is current at HEAD, and stale when it ran on uncommitted changes', () => {
    const history = gitHistory(repo);
    expect(freshness(results('sync', { commit: changedAt }), history)).toEqual({
      state: 'current',
    });
    expect(
      freshness(results('sync', { commit: changedAt, dirty: true }), history),
    ).toEqual({ state: 'uncommitted' });
  });

  it('does not vouch for a commit outside the history', () => {
    const history = gitHistory(repo);
    expect(
      freshness(results('sync', { commit: 'f'.repeat(40) }), history),
    ).toEqual({ state: 'unknown-commit' });
    expect(freshness(results('sync', { commit: '' }), history)).toEqual({
      state: 'unknown-commit',
    });
  });
});

/** The page from these results files, and its row of an objective. */
function rendered(files: readonly BenchResults[]): {
  page: string;
  row: (objective: string) => string;
} {
  const dir = mkdtempSync(join(tmpdir(), 'slo-results-'));
  try {
    for (const f of files) {
      writeFileSync(join(dir, `${f.bench}.json`), JSON.stringify(f));
    }
    const page = renderSloPage({
      results: loadAllResults(dir),
      history: gitHistory(repo),
    });
    const row = (objective: string) =>
      page.split('\n').find((l) => l.startsWith(`| ${objective} |`)) ?? '';
    return { page, row };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('renderSloPage', () => {
  it('renders the sample results files, marks stale figures and missing benches', () => {
    const files: BenchResults[] = [
      results('sync', {
        figures: {
          'large.first.ratio': {
            value: 1.12,
            unit: '×',
            objective: 'Sync, large first snapshot, against the floor',
            target: { max: 1.3, text: '≤ 1.3× the floor' },
            detail: '450 ms vs floor 400 ms',
          },
          'large.first.ms': { value: 450, unit: 'ms' },
        },
      }),
      results('api', {
        commit: changedAt,
        measures: ['shared/http'],
        command: 'npm run bench -- api',
        figures: {
          'pods.p99_ms': {
            value: 75,
            unit: 'ms',
            objective: 'Read API p99: pods',
            target: { max: 50, text: '≤ 50 ms' },
          },
          'summary.p99_ms': {
            value: 20,
            unit: 'ms',
            objective: 'Read API p99: summary',
            target: { max: 50, text: '≤ 50 ms' },
          },
        },
      }),
      // A bench the page does not know: its rows come after the known ones.
      results('newbench', {
        commit: changedAt,
        figures: {
          rate: {
            value: 250,
            unit: '/s',
            objective: 'Something a second',
            target: { min: 200, text: '≥ 200/s' },
          },
        },
      }),
    ];
    const { page, row } = rendered(files);

    // Stale: sync.ts changed after the sync figures were measured.
    expect(row('Sync, large first snapshot, against the floor')).toContain(
      '~~1.12×~~ (stale)',
    );
    expect(page).toContain(
      `\`sync\`: stale: 1 later commit (latest ${changedAt.slice(0, 7)}) change shared/sync`,
    );
    // Current, and judged against its target.
    const pods = row('Read API p99: pods');
    expect(pods).toContain('| 75 ms |');
    expect(pods).toContain('**missed** by 50%');
    expect(pods).toContain(
      '2 × Test CPU, 24 GiB, PostgreSQL 15.20, Node v22.0.0, load 1.5',
    );
    expect(pods).toContain('2026-12-06 06:00');
    expect(pods).toContain('`npm run bench -- api`');
    expect(row('Read API p99: summary')).toContain('| met |');
    // Supporting figures are not rows.
    expect(page).not.toContain('450 ms |');
    // A bench with no file yet: its objectives, not measured yet.
    expect(row('Cold start, sync, against the floor')).toContain(
      'not measured yet',
    );
    expect(row('Graph reads p99, slowest scenario')).toContain(
      '`npm run bench -- graph`',
    );
    expect(row('Events timeline p99')).toContain('not measured yet');
    // An unknown bench's file still makes rows, after the known ones.
    expect(row('Something a second')).toContain('| met |');
    expect(page.indexOf('Something a second')).toBeGreaterThan(
      page.indexOf('Read API p99: pods'),
    );
  });

  it('renders the cold start and the graph from what their benches write', () => {
    const fn = (
      name: string,
      kind: ColdStartRow['kind'],
      answerMs: number,
      failed?: string,
    ): ColdStartRow => ({
      name,
      kind,
      bytes: 600_000,
      importMs: answerMs * 0.7,
      answerMs,
      importCpuMs: answerMs * 0.5,
      answerCpuMs: answerMs * 0.6,
      newBackendAnswerMs: answerMs + 20,
      ...(failed ? { failed } : {}),
    });
    const coldRows = [
      fn(FLOOR_NAME, 'floor', 500),
      fn(LIBRARIES_FLOOR_NAME, 'libraries', 650),
      fn(LIVE_FLOOR_NAME, 'live-floor', 600),
      fn('list-clusters', 'api', 700),
      fn('get-workload', 'api', 900),
      { ...fn('get-live-logs', 'api', 840), live: true as const },
      fn('sync', 'sync', 1400),
      fn('sweep-event-retention', 'other', 5000, 'Ns: not permitted'),
    ];
    const scenario = (
      name: string,
      kind: GraphMeasured['kind'],
      ms: number,
    ): GraphMeasured => ({
      name,
      kind,
      // 98 quick calls and two at `ms`: p99 is `ms`, p50 1 ms.
      latencies: [...Array.from({ length: 98 }, () => 1), ms, ms],
    });
    const files: BenchResults[] = [
      results('coldstart', {
        commit: changedAt,
        figures: coldStartFigures(coldRows, 10),
        notes: coldStartNotes(coldRows),
      }),
      // Measured before shared/sync changed: stale.
      results('graph', {
        figures: graphFigures(
          [
            scenario('pod of a deployment, depth 1', 'graph', 10),
            scenario('service with 1,000 endpoints, depth 2', 'graph', 80),
            scenario('PQL spec example 1', 'pql', 20),
          ],
          '201 clusters, 400,000 pods, 100,000 hosts',
        ),
      }),
    ];
    const { page, row } = rendered(files);

    // The slowest API function, against 1.5× the floor.
    const api = row('Cold start, slowest API function, against the floor');
    expect(api).toContain("every API function ≤ 1.5× the floor's first answer");
    expect(api).toContain(
      '| 1.8×; get-workload: 900 ms vs floor 500 ms on a pooled backend, median of 10 fresh processes (on a new backend 1.77×); 2 of 3 API functions over 1.5×, the quickest list-clusters at 1.40×; the libraries every API function loads, alone: 1.30×; the live reads against the live floor (select 1 beside one kube_query to the agent over NATS, 600 ms): 1.40×',
    );
    expect(api).toContain('**missed** by 20%');
    const sync = row('Cold start, sync, against the floor');
    expect(sync).toContain("≤ 3× the floor's first answer");
    expect(sync).toContain('| 2.8×; 1400 ms vs floor 500 ms');
    expect(sync).toContain('| met |');
    // Each function's figures stay in the file, not on the page.
    expect(page).not.toContain('list-clusters |');
    expect(page).toContain(
      '`coldstart`: sweep-event-retention answered with an error: Ns: not permitted',
    );

    // The slowest of each kind against 50 ms; stale, as the file says.
    const graph = row('Graph reads p99, slowest scenario');
    expect(graph).toContain('≤ 50 ms, every scenario');
    expect(graph).toContain(
      '~~80 ms~~ (stale); service with 1,000 endpoints, depth 2 (p50 1.0 ms); 1 of 2 scenarios over 50 ms; 201 clusters, 400,000 pods, 100,000 hosts, 100 calls each',
    );
    expect(graph).toContain('**missed** by 60%');
    const pql = row('PQL host search p99, slowest search');
    expect(pql).toContain('≤ 50 ms, every search');
    expect(pql).toContain(
      '~~20 ms~~ (stale); PQL spec example 1 (p50 1.0 ms); 0 of 1 searches over 50 ms',
    );
    expect(pql).toContain('| met |');
    expect(page).toContain('`graph`: stale: 1 later commit');
  });

  it('draws the scale curve and the per-row sync as tables of their figures', () => {
    const ms = (value: number) => ({ value, unit: 'ms' });
    const route = (key: string, label: string, p99: number[]) =>
      Object.fromEntries(
        ['40k', '400k', '2m'].flatMap((size, i) => [
          [`${size}.${key}.p50_ms`, ms(10 + i)],
          [
            `${size}.${key}.p99_ms`,
            size === '2m'
              ? {
                  ...ms(p99[i] ?? 0),
                  objective: `Read API p99 at 2M pods: ${label}`,
                  target: { max: 50, text: '≤ 50 ms' },
                }
              : ms(p99[i] ?? 0),
          ],
        ]),
      );
    const { page, row } = rendered([
      results('scale', {
        commit: changedAt,
        command: 'npm run bench -- scale --sizes=40k,400k,2m',
        notes: ['sizes measured: 40k pods (20 clusters)'],
        figures: {
          '40k.database_mb': { value: 211, unit: 'MB' },
          '400k.database_mb': { value: 1911, unit: 'MB' },
          '2m.database_mb': { value: 9402, unit: 'MB' },
          ...route('summary', 'clusters/{id}/summary', [24, 23, 25]),
          'growth.summary': { value: 1.09, unit: '×' },
          ...route('changes', 'clusters/{id}/changes', [82, 81, 78]),
        },
      }),
      // Measured before shared/sync changed: stale.
      results('sync-scale', {
        figures: {
          'pods_500.rows': { value: 823, unit: 'rows' },
          'pods_500.resync_ms': ms(6),
          'pods_500.us_per_row': { value: 7.29, unit: 'µs' },
          'pods_500.cpu_us_per_row': { value: 7.19, unit: 'µs' },
          'pods_20000.rows': { value: 32440, unit: 'rows' },
          'pods_20000.resync_ms': ms(172),
          'pods_20000.us_per_row': { value: 5.29, unit: 'µs' },
          'pods_20000.cpu_us_per_row': { value: 5.92, unit: 'µs' },
          'pods_20000.postgres_us_per_row': { value: 0.62, unit: 'µs' },
        },
      }),
    ]);
    expect(page).toContain('## The scale curve');
    expect(page).toContain(
      '| route | 40k: p50 / p99 | 400k: p50 / p99 | 2M: p50 / p99 | p99 growth to 2M |',
    );
    // Each route by the name its objective row gives it, in the bench's order.
    expect(row('clusters/{id}/summary')).toBe(
      '| clusters/{id}/summary | 10 ms / 24 ms | 11 ms / 23 ms | 12 ms / 25 ms | 1.09× |',
    );
    expect(row('clusters/{id}/changes')).toBe(
      '| clusters/{id}/changes | 10 ms / 82 ms | 11 ms / 81 ms | 12 ms / 78 ms | – |',
    );
    expect(page.indexOf('| clusters/{id}/summary |')).toBeLessThan(
      page.indexOf('| clusters/{id}/changes |'),
    );
    expect(row('database size')).toBe(
      '| database size | 211 MB | 1,911 MB | 9,402 MB |  |',
    );
    expect(page).toContain('bench/results/scale-explain.txt');
    expect(page).toContain('sizes measured: 40k pods (20 clusters)');
    const curve = page.slice(page.indexOf('## The scale curve'));
    expect(curve.slice(0, curve.indexOf('| route |'))).not.toContain('stale');

    expect(page).toContain(
      '## A no-change resync, per row, as a cluster grows',
    );
    expect(row('500')).toBe('| 500 | 823 | 6 ms | 7.29 µs | 7.19 µs | – |');
    expect(row('20,000')).toBe(
      '| 20,000 | 32,440 | 172 ms | 5.29 µs | 5.92 µs | 0.62 µs |',
    );
    // A curve measured on older code says so above its table.
    const perRow = page.slice(page.indexOf('## A no-change resync'));
    expect(perRow.slice(0, perRow.indexOf('| pods |'))).toContain(
      '**stale: 1 later commit',
    );
  });
});

describe('the host-speed probe', () => {
  it('does the same work on every pass, and is recorded with the machine', async () => {
    expect(probeWorkload()).toBe(probeWorkload());
    const reading = hostSpeedMs();
    expect(reading).toBeGreaterThan(0);
    expect(Number.isFinite(reading)).toBe(true);
    expect((await machine()).hostSpeedMs).toBeGreaterThan(0);
  });

  it('ends the machine column; a file written before it has none', () => {
    const probed = results('api');
    probed.machine.hostSpeedMs = 41.5;
    expect(machineText(probed)).toBe(
      '2 × Test CPU, 24 GiB, PostgreSQL 15.20, Node v22.0.0, load 1.5, probe 41.5 ms',
    );
    expect(machineText(results('api'))).not.toContain('probe');
  });
});

describe('measures', () => {
  // A path that no longer exists would never mark its figures stale.
  it.each([
    ['coldstart', COLDSTART_MEASURES],
    ['graph', GRAPH_MEASURES],
  ])("%s's measured paths exist", (_bench, measures) => {
    const root = join(import.meta.dirname, '../../..');
    for (const path of measures) {
      expect(existsSync(join(root, path)), path).toBe(true);
    }
  });
});
