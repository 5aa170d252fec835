import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SqlParams } from '../../../shared/db/params.ts';
import { InvalidPqlError } from '../../../shared/errors.ts';
import { globToLike, matchingHosts } from '../../../shared/pql/compile.ts';
import {
  MAX_PQL_CHARS,
  MAX_PQL_DEPTH,
  PQL_FIELDS,
  parsePql,
} from '../../../shared/pql/parse.ts';

function refusal(text: string): InvalidPqlError {
  try {
    parsePql(text);
  } catch (error) {
    if (error instanceof InvalidPqlError) return error;
    throw error;
  }
  throw new Error('parsed');
}

describe('parsePql', () => {
  it('parses the spec examples as written', () => {
    // Act & Assess
    expect(
      parsePql('cluster.name = "k8s-prod-01" AND host.os = "Ubuntu"'),
    ).toEqual({
      type: 'and',
      operands: [
        {
          type: 'compare',
          field: 'cluster.name',
          op: '=',
          value: 'k8s-prod-01',
        },
        { type: 'compare', field: 'host.os', op: '=', value: 'Ubuntu' },
      ],
    });
    expect(parsePql('cluster.version ~ "v1.29*"')).toEqual({
      type: 'compare',
      field: 'cluster.version',
      op: '~',
      value: 'v1.29*',
    });
  });

  it('binds NOT tightest, then AND, then OR, with case-insensitive keywords', () => {
    // Act
    const tree = parsePql(
      'not host.os = "a" and host.ip != "b" Or (host.hostname ~ "c")',
    );

    // Assess
    expect(tree).toEqual({
      type: 'or',
      operands: [
        {
          type: 'and',
          operands: [
            {
              type: 'not',
              operand: {
                type: 'compare',
                field: 'host.os',
                op: '=',
                value: 'a',
              },
            },
            { type: 'compare', field: 'host.ip', op: '!=', value: 'b' },
          ],
        },
        { type: 'compare', field: 'host.hostname', op: '~', value: 'c' },
      ],
    });
  });

  it('reads \\" and \\\\ escapes inside values', () => {
    // Act & Assess
    expect(parsePql('host.os = "a \\"b\\" \\\\c"')).toMatchObject({
      value: 'a "b" \\c',
    });
  });

  it.each([
    ['', 1, 'field'],
    ['host.os', 8, '=, != or ~'],
    ['host.os =', 10, 'value'],
    ['host.os = Ubuntu', 11, 'value'],
    ['host.os = "Ubuntu', 11, '"'],
    ['host.os = "a\\nb"', 13, '\\" or \\\\'],
    ['host.colour = "red"', 1, 'field'],
    ['(host.os = "a"', 15, '")"'],
    ['host.os = "a")', 14, 'AND, OR or end'],
    ['host.os = "a" host.ip = "b"', 15, 'AND, OR or end'],
    ['host.os = "a" AND', 18, 'field'],
    [
      'host.os = "a" & host.ip = "b"',
      15,
      'a field, a keyword, an operator, a value or a parenthesis',
    ],
    ['AND = "a"', 1, 'field'],
  ])('refuses %j at position %i, expecting %s', (text, position, expected) => {
    // Act
    const error = refusal(text);

    // Assess
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_pql');
    expect(error.details).toEqual({ param: 'pql', position, expected });
    expect(error.message).toContain(`at position ${position}`);
  });

  it('names the known fields when a field is unknown, without echoing it', () => {
    // Act
    const error = refusal('host.secretive = "x"');

    // Assess
    expect(error.message).not.toContain('secretive');
    for (const field of PQL_FIELDS) expect(error.message).toContain(field);
  });

  it('refuses more than 1,000 characters and more than 20 levels of nesting', () => {
    // Prepare
    const long = `host.os = "${'a'.repeat(MAX_PQL_CHARS)}"`;
    const deep = `${'('.repeat(MAX_PQL_DEPTH + 1)}host.os = "a"${')'.repeat(MAX_PQL_DEPTH + 1)}`;
    const deepNot = `${'NOT '.repeat(MAX_PQL_DEPTH + 1)}host.os = "a"`;
    const deepest = `${'('.repeat(MAX_PQL_DEPTH)}host.os = "a"${')'.repeat(MAX_PQL_DEPTH)}`;

    // Act & Assess
    expect(refusal(long).message).toContain('longer than 1000 characters');
    expect(refusal(deep).details).toMatchObject({
      position: MAX_PQL_DEPTH + 1,
    });
    expect(refusal(deepNot).message).toContain('nesting deeper than 20');
    expect(() => parsePql(deepest)).not.toThrow();
  });

  it('only ever answers a tree or invalid_pql, whatever the input', () => {
    // Prepare
    const pieces = fc.constantFrom(
      ...PQL_FIELDS,
      'AND',
      'or',
      'NOT',
      '(',
      ')',
      '=',
      '!=',
      '~',
      '!',
      '"',
      '\\',
      '"v"',
      '"a\\"b"',
      ' ',
      "'; drop table hosts; --",
      '$1',
      '\u0000',
      '\uD800',
      'host.',
      '.os',
    );
    const hostile = fc.oneof(
      fc.string({ maxLength: 1200 }),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.array(pieces, { maxLength: 400 }).map((p) => p.join(' ')),
      fc.array(pieces, { maxLength: 400 }).map((p) => p.join('')),
    );

    // Act & Assess
    fc.assert(
      fc.property(hostile, (text) => {
        try {
          const tree = parsePql(text);
          const params = new SqlParams();
          const sql = matchingHosts(tree, params, 'true').statement;
          // Every value is a parameter: no quote from the input reaches the text.
          expect(sql).not.toMatch(/'(?!\{\}|\[\])/);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidPqlError);
          expect((error as InvalidPqlError).code).toBe('invalid_pql');
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('matchingHosts', () => {
  it('binds every value as a parameter and reads pairs only for cluster fields', () => {
    // Prepare
    const params = new SqlParams();

    // Act
    const hostOnly = matchingHosts(
      parsePql('host.os ~ "Ubuntu*"'),
      params,
      'true',
    ).statement;
    const withCluster = matchingHosts(
      parsePql('cluster.name = "x\'; --" AND host.os = "Ubuntu"'),
      params,
      'true',
    ).statement;

    // Assess
    expect(hostOnly).toContain('from hosts h');
    expect(hostOnly).toContain('coalesce(h.os ilike $1, false)');
    expect(hostOnly).not.toContain('k8s_nodes');
    expect(withCluster).toContain('from k8s_nodes pn');
    expect(withCluster).not.toContain("x'");
    expect(params.values).toEqual(['Ubuntu%', "x'; --", 'Ubuntu']);
  });

  it('turns a glob into an ILIKE pattern with every other character literal', () => {
    // Act & Assess
    expect(globToLike('v1.29*')).toBe('v1.29%');
    expect(globToLike('a?b')).toBe('a_b');
    expect(globToLike('50%_off\\')).toBe('50\\%\\_off\\\\');
  });
});
