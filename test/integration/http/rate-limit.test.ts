import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import { RateLimitedError } from '../../../shared/errors.ts';
import { toErrorResult } from '../../../shared/http/error-middleware.ts';
import {
  countCall,
  deleteEndedWindows,
  enforceRateLimit,
  RATE_LIMIT_FAMILIES,
} from '../../../shared/http/rate-limit.ts';
import { logger } from '../../../shared/observability/logger.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

const run = promisify(execFile);

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database.drop();
});

const rule = (limit: number) => ({
  family: 'test-family',
  limit,
  windowSeconds: 60,
  message: 'too many test reads',
});

describe('countCall', () => {
  it('holds exactly at the limit under concurrent calls from several processes', async () => {
    // Prepare: four processes, 30 calls each at once, one user, limit 60.
    const subject = 'user-concurrent';
    const callers = Array.from({ length: 4 }, () =>
      run(
        process.execPath,
        [
          '--import',
          'tsx',
          'test/helpers/rate-limit-caller.ts',
          subject,
          'test-family',
          '60',
          '30',
        ],
        { env: { ...process.env, DATABASE_URL: database.as('api').url } },
      ),
    );

    // Act
    const outputs = await Promise.all(callers);

    // Assess
    const allowed = outputs
      .map(({ stdout }) => (JSON.parse(stdout) as { allowed: number }).allowed)
      .reduce((a, b) => a + b, 0);
    expect(allowed).toBe(60);
    const [row] = await query<{ hits: number }>(
      database.db,
      'select hits from api_rate_limits where subject = $1',
      [subject],
    );
    expect(row?.hits).toBe(120);
  });

  it('counts users and families apart', async () => {
    // Prepare
    await countCall(database.db, 'user-a', rule(1));

    // Act
    const otherUser = await countCall(database.db, 'user-b', rule(1));
    const otherFamily = await countCall(database.db, 'user-a', {
      ...rule(1),
      family: 'other-family',
    });
    const sameAgain = await countCall(database.db, 'user-a', rule(1));

    // Assess
    expect(otherUser.allowed).toBe(true);
    expect(otherFamily.allowed).toBe(true);
    expect(sameAgain.allowed).toBe(false);
  });

  it('refuses past the limit with the seconds left, and restarts once the window ended', async () => {
    // Prepare
    const subject = 'user-window';
    await countCall(database.db, subject, rule(2));
    await countCall(database.db, subject, rule(2));

    // Act
    const refused = await countCall(database.db, subject, rule(2));
    await query(
      database.db,
      `update api_rate_limits set window_start = window_start - interval '60 seconds'
       where subject = $1`,
      [subject],
    );
    const restarted = await countCall(database.db, subject, rule(2));

    // Assess
    expect(refused).toMatchObject({ allowed: false, hits: 3 });
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(59);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(restarted).toMatchObject({ allowed: true, hits: 1 });
  });
});

describe('enforceRateLimit', () => {
  it('answers 429 rate_limited with the family message and a Retry-After header once the budget is spent', async () => {
    // Prepare
    const { limit } = RATE_LIMIT_FAMILIES['events-timeline'];
    for (let i = 0; i < limit; i += 1) {
      await enforceRateLimit(database.db, 'user-429', 'events-timeline');
    }

    // Act
    const error = await enforceRateLimit(
      database.db,
      'user-429',
      'events-timeline',
    ).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(RateLimitedError);
    const result = toErrorResult(error);
    expect(result.statusCode).toBe(429);
    expect(JSON.parse(result.body ?? '')).toMatchObject({
      error: { code: 'rate_limited', message: 'too many event timeline reads' },
    });
    expect(Number(result.headers?.['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('lets the call through when the limiter fails, and logs it', async () => {
    // Prepare: a database that refuses every statement.
    const broken = {
      query: () => Promise.reject(new Error('connection refused')),
    };
    const warn = vi.spyOn(logger, 'warn');

    // Act
    const outcome = await enforceRateLimit(
      broken as never,
      'user-open',
      'live-logs',
    ).then(() => 'allowed');

    // Assess
    expect(outcome).toBe('allowed');
    expect(warn).toHaveBeenCalledWith(
      'rate limiter failed; the call goes through',
      expect.objectContaining({ family: 'live-logs' }),
    );
    warn.mockRestore();
  });
});

describe('deleteEndedWindows', () => {
  it('deletes windows that ended an hour ago and keeps current ones', async () => {
    // Prepare
    await countCall(database.db, 'user-old', rule(5));
    await countCall(database.db, 'user-new', rule(5));
    await query(
      database.db,
      `update api_rate_limits set window_start = now() - interval '2 hours'
       where subject = 'user-old'`,
    );

    // Act
    const deleted = await deleteEndedWindows(database.db);

    // Assess
    expect(deleted).toBe(1);
    const left = await query<{ subject: string }>(
      database.db,
      `select subject from api_rate_limits where subject in ('user-old', 'user-new')`,
    );
    expect(left.map((r) => r.subject)).toEqual(['user-new']);
  });
});
