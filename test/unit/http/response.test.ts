import { describe, expect, it } from 'vitest';
import { JsonText, ok } from '../../../shared/http/response.ts';

describe('ok', () => {
  it('splices JSON text into the body as it is', () => {
    // Prepare: text whose re-serialization would differ (spacing, key order).
    const data = new JsonText('[{"b": 1, "a": "x"}]');

    // Act
    const result = ok(data, { total: 1, page: 1, per_page: 50 });

    // Assess
    expect(result.body).toBe(
      '{"data":[{"b": 1, "a": "x"}],"meta":{"total":1,"page":1,"per_page":50}}',
    );
    expect(result.statusCode).toBe(200);
    expect(result.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
    });
  });

  it('leaves meta out when there is none, for text and values alike', () => {
    // Act & Assess
    expect(ok(new JsonText('[]')).body).toBe('{"data":[]}');
    expect(ok([]).body).toBe('{"data":[]}');
  });
});

describe('JsonText', () => {
  it('parses to what it holds', () => {
    // Act & Assess
    expect(new JsonText<number[]>('[1,2]').parse()).toEqual([1, 2]);
  });
});
