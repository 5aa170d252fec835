import { describe, expect, it } from 'vitest';
import {
  canonicalQuantity,
  cpuMillicores,
  quantityBytes,
} from '../../../shared/collector/quantity.ts';

describe('canonicalQuantity', () => {
  it.each([
    ['0.5', '500m'],
    [0.5, '500m'],
    ['500m', '500m'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['1.5', '1500m'],
    ['2', '2'],
    ['1000', '1k'],
    ['1500', '1500'],
    ['0.5Gi', '512Mi'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['1.5Gi', '1536Mi'],
    ['100Ki', '100Ki'],
    ['0.5Ki', '512'],
    ['1024', '1k'.replace('1k', '1024')],
    ['128974848', '128974848'],
    ['129e6', '129e6'],
    ['1e3', '1e3'],
    ['1E3', '1e3'],
    ['12e-1', '1200e-3'],
    ['1M', '1M'],
    ['1000k', '1M'],
    ['0.1m', '100u'],
    ['1n', '1n'],
    ['0.1n', '1n'],
    ['0', '0'],
    ['0Gi', '0'],
    ['.5', '500m'],
  ])('spells %j as %s', (input, canonical) => {
    expect(canonicalQuantity(input)).toBe(canonical);
  });

  it.each(['', 'abc', '1.2.3', '5 Gi', '1Gb', null, undefined, {}])(
    'refuses %j as not a quantity',
    (input) => {
      expect(canonicalQuantity(input)).toBeUndefined();
    },
  );
});

describe('amounts from quantities', () => {
  it.each([
    ['250m', 250],
    ['1', 1000],
    ['1.5', 1500],
    [2, 2000],
    ['100u', 1],
    ['1e3', 1_000_000],
  ])('reads cpu %j as %d millicores, rounding up', (q, m) => {
    expect(cpuMillicores(q)).toBe(m);
  });

  it.each([
    ['128Mi', 134_217_728],
    ['1Gi', 1_073_741_824],
    ['1G', 1_000_000_000],
    ['100Ki', 102_400],
    ['8165556Ki', 8_361_529_344],
    ['1.5Gi', 1_610_612_736],
    ['1e3', 1000],
    ['500m', 1],
  ])('reads memory %j as %d bytes', (q, b) => {
    expect(quantityBytes(q)).toBe(b);
  });

  it('reads a missing or malformed amount as null, never 0', () => {
    expect(cpuMillicores(undefined)).toBeNull();
    expect(quantityBytes('lots')).toBeNull();
  });
});
