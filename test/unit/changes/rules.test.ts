import { describe, expect, it } from 'vitest';
import {
  clampSnapshotTime,
  clockSteppedBack,
  decideFactsAction,
  type FactsAction,
  isNewerSnapshot,
  type StoredFacts,
} from '../../../shared/changes/rules.ts';
import type { SpecFacts } from '../../../shared/wire/spec-facts.ts';
import { facts } from './facts.ts';

const storedAt = new Date('2026-10-01T11:00:00Z');
const earlier = new Date('2026-10-01T10:59:59.999Z');
const later = new Date('2026-10-01T11:00:00.001Z');
const v1 = facts({ facts_version: 1 });
const v2 = facts({ facts_version: 2 });

describe('decideFactsAction', () => {
  it.each<{
    rule: string;
    stored: StoredFacts;
    incoming: SpecFacts | undefined;
    snapshotAt: Date;
    expected: FactsAction;
  }>([
    {
      rule: 'stores a baseline on first sight',
      stored: { facts: null, at: null },
      incoming: v1,
      snapshotAt: later,
      expected: 'baseline',
    },
    {
      rule: 'stores a baseline on first sight whatever the time',
      stored: { facts: null, at: storedAt },
      incoming: v1,
      snapshotAt: earlier,
      expected: 'baseline',
    },
    {
      rule: 'stores a baseline when facts_version changed',
      stored: { facts: v1, at: storedAt },
      incoming: v2,
      snapshotAt: later,
      expected: 'baseline',
    },
    {
      rule: 'stores a baseline when facts_version appears on an upgraded agent',
      stored: { facts: facts({ facts_version: 0 }), at: storedAt },
      incoming: v1,
      snapshotAt: later,
      expected: 'baseline',
    },
    {
      rule: 'keeps the stored set when facts are absent',
      stored: { facts: v1, at: storedAt },
      incoming: undefined,
      snapshotAt: later,
      expected: 'keep',
    },
    {
      rule: 'keeps the stored set when facts are absent from an older snapshot',
      stored: { facts: v1, at: storedAt },
      incoming: undefined,
      snapshotAt: earlier,
      expected: 'keep',
    },
    {
      rule: 'keeps nothing stored when facts are absent on first sight',
      stored: { facts: null, at: null },
      incoming: undefined,
      snapshotAt: later,
      expected: 'keep',
    },
    {
      rule: 'ignores an older snapshot',
      stored: { facts: v1, at: storedAt },
      incoming: v1,
      snapshotAt: earlier,
      expected: 'not_newer',
    },
    {
      rule: 'ignores a snapshot of the same time as a replay',
      stored: { facts: v1, at: storedAt },
      incoming: v1,
      snapshotAt: new Date(storedAt.getTime()),
      expected: 'not_newer',
    },
    {
      rule: 'ignores an older snapshot even with another facts_version',
      stored: { facts: v2, at: storedAt },
      incoming: v1,
      snapshotAt: earlier,
      expected: 'not_newer',
    },
    {
      rule: 'diffs a strictly newer snapshot of the same version',
      stored: { facts: v1, at: storedAt },
      incoming: v1,
      snapshotAt: later,
      expected: 'diff',
    },
    {
      rule: 'diffs stored facts that have no time',
      stored: { facts: v1, at: null },
      incoming: v1,
      snapshotAt: earlier,
      expected: 'diff',
    },
  ])('$rule', ({ stored, incoming, snapshotAt, expected }) => {
    // Act
    const action = decideFactsAction(stored, incoming, snapshotAt);

    // Assess
    expect(action).toBe(expected);
  });
});

describe('clampSnapshotTime', () => {
  const now = new Date('2026-10-01T12:00:00Z');

  it.each<{
    rule: string;
    offsetMs: number;
    atOffsetMs: number;
    clamped: boolean;
  }>([
    {
      rule: 'keeps a stamp in the past',
      offsetMs: -86_400_000,
      atOffsetMs: -86_400_000,
      clamped: false,
    },
    {
      rule: 'keeps a stamp equal to now',
      offsetMs: 0,
      atOffsetMs: 0,
      clamped: false,
    },
    {
      rule: 'keeps a stamp 59 s ahead',
      offsetMs: 59_000,
      atOffsetMs: 59_000,
      clamped: false,
    },
    {
      rule: 'keeps a stamp exactly 60 s ahead',
      offsetMs: 60_000,
      atOffsetMs: 60_000,
      clamped: false,
    },
    {
      rule: 'clamps a stamp 60.001 s ahead',
      offsetMs: 60_001,
      atOffsetMs: 60_000,
      clamped: true,
    },
    {
      rule: 'clamps a stamp 61 s ahead',
      offsetMs: 61_000,
      atOffsetMs: 60_000,
      clamped: true,
    },
    {
      rule: 'clamps a stamp a day ahead',
      offsetMs: 86_400_000,
      atOffsetMs: 60_000,
      clamped: true,
    },
  ])('$rule', ({ offsetMs, atOffsetMs, clamped }) => {
    // Prepare
    const stamp = new Date(now.getTime() + offsetMs);

    // Act
    const result = clampSnapshotTime(stamp, now);

    // Assess
    expect(result.at.getTime()).toBe(now.getTime() + atOffsetMs);
    expect(result.clamped).toBe(clamped);
  });
});

describe('isNewerSnapshot', () => {
  const minute = 60_000;
  const T = Date.parse('2026-10-01T12:00:00Z');
  const at = (minutes: number) => new Date(T + minutes * minute);
  /** What an agent whose clock runs `fastBy` minutes ahead sends at `sent`, processed at `processed`. */
  const snapshot = (
    sent: number,
    processed: number,
    streamSeq: number | undefined,
    fastBy = 0,
  ) => {
    const stamp = at(sent + fastBy);
    return {
      at: clampSnapshotTime(stamp, at(processed)).at,
      stamp,
      streamSeq,
    };
  };
  const applied = (s: ReturnType<typeof snapshot>) => ({
    at: s.at,
    stamp: s.stamp,
    streamSeq: s.streamSeq ?? null,
  });

  it.each([
    {
      rule: 'takes the first snapshot of a cluster',
      before: undefined,
      incoming: snapshot(0, 0, 1),
      newer: true,
    },
    {
      rule: 'takes a later snapshot',
      before: applied(snapshot(0, 0, 1)),
      incoming: snapshot(5, 5, 2),
      newer: true,
    },
    {
      rule: 'skips a replay of the same snapshot',
      before: applied(snapshot(0, 0, 1)),
      incoming: snapshot(0, 3, 1),
      newer: false,
    },
    {
      rule: 'skips an older snapshot delivered late',
      before: applied(snapshot(5, 5, 2)),
      incoming: snapshot(0, 7, 1),
      newer: false,
    },
    {
      rule: 'skips an older snapshot delivered late by an agent 10 minutes fast, which the clamped time alone would take',
      before: applied(snapshot(1, 1, 2, 10)),
      incoming: snapshot(0, 3, 1, 10),
      newer: false,
    },
    {
      rule: 'takes honest snapshots after a clock that ran a day ahead is corrected',
      before: applied(snapshot(0, 0, 1, 24 * 60)),
      incoming: snapshot(5, 5, 2),
      newer: true,
    },
    {
      rule: 'takes a later snapshot after the stream was recreated (its sequence starts over)',
      before: applied(snapshot(0, 0, 900)),
      incoming: snapshot(5, 5, 1),
      newer: true,
    },
    {
      rule: 'goes by the clamped time when the sequence is unknown',
      before: applied(snapshot(1, 1, undefined, 10)),
      incoming: snapshot(0, 3, undefined, 10),
      newer: true,
    },
  ])('$rule', ({ before, incoming, newer }) => {
    // Act & Assess
    expect(isNewerSnapshot(before, incoming)).toBe(newer);
  });

  it('tells a clock that stepped back (later in the stream, stamped earlier) from a replay and a late delivery', () => {
    // Prepare
    const before = applied(snapshot(20, 20, 10));
    const steppedBack = snapshot(0, 25, 11);

    // Act & Assess
    expect(isNewerSnapshot(before, steppedBack)).toBe(false);
    expect(clockSteppedBack(before, steppedBack)).toBe(true);
    // The applied message redelivered; the same snapshot published again.
    expect(clockSteppedBack(before, snapshot(20, 25, 10))).toBe(false);
    expect(clockSteppedBack(before, snapshot(20, 25, 11))).toBe(false);
    // An older one delivered late; one that did not come through the stream.
    expect(clockSteppedBack(before, snapshot(15, 25, 9))).toBe(false);
    expect(clockSteppedBack(before, snapshot(0, 25, undefined))).toBe(false);
    expect(clockSteppedBack(undefined, steppedBack)).toBe(false);
  });
});
