/**
 * One workload and its pods. Both filter by the cluster id as well as the
 * workload's own id: a workload of another cluster, or one the sync pruned,
 * is a 404, and has no pods.
 */

import { type Queryable, queryMaybeOne } from '../db/pool.ts';
import { NotFoundError } from '../errors.ts';
import type { QueryParams } from '../http/query.ts';
import { isUuid } from '../patterns.ts';
import { columnsOf, type ListPage, runList } from './list.ts';
import { LISTS } from './lists.ts';
import {
  type PodRecord,
  type WorkloadRecord,
  workloadRecord,
} from './records.ts';

const GET_WORKLOAD_SQL = `
  select ${columnsOf(workloadRecord)}
  from k8s_workloads
  where id = $1 and cluster_id = $2`;

/**
 * GET /clusters/:id/workloads/:workloadID — the workload list's record.
 * Throws NotFoundError('workload not found').
 */
export async function getWorkload(
  db: Queryable,
  clusterId: string,
  workloadId: string,
): Promise<{ data: WorkloadRecord }> {
  const row = isUuid(workloadId)
    ? await queryMaybeOne(db, GET_WORKLOAD_SQL, [workloadId, clusterId])
    : undefined;
  if (row === undefined) throw new NotFoundError('workload not found');
  return { data: workloadRecord.parse(row) };
}

/**
 * GET /clusters/:id/workloads/:workloadID/pods — the pods list (same
 * parameters, record and paging) narrowed to the workload's pods (the
 * sync's workload_id link), filtered by the cluster id as well: a workload
 * of another cluster, or an unknown or pruned one, has no pods.
 */
export function listWorkloadPods(
  db: Queryable,
  clusterId: string,
  workloadId: string,
  params: QueryParams,
): Promise<ListPage<PodRecord>> {
  return runList(db, LISTS.pods, clusterId, params, {
    name: 'workload',
    id: workloadId,
  });
}
