/**
 * The compiled row walk (row-walk.ts) against zod's own parse of the same
 * row schemas: on every row the walk vouches for, zod accepts it with the
 * same output (values and key order); on every row zod refuses, the walk
 * stays undecided. Rows are generated and real-looking ones, then damaged
 * one value at a time.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  KIND_KEYS,
  type KindKey,
  LIMITS,
  ROW_SCHEMAS,
} from '../../../shared/wire/inventory.ts';
import { rowWalk, UNDECIDED } from '../../../shared/wire/row-walk.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { realisticInventoryMessage } from '../../fixtures/realistic.ts';
import { jsonPaths, withValueAt } from '../../helpers/json-paths.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261202);
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);

const WALKS = Object.fromEntries(
  KIND_KEYS.map((k) => [k, rowWalk(ROW_SCHEMAS[k])]),
) as Record<KindKey, (row: unknown) => unknown>;

/** The rows of every kind, as an agent's bytes parse (JSON values). */
function sampleRows(): { kind: KindKey; row: unknown }[] {
  const out: { kind: KindKey; row: unknown }[] = [];
  const messages = [
    JSON.parse(JSON.stringify(generateInventory({ size: 'small', seed: 3 }))),
    JSON.parse(JSON.stringify(realisticInventoryMessage())),
  ] as Record<string, unknown[] | undefined>[];
  for (const message of messages) {
    for (const kind of KIND_KEYS) {
      for (const row of (message[kind] ?? []).slice(0, 12)) {
        out.push({ kind, row });
      }
    }
  }
  return out;
}
const SAMPLES = sampleRows();

/**
 * The walk's answer agrees with zod's: undecided, or zod's very output.
 * Returns whether the walk decided.
 */
function agrees(kind: KindKey, row: unknown): boolean {
  const walked = WALKS[kind](row);
  const parsed = ROW_SCHEMAS[kind].safeParse(row);
  if (walked === UNDECIDED) return false;
  expect(parsed.success).toBe(true);
  expect(isDeepStrictEqual(walked, parsed.data)).toBe(true);
  // Key order too: stored JSON and COPY text are written from it.
  expect(JSON.stringify(walked)).toBe(JSON.stringify(parsed.data));
  return true;
}

const astral = '\u{1F600}';
const hostile = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>(
    null,
    '',
    'x',
    'ab\u0000cd',
    'x'.repeat(LIMITS.labelValue),
    'x'.repeat(LIMITS.labelValue + 1),
    astral.repeat(LIMITS.labelValue / 2),
    astral.repeat(LIMITS.labelValue),
    `${astral}x`.repeat(40),
    'x'.repeat(LIMITS.name + 1),
    astral.repeat(LIMITS.name),
    -1,
    -0,
    0,
    1.5,
    2_147_483_647,
    2_147_483_648,
    2 ** 53,
    1e308,
    true,
    '2026-06-15T12:00:00Z',
    '2026-06-15T12:00:00.123+02:00',
    '2026-06-15T12:00:00',
    '2026-02-30T00:00:00Z',
    'not a time',
    [],
    [null],
    {},
    { __proto__: null, constructor: 'x' },
    JSON.parse('{"__proto__": "x"}'),
    { cpu_millicores: 1, memory_bytes: null },
    { type: 'InternalIP', address: '10.0.0.1' },
  ),
);

describe('rowWalk', () => {
  it('vouches for every sample row, with the output zod gives', () => {
    for (const { kind, row } of SAMPLES) {
      expect(agrees(kind, row), kind).toBe(true);
    }
  });

  it('agrees with zod on rows with one value deleted or replaced', () => {
    const cases = fc.integer({ min: 0, max: SAMPLES.length - 1 }).chain((n) => {
      const sample = SAMPLES[n] as { kind: KindKey; row: unknown };
      return fc.record({
        sample: fc.constant(sample),
        path: fc.constantFrom(...jsonPaths(sample.row)),
        value: hostile,
        remove: fc.boolean(),
      });
    });
    let decided = 0;
    fc.assert(
      fc.property(cases, ({ sample, path, value, remove }) => {
        const row = withValueAt(sample.row, path, value, remove);
        if (agrees(sample.kind, row)) decided++;
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // Both answers are taken: the walk is no always-undecided stub.
    expect(decided).toBeGreaterThan(RUNS / 10);
  });

  it('leaves to zod what it cannot count as zod does', () => {
    // Past the cap in UTF-16 units, within it in code points: zod's call.
    const pod = structuredClone(
      SAMPLES.find((s) => s.kind === 'pods')?.row,
    ) as Record<string, unknown>;
    pod.labels = { app: astral.repeat(LIMITS.labelValue) };
    expect(WALKS.pods(pod)).toBe(UNDECIDED);
    expect(ROW_SCHEMAS.pods.safeParse(pod).success).toBe(true);
    // A key zod skips.
    pod.labels = JSON.parse('{"__proto__": "x", "app": "y"}');
    expect(WALKS.pods(pod)).toBe(UNDECIDED);
    // A required field absent.
    const { name: _, ...nameless } = pod;
    expect(WALKS.pods(nameless)).toBe(UNDECIDED);
    expect(ROW_SCHEMAS.pods.safeParse(nameless).success).toBe(false);
  });
});
