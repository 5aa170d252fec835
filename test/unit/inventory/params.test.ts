import { describe, expect, it } from 'vitest';
import { InvalidParamError, ValidationError } from '../../../shared/errors.ts';
import { isUuid } from '../../../shared/http/ids.ts';
import { parseQueryString } from '../../../shared/http/query.ts';
import { containsPattern } from '../../../shared/http/search.ts';
import {
  dnsLabel,
  kindName,
  MAX_PER_PAGE,
  oneOf,
  parsePaging,
  parseSearch,
  parseSort,
  readParam,
} from '../../../shared/inventory/params.ts';

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('parseQueryString', () => {
  it('keeps every occurrence of a repeated parameter in order', () => {
    // Act
    const params = parseQueryString('sort=name&q=web&sort=-age');

    // Assess
    expect(params.sort).toEqual(['name', '-age']);
    expect(params.q).toEqual(['web']);
  });

  it('decodes percent escapes and plus signs as a form does', () => {
    // Act
    const params = parseQueryString('q=a+b%25c%5F%E2%82%AC');

    // Assess
    expect(params.q).toEqual(['a b%c_€']);
  });

  it('turns invalid UTF-8 into U+FFFD, which the search refuses', () => {
    // Act
    const params = parseQueryString('q=%FFab&r=%ED%A0%80');

    // Assess
    expect(params.q).toEqual(['\uFFFDab']);
    expect(params.r?.[0]).toContain('\uFFFD');
  });

  it('returns no parameters for an empty or missing query string', () => {
    // Act & Assess
    expect(parseQueryString('')).toEqual({});
    expect(parseQueryString(undefined)).toEqual({});
  });

  it('gives a parameter named like an Object property no special meaning', () => {
    // Act
    const params = parseQueryString('__proto__=x&constructor=y');

    // Assess
    expect(Object.entries(params)).toEqual([
      ['__proto__', ['x']],
      ['constructor', ['y']],
    ]);
    expect(Object.getPrototypeOf(params)).toBeNull();
  });
});

describe('parseSearch', () => {
  it('trims the term', () => {
    // Act & Assess
    expect(parseSearch({ q: '  web  ' })).toBe('web');
  });

  it('treats an absent or blank q as no search', () => {
    // Act & Assess
    expect(parseSearch({})).toBeUndefined();
    expect(parseSearch({ q: '   ' })).toBeUndefined();
    expect(parseSearch({ q: [] })).toBeUndefined();
  });

  it('accepts 100 characters, counting code points', () => {
    // Prepare
    const hundredEmoji = '😀'.repeat(100);

    // Act & Assess
    expect(parseSearch({ q: 'a'.repeat(100) })).toBe('a'.repeat(100));
    expect(parseSearch({ q: hundredEmoji })).toBe(hundredEmoji);
  });

  it.each([
    ['too long', 'a'.repeat(101), 'too_long', /longer than 100/],
    [
      'too long once padding is kept',
      ` ${'a'.repeat(101)} `,
      'too_long',
      /longer/,
    ],
    ['a control character', 'we\u0001b', 'control_character', /control/],
    ['a tab', 'web\t', 'control_character', /control/],
    ['DEL', 'web\u007f', 'control_character', /control/],
    ['a C1 control', 'web\u0085', 'control_character', /control/],
    ['U+FFFD from a bad decode', 'web\uFFFD', 'invalid_utf8', /UTF-8/],
    ['a lone high surrogate', 'web\uD800', 'invalid_utf8', /UTF-8/],
    ['a lone low surrogate', '\uDC00web', 'invalid_utf8', /UTF-8/],
  ])(
    'refuses %s as invalid_param naming the reason',
    (_, q, reason, message) => {
      // Act
      const error = caught(() => parseSearch({ q }));

      // Assess
      expect(error).toBeInstanceOf(InvalidParamError);
      const invalid = error as InvalidParamError;
      expect(invalid.code).toBe('invalid_param');
      expect(invalid.status).toBe(400);
      expect(invalid.message).toMatch(message);
      expect(invalid.details).toEqual({ param: 'q', reason });
    },
  );

  it('refuses a repeated q as invalid_param', () => {
    // Act
    const error = caught(() => parseSearch({ q: ['a', 'b'] }));

    // Assess
    expect(error).toBeInstanceOf(InvalidParamError);
    expect((error as Error).message).toBe('q may appear only once');
  });

  it('accepts a single-element array', () => {
    // Act & Assess
    expect(parseSearch({ q: ['web'] })).toBe('web');
  });
});

describe('containsPattern', () => {
  it.each([
    ['web', '%web%'],
    ['%', '%\\%%'],
    ['_', '%\\_%'],
    ['a\\b', '%a\\\\b%'],
    ['50%_off\\', '%50\\%\\_off\\\\%'],
  ])('escapes %j literally', (term, pattern) => {
    // Act & Assess
    expect(containsPattern(term)).toBe(pattern);
  });
});

describe('parseSort', () => {
  const keys = ['name', 'namespace', 'age'];

  it('reads a key, ascending or descending', () => {
    // Act & Assess
    expect(parseSort({ sort: 'name' }, keys)).toEqual({
      key: 'name',
      descending: false,
    });
    expect(parseSort({ sort: '-age' }, keys)).toEqual({
      key: 'age',
      descending: true,
    });
  });

  it('treats an absent or empty sort as the usual order', () => {
    // Act & Assess
    expect(parseSort({}, keys)).toBeUndefined();
    expect(parseSort({ sort: '' }, keys)).toBeUndefined();
  });

  it.each([
    'bogus',
    '--name',
    '-',
    'Name',
    ' name',
    'constructor',
    '__proto__',
    'name;drop table k8s_pods',
  ])('refuses %j, listing the allowed keys', (sort) => {
    // Act
    const error = caught(() => parseSort({ sort }, keys));

    // Assess
    expect(error).toBeInstanceOf(InvalidParamError);
    const invalid = error as InvalidParamError;
    expect(invalid.message).toContain('name, namespace, age');
    expect(invalid.details).toEqual({ param: 'sort', allowed: keys });
  });

  it('refuses a repeated sort even when both values are allowed', () => {
    // Act
    const error = caught(() => parseSort({ sort: ['name', 'age'] }, keys));

    // Assess
    expect(error).toBeInstanceOf(InvalidParamError);
    expect((error as InvalidParamError).details).toEqual({
      param: 'sort',
      reason: 'repeated',
    });
  });
});

describe('parsePaging', () => {
  it('defaults to page 1 of 50', () => {
    // Act & Assess
    expect(parsePaging({})).toEqual({ page: 1, perPage: 50, offset: 0 });
  });

  it('computes the offset', () => {
    // Act & Assess
    expect(parsePaging({ page: '3', per_page: '20' })).toEqual({
      page: 3,
      perPage: 20,
      offset: 40,
    });
  });

  it('clamps per_page to the maximum, however large', () => {
    // Act & Assess
    expect(parsePaging({ per_page: '100000' }).perPage).toBe(MAX_PER_PAGE);
    expect(parsePaging({ per_page: '99999999999999999999' }).perPage).toBe(
      MAX_PER_PAGE,
    );
  });

  it('takes an empty page or per_page as the default', () => {
    // Act & Assess
    expect(parsePaging({ page: '', per_page: '' })).toEqual({
      page: 1,
      perPage: 50,
      offset: 0,
    });
  });

  it.each([
    { page: '0' },
    { page: '-1' },
    { page: '1.5' },
    { page: 'abc' },
    { page: ' 2' },
    { page: '1000001' },
    { per_page: '0' },
    { per_page: '1e3' },
    { page: ['1', '2'] },
  ])('refuses %j as bad_request', (params) => {
    // Act
    const error = caught(() => parsePaging(params));

    // Assess
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).not.toBeInstanceOf(InvalidParamError);
    expect((error as ValidationError).code).toBe('bad_request');
    expect((error as ValidationError).details?.param).toBe(
      Object.keys(params)[0],
    );
  });
});

describe('filter rules', () => {
  it('accepts a DNS-1123 label as a namespace and refuses anything else', () => {
    // Act & Assess
    expect(dnsLabel('kube-system', 'namespace')).toBe('kube-system');
    expect(() => dnsLabel('Kube', 'namespace')).toThrow(ValidationError);
    expect(() => dnsLabel('a'.repeat(64), 'namespace')).toThrow(/DNS-1123/);
  });

  it('accepts a kind name and refuses anything else', () => {
    // Act & Assess
    expect(kindName('StatefulSet', 'kind')).toBe('StatefulSet');
    expect(() => kindName('statefulset', 'kind')).toThrow(ValidationError);
  });

  it('accepts only the listed values', () => {
    // Prepare
    const phase = oneOf(['Running', 'Pending']);

    // Act & Assess
    expect(phase('Running', 'phase')).toBe('Running');
    expect(() => phase('running', 'phase')).toThrow(
      'phase must be one of Running, Pending',
    );
  });

  it('refuses a repeated filter as bad_request', () => {
    // Act
    const error = caught(() =>
      readParam({ namespace: ['a', 'b'] }, 'namespace'),
    );

    // Assess
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).code).toBe('bad_request');
  });

  it('refuses a filter from invalid UTF-8 as bad_request, saying so', () => {
    // Act
    const error = caught(() =>
      readParam(parseQueryString('namespace=web%FF'), 'namespace'),
    );

    // Assess
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe(
      'namespace is not valid UTF-8',
    );
    expect((error as ValidationError).details).toEqual({
      param: 'namespace',
      reason: 'invalid_utf8',
    });
  });
});

describe('isUuid', () => {
  it('tells a UUID from anything else', () => {
    // Act & Assess
    expect(isUuid('0b9f3c1e-3d7a-4f0e-9a51-2f6c8d1e4b7a')).toBe(true);
    expect(isUuid('not-a-uuid')).toBe(false);
    expect(isUuid("' or 1=1 --")).toBe(false);
  });
});
