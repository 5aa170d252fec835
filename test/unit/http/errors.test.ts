import { describe, expect, it } from 'vitest';
import {
  InvalidParamError,
  NotFoundError,
  ServiceUnavailableError,
} from '../../../shared/errors.ts';
import { toErrorResult } from '../../../shared/http/error-middleware.ts';
import { readQuery } from '../../../shared/http/query.ts';

const bodyOf = (result: { body?: string }) => JSON.parse(result.body ?? '');

describe('toErrorResult', () => {
  it('keeps a domain error below 500 as it is, details included', () => {
    // Act
    const result = toErrorResult(
      new InvalidParamError('unknown sort key', {
        details: { allowed: ['name'] },
      }),
    );

    // Assess
    expect(result.statusCode).toBe(400);
    expect(bodyOf(result)).toEqual({
      error: {
        code: 'invalid_param',
        message: 'unknown sort key',
        details: { allowed: ['name'] },
      },
    });
    expect(
      bodyOf(toErrorResult(new NotFoundError('cluster not found'))).error.code,
    ).toBe('not_found');
  });

  it('keeps the code of a 5xx domain error but never its message or details', () => {
    // Act
    const result = toErrorResult(
      new ServiceUnavailableError('nats://10.0.0.5:4222 refused', {
        details: { host: '10.0.0.5' },
      }),
    );

    // Assess
    expect(result.statusCode).toBe(503);
    expect(bodyOf(result)).toEqual({
      error: { code: 'service_unavailable', message: 'service unavailable' },
    });
  });

  it('turns anything else into a generic 500', () => {
    // Act
    const result = toErrorResult(
      new Error('relation "user_grants" does not exist'),
    );

    // Assess
    expect(result.statusCode).toBe(500);
    expect(bodyOf(result)).toEqual({
      error: { code: 'internal_error', message: 'internal server error' },
    });
  });
});

describe('readQuery', () => {
  const options = { known: ['q', 'sort', 'page'], invalidParam: ['q', 'sort'] };

  it('decodes the known parameters and ignores the rest', () => {
    // Act
    const values = readQuery('q=a%20b+c&page=2&other=1&flag', options);

    // Assess
    expect(values).toEqual({ q: 'a b c', page: '2' });
  });

  it('refuses a repeated parameter, as invalid_param for q and sort', () => {
    // Act + Assess
    expect(() => readQuery('sort=name&sort=age', options)).toThrow(
      InvalidParamError,
    );
    expect(() => readQuery('page=1&page=2', options)).toThrow(
      'may appear only once',
    );
  });

  it('refuses unknown parameters when the route asks for it', () => {
    // Act + Assess
    expect(() =>
      readQuery('page=1&pages=2', { ...options, rejectUnknown: true }),
    ).toThrow('unknown query parameter');
  });

  it('refuses invalid UTF-8 in a known parameter', () => {
    // Act + Assess
    expect(() => readQuery('q=%C3%28', options)).toThrow('not valid UTF-8');
  });
});
