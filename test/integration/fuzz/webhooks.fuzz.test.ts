/**
 * Fuzzing the webhook route with the bodies a broken or hostile sender
 * could post to an Argo CD and an Alertmanager source: arbitrary JSON, the
 * real payloads with fields deleted, retyped or replaced by hostile values,
 * and bytes that are not JSON at all. Each is stored (200) or refused with
 * 400, 413, 415 or 422; never a 500, never a body with SQL or a stack, and
 * a refused body stores nothing.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryOne } from '../../../shared/db/pool.ts';
import {
  addWebhookSource,
  type NewWebhookSource,
} from '../../../shared/webhooks/sources.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import { jsonPaths, withValueAt } from '../../helpers/json-paths.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

const ARGOCD = JSON.parse(
  readFileSync(
    new URL(
      '../../fixtures/webhooks/argocd-sync-succeeded.json',
      import.meta.url,
    ),
    'utf8',
  ),
) as Record<string, unknown>;
const ALERTMANAGER = (
  JSON.parse(
    readFileSync(
      new URL(
        '../../fixtures/alertmanager/alertmanager-v4-completed.json',
        import.meta.url,
      ),
      'utf8',
    ),
  ) as { body: Record<string, unknown> }
).body;

const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    null,
    '',
    'a'.repeat(100_000),
    '\u0000',
    "'; drop table change_events; --",
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    'not a time',
    -1,
    1e308,
    [],
    {},
  ),
);

function mutated(body: Record<string, unknown>): fc.Arbitrary<string> {
  const all = jsonPaths(body);
  return fc
    .tuple(fc.constantFrom(...all), hostileValue, fc.boolean())
    .map(([path, value, remove]) =>
      JSON.stringify(withValueAt(body, path, value, remove)),
    );
}

const anyBody = (real: Record<string, unknown>) =>
  fc.oneof(
    { weight: 3, arbitrary: mutated(real) },
    { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', '{', '[1,', '{"a":1}garbage', 'null'),
    },
  );

describe('fuzzing the webhook route', () => {
  let database: TestDatabase;
  let api: TestApi;
  let tenant: Tenant;
  const sources: Record<'argocd' | 'alertmanager', NewWebhookSource> =
    {} as never;

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startTestApi(database);
    tenant = await createTenant(database.db);
    for (const kind of ['argocd', 'alertmanager'] as const) {
      sources[kind] = await addWebhookSource(database.db, {
        clientSlug: tenant.clientSlug,
        kind,
      });
    }
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  const stored = async () =>
    queryOne<{ n: number }>(
      database.db,
      `select (select count(*) from change_events where client_id = $1)
            + (select count(*) from alert_groups where client_id = $1) as n`,
      [tenant.clientId],
    ).then((row) => Number(row.n));

  for (const [kind, real] of [
    ['argocd', ARGOCD],
    ['alertmanager', ALERTMANAGER],
  ] as const) {
    it(`${kind}: any body is stored or refused with a 4xx, and a refused one stores nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(anyBody(real), async (body) => {
          // Act
          const before = await stored();
          const source = sources[kind];
          const response = await fetch(
            `${api.server.url}/api/v1/webhooks/${source.id}`,
            {
              method: 'POST',
              headers: {
                authorization: `Bearer ${source.secret}`,
                'content-type': 'application/json',
              },
              body,
            },
          );
          const text = await response.text();
          const after = await stored();

          // Assess
          expect([200, 400, 413, 415, 422], text.slice(0, 300)).toContain(
            response.status,
          );
          expect(text).not.toMatch(
            /\n\s+at\s|\.ts:\d+|node_modules|duplicate key|violates/,
          );
          if (response.status !== 200) expect(after).toBe(before);
        }),
        { numRuns: RUNS, seed: SEED },
      );
    });
  }

  it('refuses a NUL or a lone surrogate in a stored field with 422 naming it, and ignores one in a dropped field', async () => {
    // Prepare
    const post = (body: unknown) =>
      fetch(`${api.server.url}/api/v1/webhooks/${sources.argocd.id}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${sources.argocd.secret}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      });
    const nul = withValueAt(
      ARGOCD,
      ['operation', 'resources', 1, 'status'],
      'a\u0000b',
      false,
    );
    const surrogate = withValueAt(ARGOCD, ['app'], 'shop-\ud800', false);
    const ignored = withValueAt(ARGOCD, ['not_a_field'], '\u0000', false);

    // Act
    const refusedNul = await post(nul);
    const refusedSurrogate = await post(surrogate);
    const accepted = await post(ignored);
    const messageOf = async (response: Response) =>
      ((await response.json()) as { error: { message: string } }).error.message;

    // Assess
    expect(refusedNul.status).toBe(422);
    expect(await messageOf(refusedNul)).toBe(
      'operation.resources.1.status: must not contain a NUL character',
    );
    expect(refusedSurrogate.status).toBe(422);
    expect(await messageOf(refusedSurrogate)).toContain('app:');
    expect(accepted.status).toBe(200);
  });
});
