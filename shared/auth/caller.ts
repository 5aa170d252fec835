/**
 * What every API request reads before its access checks: the caller's
 * grants (by email, case-insensitively), with a cluster route's cluster
 * and a rate-limited route's count of the call folded into the same
 * statement, so the checks cost one round trip.
 */
import {
  CLUSTER_RECORD_COLUMNS,
  type ClusterRecord,
} from '../clusters/repo.ts';
import { SqlParams } from '../db/params.ts';
import { type Queryable, queryOne } from '../db/pool.ts';
import {
  type Grant,
  type GrantRow,
  grantsJsonSql,
  toGrants,
} from './grants.ts';

/** What every API request reads first: the caller's grants, and more. */
export interface CallerRead {
  grants: Grant[];
  /** The cluster asked for: undefined when none was, or it does not exist. */
  cluster: ClusterRecord | undefined;
  /** The call's count, when one was folded in. */
  counted: { hits: number; retry_after: number } | undefined;
}

/**
 * The caller's grants, with a cluster route's cluster and a rate-limited
 * route's count of the call, in one round trip: what every API request
 * reads before its access checks. `countCall` is a statement returning
 * `hits` and `retry_after` (the limiter's count); with it, the statement
 * writes, and commits without waiting for the disk: a count a crash loses
 * lets a caller a few more calls, nothing else. One row always: the
 * cluster's columns are null when it does not exist.
 */
export async function readCaller(
  db: Queryable,
  email: string | undefined,
  options: {
    clusterId?: string | undefined;
    countCall?: ((params: SqlParams) => string) | undefined;
  } = {},
): Promise<CallerRead> {
  const params = new SqlParams();
  const grants = grantsJsonSql(params.add(email || null));
  const cluster = options.clusterId
    ? `left join (select ${CLUSTER_RECORD_COLUMNS} from clusters
                   where id = ${params.add(options.clusterId)}) found on true`
    : '';
  const counting = options.countCall?.(params);
  // With a count, the call's row is what the grants and cluster stand beside.
  const [withCount, countColumns, source, asyncCommit] =
    counting === undefined
      ? ['', '', '(select 1) caller', '']
      : [
          `with counted as (${counting})`,
          `, counted.hits as counted_hits,
             counted.retry_after as counted_retry_after`,
          'counted',
          `where (select set_config('synchronous_commit', 'off', true)) = 'off'`,
        ];
  const row = await queryOne<
    ClusterRecord & {
      caller_grants: GrantRow[];
      counted_hits?: number;
      counted_retry_after?: number;
    }
  >(
    db,
    `${withCount}
     select ${grants} as caller_grants${countColumns}${cluster ? ', found.*' : ''}
       from ${source} ${cluster}
      ${asyncCommit}`,
    params.values,
  );
  const {
    caller_grants: grantRows,
    counted_hits: hits,
    counted_retry_after: retryAfter,
    ...found
  } = row;
  return {
    grants: toGrants(grantRows),
    cluster:
      found.id === null || found.id === undefined
        ? undefined
        : (found as ClusterRecord),
    counted:
      hits === undefined
        ? undefined
        : { hits, retry_after: retryAfter as number },
  };
}
