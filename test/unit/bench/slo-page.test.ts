import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchResults } from '../../../bench/results.ts';
import {
  freshness,
  gitHistory,
  loadAllResults,
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

describe('renderSloPage', () => {
  it('renders the sample results files, marks stale figures and missing benches', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slo-results-'));
    try {
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
      for (const f of files) {
        writeFileSync(join(dir, `${f.bench}.json`), JSON.stringify(f));
      }
      const page = renderSloPage({
        results: loadAllResults(dir),
        history: gitHistory(repo),
      });
      const row = (objective: string) =>
        page.split('\n').find((l) => l.startsWith(`| ${objective} |`)) ?? '';

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
      expect(row('Cold start per function, against the floor')).toContain(
        'not measured yet',
      );
      expect(row('Events timeline p99')).toContain('not measured yet');
      // An unknown bench's file still makes rows, after the known ones.
      expect(row('Something a second')).toContain('| met |');
      expect(page.indexOf('Something a second')).toBeGreaterThan(
        page.indexOf('Read API p99: pods'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
