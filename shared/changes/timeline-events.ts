/**
 * The what-changed timeline's event source: the events timeline service
 * (shared/events/timeline.ts) over the 14-day history, asked for the
 * timeline's reasons set and the workload's owned names. The workload's
 * name shapes are checked inside that statement, before its limit, so a
 * capped source is a full one; the content ids are the events timeline's,
 * so an event has one id on both routes.
 */
import type { Db } from '../db/pool.ts';
import {
  agentReportsLastSeen,
  OLD_AGENT_NOTE,
  readTimeline,
  retentionNote,
} from '../events/timeline.ts';
import type { TimelineEventsReader } from './what-changed.ts';

const NS_PER_MS = 1_000_000n;

export interface HistoryEventsContext {
  /** The cluster's agent version as it reported it (null: none). */
  agentVersion: string | null;
  /** EVENT_HISTORY_DAYS. */
  historyDays: number;
  now: Date;
}

export function historyEventsReader(
  db: Db,
  ctx: HistoryEventsContext,
): TimelineEventsReader {
  return async (request) => {
    const from = BigInt(request.from.getTime()) * NS_PER_MS;
    const timeline = await readTimeline(
      db,
      {
        ...(request.namespace !== undefined && {
          namespace: request.namespace,
        }),
        ...(request.workload !== undefined && {
          workload: { kinds: request.kinds, name: request.workload },
        }),
        reasons: request.reasons,
        from,
        to: BigInt(request.to.getTime()) * NS_PER_MS,
        limit: request.limit,
      },
      { clusterId: request.cluster.id, wall: request.scope, ...ctx },
    );
    return {
      events: timeline.events.map((e) => ({
        id: e.id,
        time: new Date(e.time),
        namespace: e.namespace,
        objectKind: e.involved_kind ?? '',
        objectName: e.involved_name ?? '',
        type: e.type,
        reason: e.reason ?? '',
        count: e.count,
        message: e.message,
      })),
      truncated: timeline.truncated,
      // The timeline counts its own cap (truncated.events): only the
      // store's notes travel.
      notes: agentReportsLastSeen(ctx.agentVersion) ? [] : [OLD_AGENT_NOTE],
      retentionNote: retentionNote(from, ctx),
    };
  };
}
