/**
 * The capacity block and health counts of a cluster, as select-list items
 * over its row: the summary's `capacity` (healthCountsColumns) and List
 * Clusters' `include=capacity` (HEALTH_COUNTS_JSON_FIELDS) are built from
 * the same fields and the same warnings' WHERE, so the two can never
 * disagree.
 *
 * - Requests and limits (the sync's precomputed effective values) count only
 *   pods not in Succeeded/Failed; a pod without a phase counts.
 * - Usage comes from metrics-server (k8s_nodes.usage_*). A node reports when
 *   its usage is above 0 (a stored 0 is a legacy "no data"); the used figures
 *   sum only reporting nodes, are null when none reports, never 0, and pair
 *   with the allocatable of those same nodes (*_allocatable_reporting_*).
 * - pods_not_running: phases other than Running and Succeeded, a missing
 *   phase included (Pending + Failed + Unknown).
 * - warning_events_1h: Warning event objects last seen within the hour of
 *   the database's clock; repeats folded into one object count once.
 */
import { jsonObject } from '../db/json-sql.ts';

export interface CapacityBlock {
  cpu_allocatable_millicores: number;
  cpu_requested_millicores: number;
  cpu_limits_millicores: number;
  cpu_used_millicores: number | null;
  cpu_allocatable_reporting_millicores: number;
  cpu_usage_nodes: number;
  mem_allocatable_bytes: number;
  mem_requested_bytes: number;
  mem_limits_bytes: number;
  mem_used_bytes: number | null;
  mem_allocatable_reporting_bytes: number;
  mem_usage_nodes: number;
  pods_allocatable: number;
  pods_running: number;
  nodes_total: number;
}

export interface ClusterHealthCounts {
  capacity: CapacityBlock;
  pods_not_running: number;
  warning_events_1h: number;
}

/**
 * The capacity block of a clusters row `c`: its keys, in order, and the SQL
 * of each. The node and pod figures are kept on the cluster row by the sync
 * (k8s_refresh_rollups, migrations/0005, kept by difference since 0023).
 */
const CAPACITY_FIELDS: ReadonlyArray<
  readonly [key: keyof CapacityBlock, sql: string]
> = [
  ['cpu_allocatable_millicores', 'c.nodes_cpu_allocatable_millicores'],
  ['cpu_requested_millicores', 'c.pods_cpu_requested_millicores'],
  ['cpu_limits_millicores', 'c.pods_cpu_limits_millicores'],
  ['cpu_used_millicores', 'c.nodes_cpu_used_millicores'],
  [
    'cpu_allocatable_reporting_millicores',
    'c.nodes_cpu_allocatable_reporting_millicores',
  ],
  ['cpu_usage_nodes', 'c.nodes_cpu_usage_nodes'],
  ['mem_allocatable_bytes', 'c.nodes_mem_allocatable_bytes'],
  ['mem_requested_bytes', 'c.pods_mem_requested_bytes'],
  ['mem_limits_bytes', 'c.pods_mem_limits_bytes'],
  ['mem_used_bytes', 'c.nodes_mem_used_bytes'],
  [
    'mem_allocatable_reporting_bytes',
    'c.nodes_mem_allocatable_reporting_bytes',
  ],
  ['mem_usage_nodes', 'c.nodes_mem_usage_nodes'],
  ['pods_allocatable', 'c.nodes_pods_allocatable'],
  ['pods_running', 'c.pods_running'],
  ['nodes_total', 'c.node_count'],
];

/**
 * The events of a clusters row `c` that warning_events_1h counts, as the
 * WHERE of a read of `k8s_events e`. Only the past hour's warnings are
 * counted at read time, from their index.
 */
export const WARNINGS_1H_WHERE = `e.cluster_id = c.id
      and e.type = 'Warning'
      and e.last_seen >= now() - interval '1 hour'`;

const WARNING_EVENTS_1H_SQL = `(select count(*) from k8s_events e
    where ${WARNINGS_1H_WHERE})`;

/**
 * The health counts of a clusters row `c`, as select-list items.
 * `warningEvents1h` is SQL counting WARNINGS_1H_WHERE's events, when the
 * statement reads them anyway (the summary groups them by reason).
 */
export function healthCountsColumns(
  warningEvents1h = WARNING_EVENTS_1H_SQL,
): string {
  return [
    'c.id as cluster_id',
    ...CAPACITY_FIELDS.map(([key, sql]) => `${sql} as ${key}`),
    'c.pods_not_running',
    `${warningEvents1h} as warning_events_1h`,
  ].join(',\n  ');
}

/**
 * The health counts of a clusters row `c` as JSON object fields (for
 * jsonObject): `capacity`, `pods_not_running`, `warning_events_1h`, the
 * same figures and shape as toHealthCounts gives.
 */
export const HEALTH_COUNTS_JSON_FIELDS: ReadonlyArray<
  readonly [key: keyof ClusterHealthCounts, sql: string]
> = [
  ['capacity', jsonObject(CAPACITY_FIELDS)],
  ['pods_not_running', 'c.pods_not_running'],
  ['warning_events_1h', WARNING_EVENTS_1H_SQL],
];

export type HealthCountsRow = CapacityBlock & {
  [column: string]: unknown;
  cluster_id: string;
  pods_not_running: number;
  warning_events_1h: number;
};

/** The health counts' columns of a row as the capacity block and counts. */
export function toHealthCounts(row: HealthCountsRow): ClusterHealthCounts {
  return {
    capacity: {
      cpu_allocatable_millicores: row.cpu_allocatable_millicores,
      cpu_requested_millicores: row.cpu_requested_millicores,
      cpu_limits_millicores: row.cpu_limits_millicores,
      cpu_used_millicores: row.cpu_used_millicores,
      cpu_allocatable_reporting_millicores:
        row.cpu_allocatable_reporting_millicores,
      cpu_usage_nodes: row.cpu_usage_nodes,
      mem_allocatable_bytes: row.mem_allocatable_bytes,
      mem_requested_bytes: row.mem_requested_bytes,
      mem_limits_bytes: row.mem_limits_bytes,
      mem_used_bytes: row.mem_used_bytes,
      mem_allocatable_reporting_bytes: row.mem_allocatable_reporting_bytes,
      mem_usage_nodes: row.mem_usage_nodes,
      pods_allocatable: row.pods_allocatable,
      pods_running: row.pods_running,
      nodes_total: row.nodes_total,
    },
    pods_not_running: row.pods_not_running,
    warning_events_1h: row.warning_events_1h,
  };
}
