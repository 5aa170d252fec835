/**
 * The local stack's HTTP front: what API Gateway's HTTP API (payload 2.0)
 * and its JWT authorizer do in AWS, on node:http. It matches each request
 * against the route table, verifies the bearer token against the local key
 * (shared/auth/local-jwt.ts), builds the same event a Lambda would get
 * (verified claims in `requestContext.authorizer.jwt.claims`) and calls the
 * route's `handler` from `functions/api/<name>.ts`.
 *
 * A request without a valid token still reaches the handler, without
 * claims: the handler's authenticate middleware answers 401, so the error
 * body comes from the one error mapping.
 */
import { randomUUID } from 'node:crypto';
import { access } from 'node:fs/promises';
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  APIGatewayProxyEventV2WithJWTAuthorizer,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import {
  type LocalJwtKey,
  loadLocalJwtKey,
  verifyLocalToken,
} from '../../shared/auth/local-jwt.ts';
import { getConfig } from '../../shared/config.ts';
import type { Db } from '../../shared/db/pool.ts';
import { setDb } from '../../shared/db/process-pool.ts';
import { toErrorResult } from '../../shared/http/error-middleware.ts';
import { errorResult, json } from '../../shared/http/response.ts';
import { matchRoute, type RouteMatch } from '../../shared/http/route-match.ts';
import { logger } from '../../shared/observability/logger.ts';
import { MAX_WEBHOOK_BODY_BYTES } from '../../shared/webhooks/receive.ts';
import {
  invoke,
  LOCAL_FUNCTION_NAMES,
  lambdaContext,
} from './lambda-context.ts';

/** API Gateway's HTTP API waits at most this long for a function. */
const API_TIMEOUT_MS = 30_000;

export interface ApiServerOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The pool every handler uses (the API's login)... */
  db: Db;
  /** ...but the webhook route's, when given (its own login). */
  receiverDb?: Db;
  /** Where the local JWT key lives (created on first start); default DATA_DIR. */
  dataDir?: string;
  /** `GET /healthz` answers 200 while this returns true, else 503. */
  ready?: () => boolean | Promise<boolean>;
}

export interface ApiServer {
  /** `http://host:port`, no trailing slash. */
  url: string;
  port: number;
  /** The key tokens must be signed with (tests sign their own). */
  jwtKey: LocalJwtKey;
  close(): Promise<void>;
}

type Handler = (
  event: APIGatewayProxyEventV2WithJWTAuthorizer,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2 | string | undefined>;

const FUNCTIONS_DIR = new URL('../../functions/api/', import.meta.url);

export async function startApiServer(
  options: ApiServerOptions,
): Promise<ApiServer> {
  const config = getConfig();
  const jwtKey = await loadLocalJwtKey(options.dataDir ?? config.DATA_DIR, {
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
  });
  const verifyBearer = tokenVerifier(jwtKey);
  setDb(options.db);
  // The webhook route's own login, as its Lambda has in AWS.
  if (options.receiverDb) setDb(options.receiverDb, 'receiver');
  const ready = options.ready ?? (() => true);
  const handlers = new Map<string, Promise<Handler | undefined>>();

  const loadHandler = (name: string): Promise<Handler | undefined> => {
    let handler = handlers.get(name);
    if (!handler) {
      handler = importHandler(name);
      handlers.set(name, handler);
    }
    return handler;
  };

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      write(res, toErrorResult(error));
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse) {
    const method = req.method ?? 'GET';
    // Only a POST route (a webhook) has a body; up to one byte past the
    // largest a route takes is kept, so the handler can refuse it.
    const body = method === 'POST' ? await readBody(req) : undefined;
    if (body === undefined) req.resume();
    // WHATWG URL parsing resolves `..` and `%2e%2e`, which would turn
    // `/healthz/../api/v1/clusters` into another route; API Gateway answers
    // such a path 404, and so does this server.
    if (hasDotSegment(req.url ?? '/')) {
      write(res, errorResult(404, 'not_found', 'no such route'));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/healthz' && method === 'GET') {
      const isReady = await Promise.resolve(ready()).catch(() => false);
      write(
        res,
        isReady
          ? json(200, { status: 'ok' })
          : json(503, { status: 'unavailable' }),
      );
      return;
    }
    const match = matchRoute(method, url.pathname);
    if (!match) {
      write(res, errorResult(404, 'not_found', 'no such route'));
      return;
    }
    // A caller that gives up before the answer: the handler still runs to
    // its end, as a Lambda behind API Gateway does; it is worth a debug line.
    res.once('close', () => {
      if (!res.writableFinished) {
        logger.debug('the caller disconnected before the answer', {
          route: match.route.name,
        });
      }
    });
    const handler = await loadHandler(match.route.name);
    if (!handler) {
      write(res, errorResult(501, 'not_implemented', 'route not implemented'));
      return;
    }
    // A public route has no JWT authorizer in AWS (a webhook's bearer is its
    // source's secret, not a token): nothing is verified, no claims.
    const claims =
      match.route.access.shape === 'public'
        ? undefined
        : await verifyBearer(req.headers.authorization);
    const event = toEvent(req, url, match, claims, body);
    const result = await invoke(
      handler,
      event,
      lambdaContext(LOCAL_FUNCTION_NAMES.api(match.route), {
        timeoutMs: API_TIMEOUT_MS,
      }),
    );
    write(res, normalize(result));
  }

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const address = server.address() as AddressInfo;
  const host =
    address.family === 'IPv6' ? `[${address.address}]` : address.address;
  logger.info('api server listening', { port: address.port });
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    jwtKey,
    close: () =>
      new Promise<void>((resolveClose, reject) => {
        server.close((error) => (error ? reject(error) : resolveClose()));
        server.closeAllConnections();
      }),
  };
}

async function importHandler(name: string): Promise<Handler | undefined> {
  const file = new URL(`${name}.ts`, FUNCTIONS_DIR);
  try {
    await access(file);
  } catch {
    return undefined;
  }
  const module = (await import(file.href)) as { handler?: Handler };
  if (typeof module.handler !== 'function') {
    throw new Error(`functions/api/${name}.ts exports no handler`);
  }
  return module.handler;
}

/** Verified tokens kept at most; past it the cache starts over. */
const VERIFIED_TOKENS_MAX = 10_000;

/**
 * Bearer token → verified claims; anything else → no claims. A caller sends
 * the same token with every request, and checking its signature costs more
 * than the rest of a small read, so verified tokens are kept by their text
 * until they expire: a token's claims cannot change, and its expiry is
 * checked again on every use.
 */
function tokenVerifier(key: LocalJwtKey) {
  const verified = new Map<string, Record<string, string>>();
  return async (
    authorization: string | undefined,
  ): Promise<Record<string, string> | undefined> => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    const token = match?.[1];
    if (!token) return undefined;
    const known = verified.get(token);
    if (known && Number(known.exp) * 1000 > Date.now()) return known;
    verified.delete(token);
    try {
      const claims = await verifyLocalToken(key, token);
      if (verified.size >= VERIFIED_TOKENS_MAX) verified.clear();
      verified.set(token, claims);
      return claims;
    } catch {
      return undefined;
    }
  };
}

/** A `.` or `..` segment in the raw path, percent-encoded or not. */
function hasDotSegment(rawUrl: string): boolean {
  const path = rawUrl.split(/[?#]/, 1)[0] ?? '';
  return path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}

/** The API Gateway HTTP API payload 2.0 event of a request. */
function toEvent(
  req: IncomingMessage,
  url: URL,
  match: RouteMatch,
  claims: Record<string, string> | undefined,
  body: Buffer | undefined,
): APIGatewayProxyEventV2WithJWTAuthorizer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value)
      ? value.join(',')
      : value;
  }
  const rawQueryString = url.search.startsWith('?') ? url.search.slice(1) : '';
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    // API Gateway joins a repeated parameter's values with commas.
    query[name] = name in query ? `${query[name]},${value}` : value;
  }
  const now = Date.now();
  const routeKey = `${match.route.method} ${match.route.path}`;
  const event = {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString,
    cookies: headers.cookie?.split(/;\s*/),
    headers,
    queryStringParameters: rawQueryString === '' ? undefined : query,
    pathParameters:
      Object.keys(match.pathParameters).length === 0
        ? undefined
        : match.pathParameters,
    ...(body === undefined
      ? { isBase64Encoded: false }
      : { body: body.toString('base64'), isBase64Encoded: true }),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: match.route.method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
      ...(claims && {
        authorizer: {
          principalId: '',
          integrationLatency: 0,
          jwt: { claims, scopes: [] },
        },
      }),
    },
  };
  return event as APIGatewayProxyEventV2WithJWTAuthorizer;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (size <= MAX_WEBHOOK_BODY_BYTES) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks);
}

/** A handler's result as API Gateway reads it (a bare value is JSON). */
function normalize(
  result: APIGatewayProxyStructuredResultV2 | string | undefined,
): APIGatewayProxyStructuredResultV2 {
  if (typeof result === 'string') {
    return {
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: result,
    };
  }
  if (result !== undefined && 'statusCode' in result) return result;
  return json(200, result ?? null);
}

function write(res: ServerResponse, result: APIGatewayProxyStructuredResultV2) {
  if (res.headersSent) return;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    headers[name] = String(value);
  }
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  const body =
    result.body === undefined
      ? ''
      : result.isBase64Encoded
        ? Buffer.from(result.body, 'base64')
        : result.body;
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(body);
}
