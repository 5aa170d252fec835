/**
 * The local API server on a free port for a test file, with a throwaway JWT
 * key (a temporary DATA_DIR), a token minter and a small JSON GET client.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ApiServer,
  startApiServer,
} from '../../infra/local/api-server.ts';
import {
  loadLocalJwtKey,
  signLocalToken,
} from '../../shared/auth/local-jwt.ts';
import type { Db } from '../../shared/db/pool.ts';
import { ERROR_STATUS, type ErrorCode } from '../../shared/errors.ts';
import { errorCodesOf } from '../../shared/http/openapi.ts';
import { matchRoute } from '../../shared/http/route-match.ts';
import { resolvedRoutes } from '../../shared/http/routes.ts';
import type { TestDatabase } from './db.ts';

export interface TestApi {
  server: ApiServer;
  /** The DATA_DIR holding the server's JWT key. */
  dataDir: string;
  /** A valid token for `email` (the local server's key). */
  token(email: string, options?: { ttlSeconds?: number }): Promise<string>;
  /** A well-formed token signed by a key the server does not trust. */
  foreignToken(email: string): Promise<string>;
  get(path: string, token?: string): Promise<ApiResponse>;
  post(
    path: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  body: any;
  /** The body as received. */
  text: string;
  headers: Headers;
}

/**
 * Given a test database, every route runs as the API's login and the
 * webhook route as the receiver's (test/helpers/logins.ts), as in AWS; a
 * bare pool (a failure case) is used as it is.
 */
export async function startTestApi(
  database: TestDatabase | Db,
  options: { ready?: () => boolean } = {},
): Promise<TestApi> {
  const dataDir = await mkdtemp(join(tmpdir(), 'k8s-inventory-api-'));
  const foreignDir = await mkdtemp(join(tmpdir(), 'k8s-inventory-foreign-'));
  const pools =
    'as' in database
      ? { db: database.as('api').db, receiverDb: database.as('receiver').db }
      : { db: database };
  const server = await startApiServer({
    port: 0,
    ...pools,
    dataDir,
    ...options,
  });
  const foreignKey = await loadLocalJwtKey(foreignDir);
  async function send(
    method: 'GET' | 'POST',
    path: string,
    init: { headers: Record<string, string>; body?: string },
  ): Promise<ApiResponse> {
    const response = await fetch(`${server.url}${path}`, { method, ...init });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: kept as text for the assertion to show.
    }
    expectDocumentedError(method, path, response.status, body);
    return { status: response.status, body, text, headers: response.headers };
  }
  return {
    server,
    dataDir,
    token: (email, tokenOptions = {}) =>
      signLocalToken(server.jwtKey, {
        email,
        sub: `test:${email}`,
        ttlSeconds: tokenOptions.ttlSeconds ?? 600,
      }),
    foreignToken: (email) =>
      signLocalToken(foreignKey, {
        email,
        sub: `test:${email}`,
        ttlSeconds: 600,
      }),
    get: (path, token) =>
      send('GET', path, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      }),
    post: (path, body, headers) => send('POST', path, { headers, body }),
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
      await rm(foreignDir, { recursive: true, force: true });
    },
  };
}

/** Every route with its query loaded, for the error codes it documents. */
const RESOLVED = new Map((await resolvedRoutes()).map((r) => [r.name, r]));

/**
 * An error answer must be one its route documents (the OpenAPI document is
 * generated from the same list), with the status that code comes with: so
 * every test that provokes an error also checks the document.
 */
export function expectDocumentedError(
  method: string,
  path: string,
  status: number,
  body: unknown,
): void {
  if (status < 400) return;
  const match = matchRoute(method, new URL(path, 'http://x').pathname);
  if (!match) return;
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  const documented: readonly string[] = errorCodesOf(
    RESOLVED.get(match.route.name)!,
  );
  if (typeof code !== 'string' || !documented.includes(code)) {
    throw new Error(
      `${method} ${match.route.name} answered ${status} ${String(code)}, which its route does not document (${documented.join(', ')})`,
    );
  }
  if (ERROR_STATUS[code as ErrorCode] !== status) {
    throw new Error(
      `${method} ${match.route.name} answered ${code} with ${status}; the code comes with ${ERROR_STATUS[code as ErrorCode]}`,
    );
  }
}
