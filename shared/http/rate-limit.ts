/**
 * Per-user rate limits by route family, counted in PostgreSQL
 * (`api_rate_limits`, migrations/0014) so they hold across every API
 * instance; the spec counts per process and says so, this does better.
 *
 * A family is declared once, in {@link RATE_LIMIT_FAMILIES}; a route joins
 * it by naming it in its route table entry (`rateLimit`), and the API
 * middleware stack applies it after the route gate. Routes of one family
 * share one budget (manifest and revisions do).
 *
 * Each check is one statement: it counts the call and answers with the
 * count in the caller's current window, and rides with the request's read
 * of the caller's grants ({@link RateLimitCharge}). A window is fixed:
 * it starts with the first call after the previous one ended, and a call
 * past the limit is refused with `429 rate_limited` and a `Retry-After` of
 * the seconds left in the window. Refused calls are counted too, so a
 * client that keeps hammering stays refused until the window ends.
 *
 * A limiter failure never costs the caller a read that would otherwise
 * succeed: the call goes through (fail open), and the failure is logged and
 * counted (`proxima_k8s_rate_limiter_failures_total`).
 */
import { SqlParams } from '../db/params.ts';
import type { Queryable } from '../db/pool.ts';
import { queryOne } from '../db/pool.ts';
import { RateLimitedError } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import { MetricName, MetricUnit, metrics } from '../observability/metrics.ts';

export interface RateLimitRule {
  /** Calls allowed per window, per user. */
  limit: number;
  windowSeconds: number;
  /** The 429's message. */
  message: string;
}

/** Every rate-limited route family, with its budget. */
export const RATE_LIMIT_FAMILIES = {
  'events-timeline': {
    limit: 60,
    windowSeconds: 60,
    message: 'too many event timeline reads',
  },
  'what-changed': {
    limit: 60,
    windowSeconds: 60,
    message: 'too many what-changed reads',
  },
  'live-logs': {
    limit: 30,
    windowSeconds: 60,
    message: 'too many log reads',
  },
  'live-manifest-revisions': {
    limit: 60,
    windowSeconds: 60,
    message: 'too many manifest and revisions reads',
  },
} as const satisfies Record<string, RateLimitRule>;

export type RateLimitFamily = keyof typeof RATE_LIMIT_FAMILIES;

export interface RateLimitDecision {
  allowed: boolean;
  /** Calls counted in the current window, this one included. */
  hits: number;
  /** Whole seconds until the window ends (at least 1). */
  retryAfterSeconds: number;
}

// A window that ended restarts with this call; otherwise the call is
// counted in it. The row lock ON CONFLICT takes makes concurrent calls of
// one user count one after another, so the count is exact at the limit.
function countCallSql(
  params: SqlParams,
  subject: string,
  family: string,
  windowSeconds: number,
): string {
  const who = params.add(subject);
  const which = params.add(family);
  const window = params.add(windowSeconds);
  return `
  insert into api_rate_limits as r (subject, family, window_start, hits)
  values (${who}, ${which}, clock_timestamp(), 1)
  on conflict (subject, family) do update set
    window_start = case
      when r.window_start <= clock_timestamp() - make_interval(secs => ${window})
      then clock_timestamp() else r.window_start end,
    hits = case
      when r.window_start <= clock_timestamp() - make_interval(secs => ${window})
      then 1 else least(r.hits, 2147483646) + 1 end
  returning hits,
    greatest(1, ceil(extract(epoch from
      r.window_start + make_interval(secs => ${window}) - clock_timestamp())))::int
      as retry_after`;
}

/** What the counting statement returns. */
export type CountedRow = { hits: number; retry_after: number };

function decisionOf(row: CountedRow, limit: number): RateLimitDecision {
  return {
    allowed: row.hits <= limit,
    hits: row.hits,
    retryAfterSeconds: row.retry_after,
  };
}

/** Counts one call of `subject` in `family`; says whether it may proceed. */
export async function countCall(
  db: Queryable,
  subject: string,
  rule: RateLimitRule & { family: string },
): Promise<RateLimitDecision> {
  const params = new SqlParams();
  const row = await queryOne<CountedRow>(
    db,
    countCallSql(params, subject, rule.family, rule.windowSeconds),
    params.values,
  );
  return decisionOf(row, rule.limit);
}

/**
 * Throws RateLimitedError when `subject` spent `family`'s budget.
 * Fails open: a database error lets the call through, logged and counted.
 */
export async function enforceRateLimit(
  db: Queryable,
  subject: string,
  family: RateLimitFamily,
): Promise<void> {
  const rule = RATE_LIMIT_FAMILIES[family];
  let decision: RateLimitDecision;
  try {
    decision = await countCall(db, subject, { ...rule, family });
  } catch (error) {
    metrics.addMetric(MetricName.rateLimiterFailures, MetricUnit.Count, 1);
    logger.warn('rate limiter failed; the call goes through', {
      family,
      error: error instanceof Error ? error.message : String(error),
    });
    return;
  }
  refuseSpent(rule, decision);
}

function refuseSpent(rule: RateLimitRule, decision: RateLimitDecision): void {
  if (!decision.allowed) {
    throw new RateLimitedError(rule.message, {
      retryAfterSeconds: decision.retryAfterSeconds,
    });
  }
}

/**
 * One call's count, taken with the request's first statement: the read of
 * the caller's grants (and cluster) counts the call too (`foldInto`), so a
 * rate-limited route costs no round trip of its own. The answer is read
 * only once the access checks passed (`settle`): a caller who may not see
 * the cluster gets its 404 or 403, counted; any other call past the budget
 * gets 429 before anything else (a 400, an agent check). Should the
 * folding statement fail, the read runs alone and the count is taken apart
 * (`take`), failing open as every limiter failure does.
 */
export class RateLimitCharge {
  readonly subject: string;
  readonly family: RateLimitFamily;

  constructor(subject: string, family: RateLimitFamily) {
    this.subject = subject;
    this.family = family;
  }

  /** The counting statement, for a `with` query (returns hits, retry_after). */
  foldInto(params: SqlParams): string {
    const rule = RATE_LIMIT_FAMILIES[this.family];
    return countCallSql(params, this.subject, this.family, rule.windowSeconds);
  }

  /** The folded count's answer: 429 when the budget was spent. */
  settle(row: CountedRow): void {
    const rule = RATE_LIMIT_FAMILIES[this.family];
    refuseSpent(rule, decisionOf(row, rule.limit));
  }

  /** Counts on its own (enforceRateLimit: fail open); 429 when spent. */
  take(db: Queryable): Promise<void> {
    return enforceRateLimit(db, this.subject, this.family);
  }
}

// Windows that ended an hour ago or more: nothing reads them again.
const DELETE_ENDED = `
  with gone as (
    delete from api_rate_limits
    where window_start < clock_timestamp() - interval '1 hour'
    returning 1
  )
  select count(*)::int as n from gone`;

/** Deletes long-ended windows (the retention sweep runs it). */
export async function deleteEndedWindows(db: Queryable): Promise<number> {
  const row = await queryOne<{ n: number }>(db, DELETE_ENDED);
  return row.n;
}
