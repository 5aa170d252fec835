/**
 * RFC 3339 times as every time parameter reads them (parseNanoTime, and
 * timeField and nanoTimeField built on it): hours 00–23, so hour 24 is
 * refused, and a leap second (second 60) is the last instant of that
 * minute's second 59.
 */
import { describe, expect, it } from 'vitest';
import {
  nanoTimeField,
  parseNanoTime,
  timeField,
} from '../../../shared/http/fields.ts';
import * as z from '../../../shared/zod.ts';

const NS = 1_000_000n;
const nsOf = (iso: string) => BigInt(Date.parse(iso)) * NS;

describe('RFC 3339 times', () => {
  it.each([
    '2026-05-01T24:00:00Z',
    '2026-05-01T24:00:00.000Z',
    '2026-05-01T24:30:00Z',
    '2026-05-01T25:00:00Z',
    '2026-05-01T23:60:00Z',
    '2026-05-01T23:59:61Z',
    '2026-05-01T12:00:00+24:00',
    '2026-05-01T12:00:00+01:60',
  ])('refuses %s: hours run 00–23, minutes 00–59, seconds 00–60', (text) => {
    // Act
    const ns = parseNanoTime(text);
    const asDate = z.safeParse(timeField('start'), text);
    const asNano = z.safeParse(nanoTimeField('from'), text);

    // Assess
    expect(ns).toBeUndefined();
    expect(asDate.success).toBe(false);
    expect(asNano.success).toBe(false);
  });

  it('reads 23:59:59 and 00:00:00 on either side of midnight', () => {
    // Assess: the hour a 24:00 would have named is the next day's 00:00.
    expect(parseNanoTime('2026-05-01T23:59:59Z')).toBe(
      nsOf('2026-05-01T23:59:59Z'),
    );
    expect(parseNanoTime('2026-05-02T00:00:00Z')).toBe(
      nsOf('2026-05-02T00:00:00Z'),
    );
  });

  it.each([
    ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59Z'],
    ['2016-12-31T23:59:60.5Z', '2016-12-31T23:59:59Z'],
    ['2016-12-31t23:59:60.123456789z', '2016-12-31T23:59:59Z'],
    // The same leap second seen from UTC−08:00.
    ['2016-12-31T15:59:60-08:00', '2016-12-31T23:59:59Z'],
  ])(
    'reads the leap second %s as the last instant of second 59',
    (text, second59) => {
      // Act
      const ns = parseNanoTime(text);

      // Assess: after every instant of second 59, before the next minute.
      expect(ns).toBe(nsOf(second59) + 999_999_999n);
      expect(ns).toBeGreaterThan(
        parseNanoTime(second59.replace('Z', '.999999998Z')) as bigint,
      );
      expect(ns).toBeLessThan(parseNanoTime('2017-01-01T00:00:00Z') as bigint);
    },
  );

  it('gives a leap second to the millisecond fields as second 59.999', () => {
    // Act
    const date = z.parse(timeField('start'), '2016-12-31T23:59:60Z');
    const ns = z.parse(nanoTimeField('from'), '2016-12-31T23:59:60Z');

    // Assess
    expect(date.toISOString()).toBe('2016-12-31T23:59:59.999Z');
    expect(ns).toBe(nsOf('2016-12-31T23:59:59Z') + 999_999_999n);
  });

  it.each([
    ['2026-05-01T12:00:00Z', '2026-05-01T12:00:00.000Z'],
    ['2026-05-01T12:00:00.123456789Z', '2026-05-01T12:00:00.123Z'],
    ['2026-05-01T14:00:00.5+02:00', '2026-05-01T12:00:00.500Z'],
    ['1969-12-31T23:59:59.9995Z', '1969-12-31T23:59:59.999Z'],
  ])('reads %s as a Date in the millisecond it falls in', (text, iso) => {
    // Act
    const date = z.parse(timeField('start'), text);

    // Assess
    expect(date.toISOString()).toBe(iso);
  });
});
