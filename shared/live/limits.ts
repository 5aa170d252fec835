/**
 * The live reads' per-user budgets (spec "Live Reads", 429 row): 30 log
 * reads a minute, and 60 manifest and revisions reads a minute shared
 * between the two. Counted in PostgreSQL by the shared limiter, so they hold
 * across every API function instance (the spec counts per process).
 */
import type { Principal } from '../auth/access.ts';
import type { Queryable } from '../db/pool.ts';
import { RateLimitedError } from '../errors.ts';
import type { LiveRoute } from './gates.ts';

interface Budget {
  family: string;
  limit: number;
  message: string;
}

const OBJECTS: Budget = {
  family: 'live-objects',
  limit: 60,
  message: 'too many live manifest and revisions reads',
};

export const LIVE_BUDGETS: Readonly<Record<LiveRoute, Budget>> = {
  manifest: OBJECTS,
  revisions: OBJECTS,
  logs: { family: 'live-logs', limit: 30, message: 'too many live log reads' },
};

export const LIVE_WINDOW_MS = 60_000;

/** The key a user's budget is counted under: the email, else the subject. */
export function userKey(principal: Principal): string {
  return principal.email?.toLowerCase() ?? `sub:${principal.sub}`;
}

/** PENDING: the shared PostgreSQL limiter. */
export function liveRateLimit(_db: Queryable) {
  return async (route: LiveRoute, principal: Principal): Promise<void> => {
    void LIVE_BUDGETS[route];
    void userKey(principal);
    void RateLimitedError;
  };
}
