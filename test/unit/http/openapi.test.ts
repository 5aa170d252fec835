import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { apiReferenceText } from '../../../shared/http/api-reference.ts';
import {
  errorCodesOf,
  openApiDocument,
  openApiText,
} from '../../../shared/http/openapi.ts';
import { parametersOf } from '../../../shared/http/query.ts';
import {
  permissionsOf,
  type ResolvedRoute,
  resolvedRoutes,
} from '../../../shared/http/routes.ts';

const table: readonly ResolvedRoute[] = await resolvedRoutes();

interface Operation {
  operationId: string;
  security: unknown[];
  'x-permissions': string[];
  parameters: { name: string; in: string; required: boolean }[];
  responses: Record<string, { 'x-error-codes'?: string[] }>;
}

function operationOf(
  document: Record<string, unknown>,
  route: ResolvedRoute,
): Operation | undefined {
  const paths = document.paths as Record<string, Record<string, Operation>>;
  return paths[route.path]?.[route.method.toLowerCase()];
}

describe('the OpenAPI document', () => {
  it('is what docs/openapi.json holds', async () => {
    // Act
    const committed = readFileSync(
      new URL('../../../docs/openapi.json', import.meta.url),
      'utf8',
    );

    // Assess
    expect(
      committed === (await openApiText()),
      'docs/openapi.json is stale: run `npm run openapi` and commit it',
    ).toBe(true);
  });

  it('is rendered as docs/api.md, the reference the README links', async () => {
    // Act
    const committed = readFileSync(
      new URL('../../../docs/api.md', import.meta.url),
      'utf8',
    );

    // Assess
    expect(
      committed === (await apiReferenceText()),
      'docs/api.md is stale: run `npm run openapi` and commit it',
    ).toBe(true);
    for (const route of table) {
      expect(committed).toContain(`### ${route.method} \`${route.path}\``);
    }
  });

  it('says the rule of every query parameter, as its 400 says it', async () => {
    // Act
    const document = await openApiDocument();
    const undocumented = table.flatMap((route) =>
      (operationOf(document, route)?.parameters ?? [])
        .filter((parameter) => parameter.in === 'query')
        .filter((parameter) => {
          const schema = (parameter as { schema?: Record<string, unknown> })
            .schema;
          return (
            typeof schema?.description !== 'string' &&
            schema?.enum === undefined &&
            schema?.const === undefined
          );
        })
        .map((parameter) => `${route.name}: ${parameter.name}`),
    );

    // Assess
    expect(undocumented).toEqual([]);
    const pods = operationOf(
      document,
      table.find((route) => route.name === 'list-pods') as ResolvedRoute,
    ) as unknown as {
      parameters: { name: string; schema: { description?: string } }[];
    };
    const rules = Object.fromEntries(
      pods.parameters.map((p) => [p.name, p.schema.description]),
    );
    expect(rules.sort).toContain('one of name, namespace, phase');
    expect(rules.per_page).toBe(
      'a positive integer; above 500 reads as 500 (meta.per_page says so); 50 when absent or empty',
    );
    expect(rules.namespace).toBe('a DNS-1123 label; empty is none');
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    // Prepare
    const validator = new Validator();

    // Act
    const result = await validator.validate(await openApiDocument());

    // Assess
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has every route with its parameters, permissions and error codes', async () => {
    // Prepare
    const document = await openApiDocument();

    // Assess
    for (const route of table) {
      const operation = operationOf(document, route);
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation?.operationId).toBe(route.name);
      expect(operation?.['x-permissions']).toEqual(permissionsOf(route.access));
      expect(operation?.security).toEqual(
        route.access.shape === 'public' ? [] : [{ bearerAuth: [] }],
      );
      const query = Object.keys(parametersOf(route.query.schema).shape);
      const path = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(
        operation?.parameters
          .filter((p) => p.in === 'query')
          .map((p) => p.name),
      ).toEqual(query);
      expect(
        operation?.parameters.filter((p) => p.in === 'path').map((p) => p.name),
      ).toEqual(path);
      const codes = Object.values(operation?.responses ?? {}).flatMap(
        (response) => response['x-error-codes'] ?? [],
      );
      expect(codes.sort()).toEqual(errorCodesOf(route));
      expect(codes).toContain(route.query.unknownParam);
    }
  });

  it('names the inventory lists q and sort errors invalid_param and the clusters list errors bad_request', () => {
    // Prepare
    const byName = (name: string) => {
      const route = table.find((r) => r.name === name);
      if (!route) throw new Error(name);
      return errorCodesOf(route);
    };

    // Assess
    expect(byName('list-pods')).toEqual(
      expect.arrayContaining(['invalid_param', 'bad_request', 'not_found']),
    );
    expect(byName('list-clusters')).not.toContain('invalid_param');
    expect(byName('get-openapi')).not.toContain('unauthorized');
  });

  it("lists the spec's agent, store, budget and body errors on the routes that answer them, each under its status", async () => {
    // Prepare
    const document = await openApiDocument();
    const responsesOf = (name: string) => {
      const route = table.find((r) => r.name === name);
      if (!route) throw new Error(name);
      return operationOf(document, route)?.responses ?? {};
    };

    // Assess: the spec's live-read table, row by row.
    expect(responsesOf('get-live-logs')).toMatchObject({
      409: { 'x-error-codes': ['agent_offline', 'agent_too_old', 'no_agent'] },
      429: { 'x-error-codes': ['rate_limited'] },
      502: { 'x-error-codes': ['agent_error', 'agent_unreachable'] },
      503: { 'x-error-codes': ['audit_unavailable', 'live_unavailable'] },
      504: { 'x-error-codes': ['agent_timeout'] },
    });
    expect(responsesOf('get-cluster-metrics')).toMatchObject({
      502: { 'x-error-codes': ['bad_gateway'] },
      503: { 'x-error-codes': ['metrics_not_configured'] },
    });
    expect(responsesOf('list-cluster-event-timeline')).toMatchObject({
      429: { 'x-error-codes': ['rate_limited'] },
      502: { 'x-error-codes': ['events_backend_unavailable'] },
      504: { 'x-error-codes': ['events_backend_timeout'] },
    });
    expect(Object.keys(responsesOf('receive-webhook')).sort()).toEqual(
      ['200', '400', '401', '404', '413', '415', '422', '500'].sort(),
    );
    expect(Object.keys(responsesOf('list-pods'))).not.toContain('429');
  });
});
