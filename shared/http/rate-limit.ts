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
 * Each check is one statement (one round trip): it counts the call and
 * answers with the count in the caller's current window; a route whose
 * first write can carry the count folds it into that write instead
 * ({@link RateLimitCharge}). A window is fixed:
 * it starts with the first call after the previous one ended, and a call
 * past the limit is refused with `429 rate_limited` and a `Retry-After` of
 * the seconds left in the window. Refused calls are counted too, so a
 * client that keeps hammering stays refused until the window ends.
 *
 * A limiter failure never costs the caller a read that would otherwise
 * succeed: the call goes through (fail open), and the failure is logged and
 * counted (`proxima_k8s_rate_limiter_failures_total`).
 */
import { column, SqlParams } from '../db/params.ts';
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
 * One call's count, not yet taken. apiHandler takes it before the handler
 * runs, unless the handler folds it into its first write (the live reads:
 * into the audit row's insert, one round trip instead of two). Such a
 * handler must do nothing anyone could see before that write, so the
 * outcome is the one counting first gives: a spent budget answers 429
 * whatever else the call would have answered, and a refused call writes
 * nothing. Whatever the handler did not take, apiHandler takes when it
 * ends, so every call is counted once.
 */
export class RateLimitCharge {
  readonly subject: string;
  readonly family: RateLimitFamily;
  #pending = true;

  constructor(subject: string, family: RateLimitFamily) {
    this.subject = subject;
    this.family = family;
  }

  /** Not counted yet. */
  get pending(): boolean {
    return this.#pending;
  }

  /** Counts on its own (enforceRateLimit: fail open); 429 when spent. */
  async take(db: Queryable): Promise<void> {
    if (!this.#pending) return;
    this.#pending = false;
    await enforceRateLimit(db, this.subject, this.family);
  }

  /**
   * For a statement that counts the call and writes only when it is
   * allowed: the counting statement (a `with` query returning `hits` and
   * `retry_after`), and the condition that the query named `counted`
   * allows the call.
   */
  foldInto(
    params: SqlParams,
    counted: string,
  ): { countSql: string; allowedSql: string } {
    const rule = RATE_LIMIT_FAMILIES[this.family];
    const countSql = countCallSql(
      params,
      this.subject,
      this.family,
      rule.windowSeconds,
    );
    return {
      countSql,
      allowedSql: `(select hits from ${column(counted)}) <= ${params.add(rule.limit)}`,
    };
  }

  /**
   * The folding statement ran: the call is counted. Throws
   * RateLimitedError when its budget was spent (the statement then wrote
   * nothing else).
   */
  settle(row: CountedRow): void {
    this.#pending = false;
    const rule = RATE_LIMIT_FAMILIES[this.family];
    refuseSpent(rule, decisionOf(row, rule.limit));
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
