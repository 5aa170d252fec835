/**
 * The what-changed timeline's event source, read from the events
 * PostgreSQL keeps (k8s_events: EVENT_RETENTION_HOURS, 24 h by default)
 * until the 14-day events timeline service serves it: the same request and
 * answer (shared/changes/what-changed.ts, TimelineEventsReader), so the
 * timeline does not change when it moves there.
 *
 * The reasons set and the workload filter (exact name, or the exact
 * `<workload>-` prefix) are applied in SQL as parameters; the timeline then
 * keeps only the names that workload's kind generates.
 */

import { SqlParams } from '../db/params.ts';
import { type Queryable, query } from '../db/pool.ts';
import type { TimelineEvent, TimelineEventsReader } from './what-changed.ts';

export function storedEventsReader(
  db: Queryable,
  retentionHours: number,
): TimelineEventsReader {
  const retentionNote = `Kubernetes events are kept for ${retentionHours} hours; older ones are not shown.`;
  return async (request) => {
    const params = new SqlParams();
    const where = [
      `e.cluster_id = ${params.add(request.cluster.id)}`,
      `e.seen_at between ${params.add(request.from)} and ${params.add(request.to)}`,
      `e.reason = any(${params.add([...request.reasons])}::text[])`,
    ];
    const limit = params.add(request.limit + 1);
    if (request.namespace) {
      where.push(`e.namespace = ${params.add(request.namespace)}`);
    }
    if (request.workload) {
      const name = params.add(request.workload);
      where.push(
        `(e.involved_name = ${name} or left(e.involved_name, length(${name}) + 1) = ${name} || '-')`,
      );
    }
    const rows = await query<{
      seen_at: Date;
      namespace: string;
      involved_kind: string | null;
      involved_name: string | null;
      type: string | null;
      reason: string;
      count: number | null;
      message: string | null;
    }>(
      db,
      `select e.seen_at, e.namespace, e.involved_kind, e.involved_name, e.type,
              e.reason, e.count, e.message
       from k8s_events e
       where ${where.join(' and ')}
       order by e.seen_at desc, e.id desc
       limit ${limit}`,
      params.values,
    );
    const events: TimelineEvent[] = rows.slice(0, request.limit).map((r) => ({
      time: r.seen_at,
      namespace: r.namespace,
      objectKind: r.involved_kind ?? '',
      objectName: r.involved_name ?? '',
      type: r.type,
      reason: r.reason,
      count: r.count,
      message: r.message,
    }));
    return {
      events,
      truncated: rows.length > request.limit,
      notes: [retentionNote],
      retentionNote,
    };
  };
}
