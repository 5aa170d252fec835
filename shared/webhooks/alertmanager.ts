/**
 * Alertmanager → alert groups. The body is Alertmanager's webhook payload,
 * version 4 (`receiver`, `status`, `alerts[]`, `groupKey`, `groupLabels`,
 * `commonLabels`, `commonAnnotations`, `externalURL`, `truncatedAlerts`;
 * newer releases add `notification_reason` and `routeLabels`, read by no
 * one here). A firing alert's `endsAt` is Go's zero time.
 *
 * One alert_groups row per (source, groupKey, firing episode):
 *
 * - firing, and the group has an open episode: that row is updated (labels,
 *   severity, title, detail, host; first_fired_at only ever moves earlier);
 * - firing, no open episode: a new episode, unless every alert started no
 *   later than the last episode resolved (a stale retry of a notification
 *   from before the resolve, which changes nothing);
 * - resolved: the open episode is closed; without one, a re-sent resolve of
 *   the last episode only refreshes it, and a resolve of alerts never seen
 *   firing is stored as a resolved episode.
 *
 * Each group's notifications are applied one at a time (an advisory lock on
 * the source and group key), so two deliveries at once cannot open two
 * episodes.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import {
  type Db,
  query,
  queryMaybeOne,
  queryOne,
  withTransaction,
} from '../db/pool.ts';
import { sanitizeMessage } from '../sanitize/secrets.ts';
import * as z from '../zod.ts';
import { parseWebhookBody } from './body.ts';
import type { WebhookSource } from './sources.ts';

/** Alertmanager's "no end yet" (Go's zero time), before year 1970. */
const GO_ZERO_TIME_BEFORE = Date.UTC(1970, 0, 1);

/** The labels that can name the host an alert is about, in that order. */
export const HOST_LABELS = ['host', 'hostname', 'node', 'instance'] as const;

const MAX_DETAIL = 2048;
const MAX_TITLE = 256;

const labelMap = z.record(
  z.string().check(z.maxLength(317)),
  z.string().check(z.maxLength(64 * 1024)),
);
const time = z.iso.datetime({
  offset: true,
  error: 'must be an RFC 3339 time',
});

const alertSchema = z.object({
  status: z.enum(['firing', 'resolved']),
  labels: z._default(labelMap, {}),
  annotations: z._default(labelMap, {}),
  startsAt: time,
  endsAt: z.nullish(time),
  fingerprint: z.nullish(z.string().check(z.maxLength(64))),
});

export const alertmanagerPayloadSchema = z.object({
  version: z.nullish(z.string().check(z.maxLength(16))),
  groupKey: z.string().check(z.minLength(1), z.maxLength(8192)),
  status: z.enum(['firing', 'resolved']),
  receiver: z.nullish(z.string().check(z.maxLength(1024))),
  alerts: z
    .array(alertSchema)
    .check(z.minLength(1, { error: 'must hold an alert' })),
  groupLabels: z._default(labelMap, {}),
  commonLabels: z._default(labelMap, {}),
  commonAnnotations: z._default(labelMap, {}),
  truncatedAlerts: z.nullish(z.int().check(z.nonnegative())),
});

export type AlertmanagerPayload = z.output<typeof alertmanagerPayloadSchema>;

export interface AlertGroupFacts {
  groupKey: string;
  status: 'firing' | 'resolved';
  severity: string | null;
  title: string;
  detail: string | null;
  labels: Record<string, string>;
  alertLabels: Record<string, string>[];
  firstFiredAt: Date;
  /** The latest start among the alerts (stale-retry check). */
  lastStartedAt: Date;
  resolvedAt: Date | null;
  /** The host label's value, port stripped; null when none. */
  hostName: string | null;
}

function firstOf(
  maps: readonly Record<string, string>[],
  keys: readonly string[],
): string | null {
  for (const key of keys) {
    for (const map of maps) {
      const value = map[key];
      if (value !== undefined && value !== '') return value;
    }
  }
  return null;
}

/** `10.0.0.1:9100` → `10.0.0.1`, `[fe80::1]:9100` → `fe80::1`, `db-1` stays. */
export function stripPort(instance: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(instance);
  if (bracketed?.[1]) return bracketed[1];
  if (isIP(instance) === 6) return instance;
  return instance.replace(/:\d+$/, '');
}

/** What a payload says about its group; UnprocessableError naming the field. */
export function alertGroupFacts(
  body: unknown,
  receivedAt: Date,
): AlertGroupFacts {
  const p = parseWebhookBody(alertmanagerPayloadSchema, body);
  const labels = p.commonLabels;
  const alertLabels = p.alerts.map((a) => ({ ...labels, ...a.labels }));
  const annotations = [
    p.commonAnnotations,
    ...p.alerts.map((a) => a.annotations),
  ];
  const starts = p.alerts.map((a) => Date.parse(a.startsAt));
  const ends = p.alerts
    .map((a) => (a.endsAt ? Date.parse(a.endsAt) : Number.NaN))
    .filter((t) => Number.isFinite(t) && t > GO_ZERO_TIME_BEFORE);
  const detail = firstOf(annotations, ['summary', 'description']);
  const host = firstOf([labels, ...alertLabels], HOST_LABELS);
  return {
    groupKey: p.groupKey,
    status: p.status,
    severity: firstOf([labels, ...alertLabels], ['severity', 'priority']),
    title: (
      firstOf([labels, p.groupLabels, ...alertLabels], ['alertname']) ??
      'Alert group'
    ).slice(0, MAX_TITLE),
    detail:
      detail === null ? null : sanitizeMessage(detail).slice(0, MAX_DETAIL),
    labels,
    alertLabels,
    firstFiredAt: new Date(Math.min(...starts)),
    lastStartedAt: new Date(Math.max(...starts)),
    resolvedAt:
      p.status === 'resolved'
        ? new Date(ends.length > 0 ? Math.max(...ends) : receivedAt.getTime())
        : null,
    hostName: host === null ? null : stripPort(host),
  };
}

// The client's host the label names: by hostname (case-insensitive) or by
// address, within the source's environment when it has one.
const FIND_HOST = `
  select id from hosts
  where client_id = $1
    and ($2::uuid is null or environment_id = $2)
    and (lower(hostname) = lower($3) or ($4::inet is not null and ip_address = $4::inet))
  order by (lower(hostname) = lower($3)) desc, created_at, id
  limit 1`;

const LOCK_GROUP = `select pg_advisory_xact_lock($1::bigint)`;

const LATEST_EPISODE = `
  select id, status, resolved_at from alert_groups
  where source_id = $1 and group_key = $2
  order by (status = 'firing') desc, first_fired_at desc, created_at desc
  limit 1`;

const INSERT_EPISODE = `
  insert into alert_groups
    (source_id, client_id, environment_id, host_id, group_key, status,
     severity, title, detail, labels, alert_labels, first_fired_at,
     resolved_at, last_notified_at)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
  returning id`;

const UPDATE_EPISODE = `
  update alert_groups set
    status = $2, severity = $3, title = $4, detail = $5, labels = $6,
    alert_labels = $7, host_id = $8,
    first_fired_at = least(first_fired_at, $9),
    resolved_at = $10, last_notified_at = $11, updated_at = now()
  where id = $1`;

const TOUCH_EPISODE = `
  update alert_groups set last_notified_at = $2, updated_at = now()
  where id = $1`;

export interface StoredAlertGroup {
  id: string;
  /** new (an episode opened), updated, or unchanged (a stale retry). */
  outcome: 'new' | 'updated' | 'unchanged';
}

function lockKey(sourceId: string, groupKey: string): string {
  const digest = createHash('sha256')
    .update(`${sourceId}\u0000${groupKey}`)
    .digest();
  return digest.readBigInt64BE(0).toString();
}

/** Applies one notification of `source` to its group's episodes. */
export async function storeAlertmanagerNotification(
  db: Db,
  source: WebhookSource,
  body: unknown,
  receivedAt: Date = new Date(),
): Promise<StoredAlertGroup> {
  const g = alertGroupFacts(body, receivedAt);
  return withTransaction(db, async (tx) => {
    await query(tx, LOCK_GROUP, [lockKey(source.id, g.groupKey)]);
    const host =
      g.hostName === null
        ? undefined
        : await queryMaybeOne<{ id: string }>(tx, FIND_HOST, [
            source.clientId,
            source.environmentId,
            g.hostName,
            isIP(g.hostName) ? g.hostName : null,
          ]);
    const latest = await queryMaybeOne<{
      id: string;
      status: 'firing' | 'resolved';
      resolved_at: Date | null;
    }>(tx, LATEST_EPISODE, [source.id, g.groupKey]);
    const open = latest?.status === 'firing' ? latest : undefined;
    const lastResolvedAt =
      latest?.status === 'resolved' ? latest.resolved_at : null;

    if (open) {
      await query(tx, UPDATE_EPISODE, [
        open.id,
        g.status,
        g.severity,
        g.title,
        g.detail,
        g.labels,
        JSON.stringify(g.alertLabels),
        host?.id ?? null,
        g.firstFiredAt,
        g.resolvedAt,
        receivedAt,
      ]);
      return { id: open.id, outcome: 'updated' };
    }
    if (latest && lastResolvedAt !== null) {
      const stale =
        g.status === 'firing'
          ? g.lastStartedAt <= lastResolvedAt
          : g.firstFiredAt <= lastResolvedAt;
      if (stale && g.status === 'firing') {
        return { id: latest.id, outcome: 'unchanged' };
      }
      if (stale) {
        await query(tx, TOUCH_EPISODE, [latest.id, receivedAt]);
        return { id: latest.id, outcome: 'updated' };
      }
    }
    const inserted = await queryOne<{ id: string }>(tx, INSERT_EPISODE, [
      source.id,
      source.clientId,
      source.environmentId,
      host?.id ?? null,
      g.groupKey,
      g.status,
      g.severity,
      g.title,
      g.detail,
      g.labels,
      JSON.stringify(g.alertLabels),
      g.firstFiredAt,
      g.resolvedAt,
      receivedAt,
    ]);
    return { id: inserted.id, outcome: 'new' };
  });
}
