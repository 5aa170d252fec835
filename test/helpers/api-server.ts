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

export interface TestApi {
  server: ApiServer;
  /** The DATA_DIR holding the server's JWT key. */
  dataDir: string;
  /** A valid token for `email` (the local server's key). */
  token(email: string, options?: { ttlSeconds?: number }): Promise<string>;
  /** A well-formed token signed by a key the server does not trust. */
  foreignToken(email: string): Promise<string>;
  get(path: string, token?: string): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  body: any;
  headers: Headers;
}

export async function startTestApi(
  db: Db,
  options: { ready?: () => boolean } = {},
): Promise<TestApi> {
  const dataDir = await mkdtemp(join(tmpdir(), 'k8s-inventory-api-'));
  const foreignDir = await mkdtemp(join(tmpdir(), 'k8s-inventory-foreign-'));
  const server = await startApiServer({ port: 0, db, dataDir, ...options });
  const foreignKey = await loadLocalJwtKey(foreignDir);
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
    async get(path, token) {
      const response = await fetch(`${server.url}${path}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: kept as text for the assertion to show.
      }
      return { status: response.status, body, headers: response.headers };
    },
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
      await rm(foreignDir, { recursive: true, force: true });
    },
  };
}
