import { describe, expect, it } from 'vitest';
import { GroupOrder } from '../../../shared/ingest/bridge/group-order.ts';

const NOW = 1_000_000;

describe('GroupOrder (per-group ordering in the bridge)', () => {
  it('holds a message behind an older naked message of its own group', () => {
    const order = new GroupOrder();
    order.markNaked('acme.prod.a', 10, NOW + 5_000);
    expect(order.olderOutstanding('acme.prod.a', 11, new Set(), NOW)).toBe(10);
  });

  it('never holds a message of another group', () => {
    const order = new GroupOrder();
    order.markNaked('acme.prod.a', 10, NOW + 5_000);
    expect(
      order.olderOutstanding('acme.prod.b', 11, new Set(), NOW),
    ).toBeUndefined();
  });

  it('does not hold the naked message itself or anything older than it', () => {
    const order = new GroupOrder();
    order.markNaked('g', 10, NOW + 5_000);
    expect(order.olderOutstanding('g', 10, new Set(), NOW)).toBeUndefined();
    expect(order.olderOutstanding('g', 9, new Set(), NOW)).toBeUndefined();
  });

  it('names the oldest of several outstanding sequences', () => {
    const order = new GroupOrder();
    order.markNaked('g', 14, NOW + 5_000);
    order.markNaked('g', 12, NOW + 5_000);
    order.markNaked('g', 13, NOW + 5_000);
    expect(order.olderOutstanding('g', 20, new Set(), NOW)).toBe(12);
  });

  it('lets a message go when the older one is already in the batch being built', () => {
    const order = new GroupOrder();
    order.markNaked('g', 12, NOW + 5_000);
    order.markNaked('g', 13, NOW + 5_000);
    expect(order.olderOutstanding('g', 20, new Set([12]), NOW)).toBe(13);
    expect(
      order.olderOutstanding('g', 20, new Set([12, 13]), NOW),
    ).toBeUndefined();
  });

  it('releases the group once the older message is settled', () => {
    const order = new GroupOrder();
    order.markNaked('g', 10, NOW + 5_000);
    order.settled('g', 10);
    expect(order.olderOutstanding('g', 11, new Set(), NOW)).toBeUndefined();
    expect(order.size).toBe(0);
  });

  it('forgets a naked message after its time (another bridge may hold it)', () => {
    const order = new GroupOrder();
    order.markNaked('g', 10, NOW + 5_000);
    expect(order.olderOutstanding('g', 11, new Set(), NOW + 5_000)).toBe(10);
    expect(
      order.olderOutstanding('g', 11, new Set(), NOW + 5_001),
    ).toBeUndefined();
    expect(order.size).toBe(0);
  });

  it('a later nak of the same sequence extends its time', () => {
    const order = new GroupOrder();
    order.markNaked('g', 10, NOW + 1_000);
    order.markNaked('g', 10, NOW + 9_000);
    expect(order.olderOutstanding('g', 11, new Set(), NOW + 5_000)).toBe(10);
  });
});
