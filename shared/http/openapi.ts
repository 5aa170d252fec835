/**
 * The OpenAPI 3.1 document of the API, generated from the route table and
 * its zod query schemas (zod 4 writes each parameter's JSON Schema), so it
 * can never list a route, a parameter or a permission the code does not.
 * `npm run openapi` writes it to docs/openapi.json (a test compares the
 * two); `GET /api/v1/openapi.json` serves it without auth.
 *
 * Permissions and access shapes are extensions (`x-permissions`,
 * `x-access`); the error codes a route can answer are listed per status.
 */
import * as z from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../errors.ts';
import { ERROR_DESCRIPTIONS } from './error-codes.ts';
import { parametersOf, type RouteQuery } from './query.ts';
import {
  permissionsOf,
  type ResolvedRoute,
  type RouteAccess,
  resolvedRoutes,
} from './routes.ts';

export const OPENAPI_TITLE = 'Kubernetes inventory API';

/** The error codes a route can answer, from its access and its query. */
export function errorCodesOf(route: ResolvedRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>([
    route.query.unknownParam,
    ...(route.failures ?? []),
  ]);
  if (route.rateLimit) codes.add('rate_limited');
  const names = Object.keys(parametersOf(route.query.schema).shape);
  for (const name of names) {
    codes.add(
      route.query.invalidParam?.includes(name)
        ? 'invalid_param'
        : 'bad_request',
    );
  }
  if (route.access.shape !== 'public') {
    codes.add('unauthorized');
    codes.add('forbidden');
  }
  if (
    route.access.shape === 'cluster' ||
    route.access.shape === 'client-clusters' ||
    route.access.shape === 'environment-clusters' ||
    /\{\w+\}/.test(route.path)
  ) {
    codes.add('not_found');
  }
  codes.add('internal_error');
  return [...codes].sort();
}

function accessDescription(access: RouteAccess): string {
  switch (access.shape) {
    case 'public':
      return access.authenticatedBy === 'nothing'
        ? 'Public: no token.'
        : `No JWT: authenticated by the ${access.authenticatedBy}.`;
    case 'cluster':
      return 'sources' in access
        ? `Requires any of ${permissionsOf(access).join(', ')} on the cluster's environment; each source (${Object.entries(
            access.sources,
          )
            .map(([source, permission]) => `${source}: ${permission}`)
            .join(
              ', ',
            )}) is read only with its permission. A cluster outside the caller's environments is 404.`
        : `Requires ${access.permission} on the cluster's environment; a cluster outside the caller's environments is 404.`;
    case 'clusters':
    case 'environment-clusters':
      return `Lists what the caller's ${access.permission} grants cover.`;
    case 'client-clusters':
      return `Requires ${access.permission} somewhere in the client; lists what it covers there.`;
    case 'gate':
      return `Requires ${access.permission} in some scope; lists what it covers.`;
  }
}

function queryParameters(query: RouteQuery) {
  const shape = parametersOf(query.schema).shape;
  const requiredInHandler = query.requiredInHandler ?? [];
  for (const name of requiredInHandler) {
    if (!Object.hasOwn(shape, name)) {
      throw new Error(`requiredInHandler names ${name}, not a parameter`);
    }
  }
  return Object.entries(shape).map(([name, field]) => ({
    name,
    in: 'query',
    required:
      requiredInHandler.includes(name) ||
      !(field as z.ZodType).safeParse(undefined).success,
    schema: parameterSchema(field as z.ZodType),
  }));
}

function parameterSchema(field: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(field, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return schema;
}

function pathParameters(path: string) {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
}

function operation(route: ResolvedRoute) {
  const errors = errorCodesOf(route);
  const statuses = [...new Set(errors.map((code) => ERROR_STATUS[code]))];
  const permissions = permissionsOf(route.access);
  return {
    operationId: route.name,
    summary: route.summary,
    description: accessDescription(route.access),
    security: route.access.shape === 'public' ? [] : [{ bearerAuth: [] }],
    'x-access': route.access,
    'x-permissions': permissions,
    'x-unknown-parameter-code': route.query.unknownParam,
    parameters: [
      ...pathParameters(route.path),
      ...queryParameters(route.query),
    ],
    responses: {
      200: {
        description: 'OK',
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/Success' },
          },
        },
      },
      ...Object.fromEntries(
        statuses.map((status) => {
          const codes = errors.filter((code) => ERROR_STATUS[code] === status);
          return [
            status,
            {
              description: `${ERROR_DESCRIPTIONS[status]}: ${codes.join(', ')}`,
              'x-error-codes': codes,
              content: {
                'application/json': {
                  schema: {
                    allOf: [
                      { $ref: '#/components/schemas/Error' },
                      {
                        properties: {
                          error: { properties: { code: { enum: codes } } },
                        },
                      },
                    ],
                  },
                },
              },
            },
          ];
        }),
      ),
    },
  };
}

/**
 * The document for `table` (the route table unless given): every route's
 * query is loaded, and with it every domain's code.
 */
export async function openApiDocument(
  table?: readonly ResolvedRoute[],
): Promise<Record<string, unknown>> {
  table ??= await resolvedRoutes();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of table) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] =
      operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: OPENAPI_TITLE,
      version: '1',
      description:
        'Read-only inventory of Kubernetes clusters, scoped by client and environment grants. Generated from shared/http/routes.ts.',
    },
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
      schemas: {
        Success: {
          type: 'object',
          required: ['data'],
          properties: { data: {}, meta: { type: 'object' } },
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
                message: { type: 'string' },
                details: { type: 'object' },
              },
            },
          },
        },
      },
    },
  };
}

/** The document as docs/openapi.json holds it. */
export async function openApiText(): Promise<string> {
  return `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
}
