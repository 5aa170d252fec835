/**
 * Tokens for the local stack. In AWS the HTTP API's JWT authorizer verifies
 * tokens against the deploy's issuer; locally there is no authorizer, so the
 * local API server verifies them itself against an ES256 key pair generated
 * on first start and kept in `<DATA_DIR>/jwt-key.json` (mode 0600), and
 * `npm run token` signs with the same file.
 *
 * Issuer and audience default to LOCAL_JWT_ISSUER / LOCAL_JWT_AUDIENCE; the
 * JWT_ISSUER / JWT_AUDIENCE variables override both ends alike.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  type CryptoKey,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose';
import { UnauthorizedError } from '../errors.ts';

export const LOCAL_JWT_ISSUER = 'k8s-inventory-local';
export const LOCAL_JWT_AUDIENCE = 'k8s-inventory-api';
export const LOCAL_JWT_ALGORITHM = 'ES256';
export const LOCAL_JWT_KEY_FILE = 'jwt-key.json';

export interface LocalJwtKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  issuer: string;
  audience: string;
}

interface StoredKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

const loaded = new Map<string, Promise<LocalJwtKey>>();

/**
 * The local signing key under `dataDir`, created on first use. Two processes
 * starting together agree on one key: the file appears atomically (link of a
 * complete temporary file) and the loser reads the winner's.
 */
export function loadLocalJwtKey(
  dataDir: string,
  names: { issuer?: string | undefined; audience?: string | undefined } = {},
): Promise<LocalJwtKey> {
  const path = join(resolve(dataDir), LOCAL_JWT_KEY_FILE);
  const issuer = names.issuer ?? LOCAL_JWT_ISSUER;
  const audience = names.audience ?? LOCAL_JWT_AUDIENCE;
  const cacheKey = `${path}\n${issuer}\n${audience}`;
  let key = loaded.get(cacheKey);
  if (!key) {
    key = readOrCreate(path).then(async (stored) => ({
      kid: stored.kid,
      privateKey: (await importJWK(
        stored.privateJwk,
        LOCAL_JWT_ALGORITHM,
      )) as CryptoKey,
      publicKey: (await importJWK(
        stored.publicJwk,
        LOCAL_JWT_ALGORITHM,
      )) as CryptoKey,
      issuer,
      audience,
    }));
    key.catch(() => loaded.delete(cacheKey));
    loaded.set(cacheKey, key);
  }
  return key;
}

async function readOrCreate(path: string): Promise<StoredKey> {
  const existing = await readStored(path);
  if (existing) return existing;
  const pair = await generateKeyPair(LOCAL_JWT_ALGORITHM, {
    extractable: true,
  });
  const stored: StoredKey = {
    kid: randomUUID(),
    privateJwk: await exportJWK(pair.privateKey),
    publicJwk: await exportJWK(pair.publicKey),
  };
  await mkdir(resolve(path, '..'), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(temporary, JSON.stringify(stored), { mode: 0o600 });
  try {
    await link(temporary, path);
    return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const winner = await readStored(path);
    if (!winner) throw error;
    return winner;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

async function readStored(path: string): Promise<StoredKey | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as StoredKey;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export interface TokenRequest {
  email?: string | undefined;
  /** The `email_verified` claim; absent when undefined. */
  emailVerified?: boolean | undefined;
  sub: string;
  ttlSeconds: number;
}

/** The longest life of a local token: one leaked token stays good a day at most. */
export const MAX_TOKEN_TTL_SECONDS = 86_400;

/** A signed token carrying `sub` and `email`. */
export function signLocalToken(
  key: LocalJwtKey,
  request: TokenRequest,
): Promise<string> {
  const claims = {
    ...(request.email === undefined ? {} : { email: request.email }),
    ...(request.emailVerified === undefined
      ? {}
      : { email_verified: request.emailVerified }),
  };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: LOCAL_JWT_ALGORITHM, kid: key.kid, typ: 'JWT' })
    .setSubject(request.sub)
    .setIssuer(key.issuer)
    .setAudience(key.audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + request.ttlSeconds)
    .sign(key.privateKey);
}

/**
 * The verified claims of `token` as API Gateway would pass them (string
 * values); UnauthorizedError for a bad signature, issuer, audience or expiry.
 */
export async function verifyLocalToken(
  key: LocalJwtKey,
  token: string,
): Promise<Record<string, string>> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, key.publicKey, {
      algorithms: [LOCAL_JWT_ALGORITHM],
      issuer: key.issuer,
      audience: key.audience,
      requiredClaims: ['sub', 'exp'],
    }));
  } catch (error) {
    throw new UnauthorizedError('invalid token', { cause: error });
  }
  const claims: Record<string, string> = {};
  for (const [name, value] of Object.entries(payload)) {
    claims[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return claims;
}

/** `90s`, `30m`, `1h`, `1d` or plain seconds, from 1 second to a day. */
export function parseTtl(text: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!match) {
    throw new Error('--ttl: not a duration (90s, 30m, 1h, 1d or seconds)');
  }
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match[2] ?? ''] ?? 1;
  const seconds = Number(match[1]) * unit;
  if (seconds < 1)
    throw new Error('--ttl: a token must live at least 1 second');
  if (seconds > MAX_TOKEN_TTL_SECONDS) {
    throw new Error(
      `--ttl: a token lives at most a day (24h, ${MAX_TOKEN_TTL_SECONDS} seconds); asked for ${seconds} seconds`,
    );
  }
  return seconds;
}
