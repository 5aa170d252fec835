/**
 * Fuzzing every API route from the route table, through the local server
 * against real PostgreSQL: generated path ids (the world's own, unknown
 * UUIDs, hostile text) and generated query strings (each route's own
 * parameter names with hostile values, unknown names, repeats). Whatever
 * comes in, the answer is never a 500, and no body carries SQL, a stack or
 * a server path. Bearer tokens are fuzzed too: alg none, a foreign key,
 * expired, another audience or issuer, a future nbf, garbage: always 401,
 * with one body.
 *
 * The runs use a fixed seed (FUZZ_SEED overrides it) so a failure repeats.
 */
import fc from 'fast-check';
import { base64url, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signLocalToken } from '../../../shared/auth/local-jwt.ts';
import {
  type ResolvedRoute,
  resolvedRoutes,
} from '../../../shared/http/routes.ts';
import { setMetricsStore } from '../../../shared/metrics/context.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import {
  buildWorld,
  callerEmail,
  pathValuesOf,
  type World,
} from '../../helpers/api-world.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 40);

/** What a body may never show: SQL, a stack frame, a source path. */
const LEAKS = [
  /\b(select|insert|update|delete)\b[^"]{0,200}\b(from|into|set)\b/i,
  /\n\s+at\s/,
  /\.ts:\d+/,
  /node_modules/,
  /\bpg_|\bSQLSTATE\b|duplicate key|violates/i,
];

const hostile = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    "'; drop table clusters; --",
    '"}',
    '\\',
    '%',
    '%00',
    '..',
    '../..',
    '0',
    '-1',
    '1e309',
    'NaN',
    'null',
    'true',
    '[]',
    '{}',
    'a'.repeat(5000),
    '\u0000',
    '\ud800',
    '2026-02-30T00:00:00Z',
    '9999-12-31T23:59:59Z',
    'app=api,app',
    'a=b=c',
    '*',
  ),
);

/**
 * Percent-encoded as a client would send it. A lone surrogate cannot be
 * UTF-8: it goes as the bytes of an encoded surrogate (invalid UTF-8), the
 * closest a client can come to sending one.
 */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    const wellFormed = text.replace(
      /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      '\ufffd',
    );
    return encodeURIComponent(wellFormed).replaceAll('%EF%BF%BD', '%ED%A0%80');
  }
}

/** Raw percent-escapes that are not UTF-8 at all, sent as they are. */
const INVALID_ESCAPES = ['%FF', '%C0%AF', '%ED%A0%80', '%E0%80', '%', '%zz'];

const routes = await resolvedRoutes();

const pathNames = (route: ResolvedRoute) =>
  [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);

/** The route's own parameter names, as its schema declares them. */
function parameterNames(route: ResolvedRoute): string[] {
  const schema = route.query.schema as unknown as {
    shape?: Record<string, unknown>;
  };
  return Object.keys(schema.shape ?? {});
}

describe('fuzzing the API routes', () => {
  let database: TestDatabase;
  let api: TestApi;
  let world: World;
  let admin: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    world = await buildWorld(database.db);
    setMetricsStore(undefined);
    api = await startTestApi(database);
    admin = await api.token(callerEmail('client-wide', 'super_admin'));
  });
  afterAll(async () => {
    setMetricsStore('reset');
    await api?.close();
    await database?.drop();
  });

  const known = () => pathValuesOf(world.target);

  function expectNoLeak(route: string, status: number, text: string) {
    expect(status, `${route}: ${text.slice(0, 300)}`).not.toBe(500);
    expect(status, route).toBeLessThan(600);
    for (const leak of LEAKS) {
      expect(text, `${route} leaks ${leak}`).not.toMatch(leak);
    }
  }

  for (const route of routes.filter((r) => r.method === 'GET')) {
    it(`${route.name}: any path id and any query string answer without a 500 or a leak`, async () => {
      const names = pathNames(route);
      const own = parameterNames(route);
      const pathValue = (name: string) =>
        fc.oneof(fc.constant(known()[name] ?? 'x'), fc.uuid(), hostile);
      const param = fc.tuple(
        own.length > 0
          ? fc.oneof(fc.constantFrom(...own), fc.string({ maxLength: 12 }))
          : fc.string({ maxLength: 12 }),
        hostile,
      );
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(...names.map(pathValue)),
          fc.array(param, { maxLength: 4 }),
          fc.option(fc.constantFrom(...INVALID_ESCAPES), { nil: undefined }),
          async (ids, params, raw) => {
            let i = 0;
            const path = route.path.replace(/\{(\w+)\}/g, () =>
              encode(ids[i++] as string),
            );
            const search = [
              ...params.map(([k, v]) => `${encode(k)}=${encode(v)}`),
              ...(raw === undefined ? [] : [`${own[0] ?? 'q'}=${raw}`]),
            ].join('&');
            // api.get also checks that an error is one the route documents.
            const response = await api.get(
              `${path}${search ? `?${search}` : ''}`,
              admin,
            );
            expectNoLeak(route.name, response.status, response.text);
          },
        ),
        { numRuns: RUNS_PER_ROUTE, seed: SEED },
      );
    });
  }

  it('answers 401 with one body to every bad bearer token', async () => {
    // Prepare: the server's own key, so only the flaw makes a token bad.
    const key = api.server.jwtKey;
    const now = Math.floor(Date.now() / 1000);
    const email = callerEmail('client-wide', 'super_admin');
    const signed = (
      claims: Record<string, unknown>,
      edit: (jwt: SignJWT) => SignJWT = (jwt) => jwt,
    ) =>
      edit(
        new SignJWT({ email, ...claims })
          .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
          .setSubject('fuzz')
          .setIssuer(key.issuer)
          .setAudience(key.audience)
          .setIssuedAt(now - 10)
          .setExpirationTime(now + 600),
      ).sign(key.privateKey);
    const unsigned = (header: Record<string, unknown>) => {
      const part = (value: unknown) =>
        base64url.encode(new TextEncoder().encode(JSON.stringify(value)));
      return `${part(header)}.${part({ email, sub: 'fuzz', iss: key.issuer, aud: key.audience, exp: now + 600 })}.`;
    };
    const flawed: Record<string, string> = {
      'alg none': unsigned({ alg: 'none', typ: 'JWT' }),
      'alg none, kid kept': unsigned({ alg: 'none', kid: key.kid }),
      'foreign key': await api.foreignToken(email),
      expired: await signed({}, (jwt) =>
        jwt.setIssuedAt(now - 7200).setExpirationTime(now - 3600),
      ),
      'wrong audience': await signed({}, (jwt) =>
        jwt.setAudience('someone-else'),
      ),
      'wrong issuer': await signed({}, (jwt) =>
        jwt.setIssuer('https://evil.example'),
      ),
      'future nbf': await signed({}, (jwt) => jwt.setNotBefore(now + 3600)),
      'no exp': await new SignJWT({ email })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid })
        .setSubject('fuzz')
        .setIssuer(key.issuer)
        .setAudience(key.audience)
        .sign(key.privateKey),
      'signature cut': (
        await signLocalToken(key, { email, sub: 'fuzz', ttlSeconds: 600 })
      ).slice(0, -4),
      garbage: 'not.a.token',
    };
    const path = `/api/v1/clusters/${world.target.id}`;

    // Act
    const answers = new Map<string, { status: number; body: string }>();
    for (const [flaw, token] of Object.entries(flawed)) {
      const response = await fetch(`${api.server.url}${path}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      answers.set(flaw, {
        status: response.status,
        body: await response.text(),
      });
    }
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), async (token) => {
        const response = await fetch(`${api.server.url}${path}`, {
          headers: { authorization: `Bearer ${token.replace(/[\r\n]/g, '')}` },
        });
        expect(response.status).toBe(401);
        await response.text();
      }),
      { numRuns: 100, seed: SEED },
    );

    // Assess
    const bodies = new Set([...answers.values()].map((a) => a.body));
    for (const [flaw, answer] of answers) {
      expect(answer.status, flaw).toBe(401);
    }
    expect(bodies.size).toBe(1);
  });
});
