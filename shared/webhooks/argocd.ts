/**
 * Argo CD notifications → deploys (spec: What Changed, source
 * `deployment`). Argo CD's catalog defines no webhook body, so this system
 * defines one (the README's `argocd-notifications-cm` template renders it
 * with `toJson` and `dig`):
 *
 *   {"trigger", "app", "app_namespace", "project",
 *    "destination": {"server", "name", "namespace"}, "repo_url",
 *    "sync_status", "health_status",
 *    "operation": null | {"phase", "started_at", "finished_at", "message",
 *      "revision", "initiated_by": {"username", "automated"},
 *      "resources": [{"group", "kind", "namespace", "name", "status",
 *                     "message"}]}}
 *
 * Only these fields are read; anything else (a whole Application with its
 * Helm values, say) is dropped by the schema before anything is stored.
 * Each notification becomes one change_events row, `source = deployment`.
 * Argo CD retries on 5xx and network errors, so a replay (same source, app,
 * trigger, revision and finish time) is stored once.
 */
import { createHash } from 'node:crypto';
import { type Db, queryMaybeOne, queryOne } from '../db/pool.ts';
import { UnprocessableError } from '../errors.ts';
import { sanitizeMessage } from '../sanitize/secrets.ts';
import { stripRepoUrlUserinfo } from '../wire/repo-url.ts';
import * as z from '../zod.ts';
import { parseWebhookBody } from './body.ts';
import type { WebhookSource } from './sources.ts';

/** change_events.source of a deploy notification. */
export const DEPLOY_SOURCE = 'deployment';

/** How many synced resources a deploy row keeps. */
export const MAX_DEPLOY_RESOURCES = 200;

/** Operation and resource messages are cut to this many characters. */
const MAX_MESSAGE = 2048;

/**
 * Without an operation (a health trigger) a notification has no identity of
 * its own: replays are told apart by content within this window, longer
 * than Argo CD's retries (3 of at most 5 s).
 */
const NO_OPERATION_REPLAY_WINDOW_MS = 5 * 60_000;

const str = (max: number) => z.string().check(z.maxLength(max));
const optional = (max: number) => z.nullish(str(max));
const time = z.nullish(
  z.iso.datetime({ offset: true, error: 'must be an RFC 3339 time' }),
);

const resourceSchema = z.object({
  group: optional(253),
  kind: str(128).check(z.minLength(1)),
  namespace: optional(63),
  name: str(253).check(z.minLength(1)),
  status: optional(64),
  message: z.nullish(z.string()),
});

export const argocdNotificationSchema = z.object({
  trigger: str(128).check(
    z.regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, {
      error: 'must be a trigger name such as on-sync-succeeded',
    }),
  ),
  app: str(253).check(z.minLength(1)),
  app_namespace: optional(63),
  project: optional(253),
  destination: z.object(
    {
      server: optional(2048),
      name: optional(253),
      namespace: z.nullish(
        str(63).check(z.minLength(1, { error: 'required' })),
      ),
    },
    { error: 'required' },
  ),
  repo_url: optional(2048),
  sync_status: optional(64),
  health_status: optional(64),
  operation: z.nullish(
    z.object({
      phase: optional(64),
      started_at: time,
      finished_at: time,
      message: z.nullish(z.string()),
      revision: optional(256),
      initiated_by: z.nullish(
        z.object({
          username: optional(253),
          automated: z.nullish(z.boolean()),
        }),
      ),
      resources: z.nullish(z.array(resourceSchema)),
    }),
  ),
});

export type ArgocdNotification = z.output<typeof argocdNotificationSchema>;

const EVENT_TYPES: Record<string, string> = {
  'on-sync-succeeded': 'sync',
  'on-deployed': 'deployed',
  'on-sync-failed': 'sync_failed',
  'on-health-degraded': 'health_degraded',
};

/** `on-sync-succeeded` → `sync`; any other trigger its name without `on-`. */
export function deployEventType(trigger: string): string {
  const known = EVENT_TYPES[trigger];
  if (known !== undefined) return known;
  const name = trigger.startsWith('on-') ? trigger.slice(3) : trigger;
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '_');
}

/** `ArgoCD sync: shop-api (Synced)`, `ArgoCD sync failed: shop-api`. */
export function deployTitle(
  eventType: string,
  app: string,
  syncStatus: string | null | undefined,
): string {
  const what = eventType.replaceAll('_', ' ');
  const status = syncStatus ? ` (${syncStatus})` : '';
  return `ArgoCD ${what}: ${app}${status}`;
}

const cut = (text: string | null | undefined) =>
  text == null ? null : sanitizeMessage(text).slice(0, MAX_MESSAGE);

export interface DeployRecord {
  eventType: string;
  summary: string;
  severity: string;
  scannedAt: Date;
  dedupKey: string;
  details: Record<string, unknown>;
}

/**
 * The change_events row of a notification; throws UnprocessableError
 * naming the field for a body the contract refuses.
 */
export function buildDeployRecord(
  source: Pick<WebhookSource, 'id'>,
  body: unknown,
  receivedAt: Date,
): DeployRecord {
  const n = parseWebhookBody(argocdNotificationSchema, body);
  const namespace = n.destination.namespace;
  if (!namespace) {
    throw new UnprocessableError(
      'destination.namespace: required (a deploy must name the namespace it deploys to)',
      { details: { field: 'destination.namespace' } },
    );
  }
  const op = n.operation ?? null;
  const eventType = deployEventType(n.trigger);
  const finishedAt = op?.finished_at ? new Date(op.finished_at) : null;
  const actor =
    op?.initiated_by?.username ||
    (op?.initiated_by?.automated ? 'automated' : null);
  const resources = (op?.resources ?? [])
    .slice(0, MAX_DEPLOY_RESOURCES)
    .map((r) => ({
      group: r.group ?? '',
      kind: r.kind,
      namespace: r.namespace ?? null,
      name: r.name,
      status: r.status ?? null,
      message: cut(r.message),
    }));
  const identity = op?.finished_at
    ? [
        source.id,
        n.app,
        n.trigger,
        op.revision ?? null,
        finishedAt?.toISOString(),
      ]
    : [
        source.id,
        n.app,
        n.trigger,
        op?.revision ?? null,
        n.sync_status ?? null,
        n.health_status ?? null,
        Math.floor(receivedAt.getTime() / NO_OPERATION_REPLAY_WINDOW_MS),
      ];
  return {
    eventType,
    summary: deployTitle(eventType, n.app, n.sync_status),
    severity:
      eventType === 'sync_failed' || eventType === 'health_degraded'
        ? 'warning'
        : 'info',
    scannedAt: finishedAt ?? receivedAt,
    dedupKey: createHash('sha256')
      .update(JSON.stringify(identity))
      .digest('base64url'),
    details: {
      provider: 'argocd',
      trigger: n.trigger,
      app_name: n.app,
      app_namespace: n.app_namespace ?? null,
      project: n.project ?? null,
      namespace,
      destination_server: n.destination.server ?? null,
      destination_name: n.destination.name ?? null,
      repo_url: n.repo_url ? (stripRepoUrlUserinfo(n.repo_url) ?? null) : null,
      revision: op?.revision ?? null,
      sync_status: n.sync_status ?? null,
      health_status: n.health_status ?? null,
      phase: op?.phase ?? null,
      message: cut(op?.message),
      started_at: op?.started_at ?? null,
      finished_at: op?.finished_at ?? null,
      actor,
      resources,
      resources_truncated: (op?.resources?.length ?? 0) > resources.length,
    },
  };
}

const INSERT_DEPLOY = `
  insert into change_events
    (source, event_type, client_id, environment_id, host_id, scanned_at,
     severity, summary, details, dedup_key)
  values ('${DEPLOY_SOURCE}', $1, $2, $3, null, $4, $5, $6, $7, $8)
  on conflict (client_id, dedup_key) where dedup_key is not null do nothing
  returning id`;

const FIND_DEPLOY = `
  select id from change_events where client_id = $1 and dedup_key = $2`;

export interface StoredNotification {
  id: string;
  /** False for a replay of a notification stored before. */
  created: boolean;
}

/** Stores one notification of `source` (a replay is not stored again). */
export async function storeArgocdNotification(
  db: Db,
  source: WebhookSource,
  body: unknown,
  receivedAt: Date = new Date(),
): Promise<StoredNotification> {
  const record = buildDeployRecord(source, body, receivedAt);
  const inserted = await queryMaybeOne<{ id: string }>(db, INSERT_DEPLOY, [
    record.eventType,
    source.clientId,
    source.environmentId,
    record.scannedAt,
    record.severity,
    record.summary,
    record.details,
    record.dedupKey,
  ]);
  if (inserted) return { id: inserted.id, created: true };
  const existing = await queryOne<{ id: string }>(db, FIND_DEPLOY, [
    source.clientId,
    record.dedupKey,
  ]);
  return { id: existing.id, created: false };
}
