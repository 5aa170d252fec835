/**
 * Change retention, part of the retention sweep: change_events rows (change
 * records and deploys) whose effective time (observed, else recorded) and
 * alert groups whose last write are older than CHANGE_RETENTION_DAYS are
 * deleted.
 *
 * In batches of at most `batchSize` rows, each its own statement and
 * transaction, so no lock is held for long and a sync or webhook writing
 * meanwhile never waits behind the sweep. change_events is walked client by
 * client through idx_change_events_client_effective; alert groups through
 * idx_alert_groups_updated.
 */
import { type Db, query } from '../db/pool.ts';
import { logger } from '../observability/logger.ts';

export interface ChangeRetentionOptions {
  retentionDays: number;
  now?: Date;
  batchSize?: number;
}

export interface ChangeRetentionResult {
  changes: number;
  alertGroups: number;
  batches: number;
}

const CLIENTS_WITH_EXPIRED = `
  select c.id from clients c
  where exists (
    select 1 from change_events e
    where e.client_id = c.id and coalesce(e.scanned_at, e.created_at) < $1)`;

const DELETE_CHANGES_BATCH = `
  with gone as (
    delete from change_events where id in (
      select id from change_events
      where client_id = $1 and coalesce(scanned_at, created_at) < $2
      limit $3)
    returning 1)
  select count(*)::int as n from gone`;

const DELETE_ALERT_GROUPS_BATCH = `
  with gone as (
    delete from alert_groups where id in (
      select id from alert_groups where updated_at < $1 limit $2)
    returning 1)
  select count(*)::int as n from gone`;

/** Deletes expired change rows and alert groups; safe to run any time. */
export async function expireChanges(
  db: Db,
  options: ChangeRetentionOptions,
): Promise<ChangeRetentionResult> {
  const now = options.now ?? new Date();
  const cutoff = new Date(now.getTime() - options.retentionDays * 86_400_000);
  const batchSize = options.batchSize ?? 5_000;
  let batches = 0;

  const deleteAll = async (sql: string, params: unknown[]) => {
    let total = 0;
    for (;;) {
      const [row] = await query<{ n: number }>(db, sql, params);
      batches++;
      const n = row?.n ?? 0;
      total += n;
      if (n < batchSize) return total;
    }
  };

  let changes = 0;
  const clients = await query<{ id: string }>(db, CLIENTS_WITH_EXPIRED, [
    cutoff,
  ]);
  for (const { id } of clients) {
    changes += await deleteAll(DELETE_CHANGES_BATCH, [id, cutoff, batchSize]);
  }
  const alertGroups = await deleteAll(DELETE_ALERT_GROUPS_BATCH, [
    cutoff,
    batchSize,
  ]);
  logger.info('expired change rows and alert groups deleted', {
    changes,
    alertGroups,
    batches,
    retentionDays: options.retentionDays,
  });
  return { changes, alertGroups, batches };
}
