/**
 * The cold-start bench's `--profile` charges each CPU sample to the
 * innermost frame of the bundle's own code in its stack, read through the
 * bundle's source map; samples with none of it go to Node's builtin or V8
 * by name.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addProfiledRun,
  type CpuProfile,
  chargeOfSource,
  chargeProfile,
  chargesTable,
  groupOf,
  groupsTable,
  UNMAPPED,
} from '../../../bench/coldstart-profile.ts';

const BUNDLE = '/var/task/index.js';

/**
 * Bundle line 0 (from column 10) is pg's, line 1 the project's
 * shared/live/nats.ts, line 2 nats-core's; columns 0-9 of line 0 map to
 * nothing.
 */
const MAP_PAYLOAD = {
  version: 3,
  file: 'index.js',
  sourceRoot: '',
  sourcesContent: [],
  sources: [
    '../../node_modules/pg/lib/client.js',
    '../../shared/live/nats.ts',
    '../../node_modules/@nats-io/nats-core/lib/nats.js',
  ],
  names: [],
  mappings: 'UAAA;ACAA;ACAA',
};
const map = new SourceMap(MAP_PAYLOAD);

function frame(url: string, lineNumber = 0, columnNumber = 0, name = 'f') {
  return { functionName: name, url, lineNumber, columnNumber };
}

/**
 * (root) → pg → Node's TLS; (root) → Node's TLS alone; (root) → nats-core
 * → the project's nats.ts → Node's net; (root) → unmapped bundle code;
 * V8's idle and collector; Node's HTTP client alone.
 */
const profile: CpuProfile = {
  nodes: [
    {
      id: 1,
      callFrame: frame('', 0, 0, '(root)'),
      children: [2, 4, 5, 8, 9, 10, 11],
    },
    { id: 2, callFrame: frame(`file://${BUNDLE}`, 0, 40), children: [3] },
    { id: 3, callFrame: frame('node:internal/tls/wrap', 9, 0, 'onread') },
    { id: 4, callFrame: frame('node:internal/tls/wrap', 9, 0, 'onread') },
    { id: 5, callFrame: frame(`file://${BUNDLE}`, 2, 3), children: [6] },
    { id: 6, callFrame: frame(`file://${BUNDLE}`, 1, 7), children: [7] },
    { id: 7, callFrame: frame('node:net', 1, 0, 'connect') },
    { id: 8, callFrame: frame(`file://${BUNDLE}`, 0, 2) },
    { id: 9, callFrame: frame('', 0, 0, '(idle)') },
    { id: 10, callFrame: frame('', 0, 0, '(garbage collector)') },
    { id: 11, callFrame: frame('node:_http_client', 3, 0, 'request') },
  ],
  samples: [3, 4, 7, 8, 9, 10, 11, 3],
  // Each sample's time is the gap to the next; the last has none.
  timeDeltas: [0, 100, 200, 300, 400, 500, 600, 700],
};

describe('the cold-start profile', () => {
  it('charges a sample to the innermost bundle frame, else to Node or V8', () => {
    // Act
    const charges = chargeProfile(profile, (url) => url.endsWith(BUNDLE), map);

    // Assert
    expect(Object.fromEntries(charges)).toEqual({
      pg: 100,
      'node (tls)': 200,
      'shared/live': 300,
      [UNMAPPED]: 400,
      '(idle)': 500,
      '(garbage collector)': 600,
      'node (http)': 700,
    });
  });

  it('names a source by its package, else by the project folder it is in', () => {
    expect(chargeOfSource('../../node_modules/pg/lib/client.js')).toBe('pg');
    expect(chargeOfSource('../node_modules/@nats-io/nkeys/lib/nkeys.js')).toBe(
      '@nats-io/nkeys',
    );
    expect(
      chargeOfSource('../../node_modules/a/node_modules/zod/v4/core.js'),
    ).toBe('zod');
    expect(chargeOfSource('../../../work/main/shared/live/nats.ts')).toBe(
      'shared/live',
    );
    // A checkout under a folder named like one of the project's.
    expect(chargeOfSource('../../srv/shared/main/shared/http/query.ts')).toBe(
      'shared/http',
    );
    expect(chargeOfSource('../../../work/main/shared/config.ts')).toBe(
      'shared/config.ts',
    );
    expect(chargeOfSource('../bench/coldstart-live-floor.ts')).toBe(
      'bench/coldstart-live-floor.ts',
    );
  });

  it('tabulates ms a run, largest first, the rest summed, and the total', () => {
    // Arrange
    const load = new Map([
      ['pg', 4_000],
      ['zod', 2_000],
    ]);
    const firstAnswer = new Map([
      ['pg', 6_000],
      ['(idle)', 2_000],
      ['zod', 1_000],
      ['node (tls)', 3_000],
    ]);

    // Act
    const table = chargesTable({ load, firstAnswer, runs: 2 }, 2);

    // Assert
    expect(table).toEqual([
      '| charged to | load ms | first answer ms |',
      '|---|---:|---:|',
      '| pg | 2.0 | 3.0 |',
      '| node (tls) | 0.0 | 1.5 |',
      '| 2 more | 1.0 | 1.5 |',
      '| **profiled** | **3.0** | **6.0** |',
    ]);
  });

  it('groups charges by what they are for', () => {
    expect(groupOf('pg-protocol')).toBe('pg');
    expect(groupOf('postgres-interval')).toBe('pg');
    expect(groupOf('@nats-io/nuid')).toBe('NATS client');
    expect(groupOf('@aws-lambda-powertools/logger')).toBe('middy, Powertools');
    expect(groupOf('@middy/core')).toBe('middy, Powertools');
    expect(groupOf('shared/http-exchange.ts')).toBe(
      'the login secret read (shared/http-exchange.ts)',
    );
    expect(groupOf('shared/live')).toBe("the project's other code");
    expect(groupOf('bench/coldstart-live-floor.ts')).toBe(
      "the project's other code",
    );
    expect(groupOf(UNMAPPED)).toBe('compiling modules as first required');
    expect(groupOf('node (tls)')).toBe('Node, outside the bundle');
    expect(groupOf('(garbage collector)')).toBe('V8 (collector, compiler)');
    expect(groupOf('(idle)')).toBe('(idle)');
  });

  it('sets functions side by side by group, both phases summed, ms a run', () => {
    // Arrange
    const floor = {
      load: new Map([['pg', 4_000]]),
      firstAnswer: new Map([
        ['pg', 6_000],
        ['(idle)', 2_000],
      ]),
      runs: 2,
    };
    const live = {
      load: new Map([['@nats-io/nats-core', 3_000]]),
      firstAnswer: new Map([
        ['pg-pool', 1_000],
        ['@nats-io/nuid', 1_000],
      ]),
      runs: 1,
    };

    // Act
    const table = groupsTable([
      { name: 'floor', phases: floor },
      { name: 'live', phases: live },
    ]);

    // Assert
    expect(table[0]).toBe('| load + first answer, ms a run | floor | live |');
    expect(table).toContain('| pg | 5.0 | 1.0 |');
    expect(table).toContain('| NATS client | 0.0 | 4.0 |');
    expect(table).toContain('| (idle) | 1.0 | 0.0 |');
    expect(table.at(-1)).toBe('| **profiled** | **6.0** | **5.0** |');
  });

  it("adds a run's two profiles, read through the map beside the bundle, and skips a run that never answered", () => {
    // Prepare: a bundle's map, and the profiles of two runs, the second
    // without a first answer (it died).
    const dir = mkdtempSync(join(tmpdir(), 'coldstart-profile-'));
    try {
      const bundle = join(dir, 'index.js');
      writeFileSync(`${bundle}.map`, JSON.stringify(MAP_PAYLOAD));
      const oneSample = (line: number, us: number): CpuProfile => ({
        nodes: [
          { id: 1, callFrame: frame('', 0, 0, '(root)'), children: [2] },
          { id: 2, callFrame: frame(`file://${bundle}`, line, 0) },
        ],
        samples: [2, 2],
        timeDeltas: [0, us],
      });
      const answered = join(dir, 'answered');
      const died = join(dir, 'died');
      for (const run of [answered, died]) {
        mkdirSync(run);
        writeFileSync(
          join(run, 'load.cpuprofile'),
          JSON.stringify(oneSample(1, 300)),
        );
      }
      writeFileSync(
        join(answered, 'first-answer.cpuprofile'),
        JSON.stringify(oneSample(2, 500)),
      );
      const phases = { load: new Map(), firstAnswer: new Map(), runs: 0 };

      // Act
      addProfiledRun(phases, answered, bundle);
      addProfiledRun(phases, died, bundle);

      // Assess
      expect(phases.runs).toBe(1);
      expect(Object.fromEntries(phases.load)).toEqual({ 'shared/live': 300 });
      expect(Object.fromEntries(phases.firstAnswer)).toEqual({
        '@nats-io/nats-core': 500,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
