/**
 * `npm run token` (scripts/token.ts) as a person runs it: tokens live an
 * hour by default and a day at most; a longer life is refused, naming --ttl.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTtl } from '../../../shared/auth/local-jwt.ts';

const SCRIPT = new URL('../../../scripts/token.ts', import.meta.url).pathname;

function runToken(
  dataDir: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', SCRIPT, ...args],
      { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'SILENT' } },
      (error, stdout, stderr) => {
        const code = error ? Number(error.code ?? 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('npm run token', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'k8s-inventory-token-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('issues a token for an hour by default and for a day at most', async () => {
    // Act
    const hour = await runToken(dataDir, ['--email', 'alice@example.com']);
    const day = await runToken(dataDir, [
      '--email',
      'alice@example.com',
      '--ttl',
      '24h',
    ]);

    // Assess
    expect(hour.code).toBe(0);
    const claims = decodeJwt(hour.stdout.trim());
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
    expect(claims.sub).toBe('local:alice@example.com');
    expect(day.code).toBe(0);
    const dayClaims = decodeJwt(day.stdout.trim());
    expect((dayClaims.exp ?? 0) - (dayClaims.iat ?? 0)).toBe(86_400);
  });

  it('refuses a life longer than a day with an error naming --ttl, printing no token', async () => {
    // Act
    const week = await runToken(dataDir, [
      '--email',
      'alice@example.com',
      '--ttl',
      '7d',
    ]);

    // Assess
    expect(week.code).toBe(2);
    expect(week.stdout).toBe('');
    expect(week.stderr).toContain('--ttl: a token lives at most a day');
  });

  it('reads 90s, 30m, 1h and 1d, and refuses 0, 25h and words', () => {
    // Act + Assess
    expect([
      parseTtl('90s'),
      parseTtl('30m'),
      parseTtl('1h'),
      parseTtl('1d'),
    ]).toEqual([90, 1800, 3600, 86_400]);
    expect(() => parseTtl('0')).toThrow(/at least 1 second/);
    expect(() => parseTtl('25h')).toThrow(/at most a day/);
    expect(() => parseTtl('forever')).toThrow(/--ttl: not a duration/);
  });
});
