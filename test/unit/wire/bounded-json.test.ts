import { describe, expect, it } from 'vitest';
import {
  JSON_BOUNDS,
  jsonBoundViolation,
} from '../../../shared/wire/bounded-json.ts';

function nested(depth: number): unknown {
  const root: Record<string, unknown> = {};
  let at = root;
  for (let i = 1; i < depth; i++) {
    const next: Record<string, unknown> = {};
    at.a = next;
    at = next;
  }
  return root;
}

describe('jsonBoundViolation', () => {
  it('accepts a real NetworkPolicy rule', () => {
    const rule = {
      from: [
        {
          podSelector: {
            matchExpressions: [
              { key: 'app', operator: 'In', values: ['api', 'web'] },
            ],
          },
        },
        { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } },
      ],
      ports: [{ port: 443, protocol: 'TCP' }],
    };
    expect(jsonBoundViolation(rule)).toBeUndefined();
  });

  it('accepts the deepest nesting allowed and refuses one level more, naming the path', () => {
    expect(jsonBoundViolation(nested(JSON_BOUNDS.maxDepth))).toBeUndefined();
    const violation = jsonBoundViolation(nested(JSON_BOUNDS.maxDepth + 1));
    expect(violation?.rule).toBe('nested deeper than 16 levels');
    expect(violation?.path).toEqual(Array(JSON_BOUNDS.maxDepth).fill('a'));
  });

  it('walks 100,000 levels without a stack overflow', () => {
    expect(jsonBoundViolation(nested(100_000))?.rule).toMatch(/nested deeper/);
  });

  it('refuses too many values, a long string and a long key, never quoting them', () => {
    const many = { list: Array.from({ length: 20_000 }, (_, i) => i) };
    expect(jsonBoundViolation(many)?.rule).toBe(
      'more than 10000 values in one field',
    );
    const long = { key: ['x'.repeat(3_000)] };
    expect(jsonBoundViolation(long)).toEqual({
      path: ['key', 0],
      rule: 'longer than 2048 characters',
    });
    const longKey = { ['k'.repeat(3_000)]: 1 };
    const violation = jsonBoundViolation(longKey);
    expect(violation?.rule).toBe('a key longer than 2048 characters');
    expect(JSON.stringify(violation)).not.toContain('kkkk');
  });
});
