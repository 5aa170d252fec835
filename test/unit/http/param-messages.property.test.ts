/**
 * No 400 quotes what the caller sent: on every route, a refused parameter's
 * message (and details) names the parameter and the rule, never the value,
 * whatever the value holds (an RTL override, a NUL, SQL, a label selector
 * whose key or value is the bad part), and an unknown parameter is named
 * only when its name is a plain identifier.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/errors.ts';
import { parametersOf, readRouteQuery } from '../../../shared/http/query.ts';
import { resolvedRoutes } from '../../../shared/http/routes.ts';

const routes = await resolvedRoutes();

/** Text no rule's message contains: found in a message, it was quoted. */
const MARK = 'Qz7Wx';

const HOSTILE = [
  '\u202E',
  '\u0000',
  "'; select pg_sleep(10)--",
  '=',
  ',',
  '/',
  '-',
  '.',
  ' ',
  '%',
  '\uFFFD',
];

/** Any text with the mark inside, hostile pieces likely. */
const marked = fc
  .tuple(
    fc.array(
      fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom(...HOSTILE)),
      {
        maxLength: 4,
      },
    ),
    fc.array(
      fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom(...HOSTILE)),
      {
        maxLength: 4,
      },
    ),
  )
  .map(([before, after]) => `${before.join('')}${MARK}${after.join('')}`);

/** A label selector whose terms carry the mark in a key or a value. */
const markedSelector = fc
  .tuple(
    fc.constantFrom('app=web', 'tier', 'example.com/team=a'),
    marked,
    fc.boolean(),
  )
  .map(([good, bad, inKey]) =>
    inKey ? `${good},${bad}=v` : `${good},k=${bad}`,
  );

const PARAMETERS = routes.flatMap((route) =>
  Object.keys(parametersOf(route.query.schema).shape).map((name) => ({
    route,
    name,
  })),
);

/** The refusal of `raw` on `route`, or undefined when it was accepted. */
function refusal(
  route: (typeof routes)[number],
  raw: string,
): ValidationError | undefined {
  try {
    readRouteQuery(raw, route.query);
    return undefined;
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
}

function expectNotQuoted(error: ValidationError | undefined, value: string) {
  if (error === undefined) return;
  const said = `${error.message} ${JSON.stringify(error.details ?? {})}`;
  expect(said).not.toContain(MARK);
  expect(said).not.toContain(value);
}

describe('parameter error messages', () => {
  it('never quote the value of a known parameter, on any route', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PARAMETERS),
        fc.oneof(marked, markedSelector),
        ({ route, name }, value) => {
          // Act
          const error = refusal(
            route,
            new URLSearchParams([[name, value]]).toString(),
          );

          // Assess
          expectNotQuoted(error, value);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('refuse a bad labels term by its position, not its text', () => {
    // Prepare
    const route = routes.find((r) => r.name === 'list-pods');
    if (!route) throw new Error('list-pods is not in the route table');
    const value = `app=web,\u202E${MARK}\u0000'; select pg_sleep(10)--=x`;

    // Act
    const error = refusal(
      route,
      new URLSearchParams({ labels: value }).toString(),
    );

    // Assess
    expect(error?.message).toBe(
      'labels: term 2 has no label key ([prefix/]name, the name at most 63 letters, digits, -, _ or .)',
    );
    expectNotQuoted(error, value);
  });

  it('name an unknown parameter only when its name is a plain identifier', () => {
    fc.assert(
      fc.property(fc.constantFrom(...routes), marked, (route, name) => {
        // Act
        const error = refusal(
          route,
          new URLSearchParams([[`${name}\u202E`, '1']]).toString(),
        );

        // Assess: refused (no route knows that name), without the name.
        expect(error).toBeDefined();
        expectNotQuoted(error, name);
      }),
      { numRuns: 500 },
    );
    const plain = refusal(
      routes.find((r) => r.name === 'list-clusters') ?? routes[0]!,
      'step=1',
    );
    expect(plain?.message).toBe('unknown query parameter step');
  });
});
