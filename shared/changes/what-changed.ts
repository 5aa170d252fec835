/**
 * The what-changed timeline (spec: "What Changed (timeline)",
 * GET /api/v1/clusters/{id}/changes): one list, newest first, of a cluster's
 * recorded changes, deploys, Kubernetes events and alert groups, in the
 * whole cluster, one namespace or one workload.
 *
 * source  | kind   | permission   | cap
 * ------- | ------ | ------------ | ---
 * changes | change | changes:read | 200
 * deploys | deploy | changes:read | 100
 * events  | event  | assets:read  | 200
 * alerts  | alert  | alerts:read  | 100
 *
 * Each source keeps its newest items up to its cap (one more is read to
 * know whether it was truncated). A source the caller may not read is not
 * queried (`forbidden`); a failed event read is `unavailable` and the rest
 * still answers. Every query is pinned to the stored cluster's client and
 * environment, and carries the caller's scope for the source's permission
 * as a second wall.
 */

import type { Scope } from '../auth/access.ts';
import { clusterInScope } from '../auth/scope-sql.ts';
import { SqlParams } from '../db/params.ts';
import { type Queryable, query } from '../db/pool.ts';
import { ValidationError } from '../errors.ts';
import {
  ownedNamePatterns,
  WORKLOAD_KINDS,
  WORKLOAD_LABEL,
  type WorkloadKind,
} from '../events/workload-match.ts';
import { logger } from '../observability/logger.ts';
import { sanitizeMessage } from '../sanitize/secrets.ts';
import { DEPLOY_SOURCE } from '../webhooks/argocd.ts';
import { changeWindow, requireNamespaceForWorkload } from './feed.ts';
import type { WhatChangedParameters } from './params.ts';
import { SOURCE_PERMISSION, SOURCES, type TimelineSource } from './sources.ts';

export { SOURCE_PERMISSION, SOURCES, type TimelineSource };

export const SOURCE_CAP: Record<TimelineSource, number> = {
  changes: 200,
  deploys: 100,
  events: 200,
  alerts: 100,
};

/** The event reasons the timeline shows. */
export const TIMELINE_EVENT_REASONS = [
  'ScalingReplicaSet',
  'Killing',
  'BackOff',
  'FailedScheduling',
  'Evicted',
  'OOMKilling',
] as const;

const DAY_MS = 24 * 3_600_000;
const MAX_WINDOW_MS = 30 * DAY_MS;

// ------------------------------------------------------------ parameters

export interface WhatChangedQuery {
  namespace?: string | undefined;
  workload?: string | undefined;
  /** The workload's possible kinds: the one given, else all four. */
  kinds: readonly WorkloadKind[];
  from: Date;
  to: Date;
}

/** The cross-parameter rules; each a 400 naming the parameter. */
export function whatChangedQuery(
  params: WhatChangedParameters,
  now: Date = new Date(),
): WhatChangedQuery {
  const fail = (param: string, message: string): never => {
    throw new ValidationError(message, { details: { param } });
  };
  requireNamespaceForWorkload(params);
  if (params.kind && !params.workload) fail('kind', 'kind needs workload');
  const { from, to } = changeWindow(params, now);
  if (to.getTime() - from.getTime() > MAX_WINDOW_MS) {
    fail('from', 'the window from … to may not exceed 30 days');
  }
  return {
    namespace: params.namespace,
    workload: params.workload,
    kinds: params.kind ? [params.kind] : WORKLOAD_KINDS,
    from,
    to,
  };
}

// ---------------------------------------------------------------- items

export interface TimelineItem {
  id: string;
  time: string;
  kind: 'change' | 'deploy' | 'event' | 'alert';
  title: string;
  detail?: string;
  link?: string;
  severity?: string;
  type?: string;
  reason?: string;
  namespace?: string;
  object_kind?: string;
  object_name?: string;
  actor?: string;
  scope?: 'client';
  changes?: unknown[];
  changes_truncated?: true;
}

/** Drops the fields with no value: optional fields are omitted when empty. */
function compact(item: TimelineItem): TimelineItem {
  // A for-in loop, not Object.entries: a read compacts up to 600 items.
  const out: Record<string, unknown> = {};
  const fields = item as unknown as Record<string, unknown>;
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value) && value.length === 0) continue;
    out[key] = value;
  }
  return out as unknown as TimelineItem;
}

const KIND_ORDER: Record<TimelineItem['kind'], number> = {
  change: 0,
  deploy: 1,
  event: 2,
  alert: 3,
};

/** Newest first; at the same instant by kind, then id. */
export function compareItems(a: TimelineItem, b: TimelineItem): number {
  if (a.time !== b.time) return a.time < b.time ? 1 : -1;
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  if (a.id === b.id) return 0;
  return a.id < b.id ? -1 : 1;
}

// ------------------------------------------------------------- the read

export interface TimelineCluster {
  id: string;
  clientId: string;
  environmentId: string;
}

export type SourceState = 'ok' | 'forbidden' | 'unavailable';

export interface WhatChanged {
  items: TimelineItem[];
  truncated: Record<TimelineSource, boolean>;
  sources: Record<TimelineSource, SourceState>;
  from: string;
  to: string;
  notes: string[];
}

/** What the events store answers for the timeline. */
export interface TimelineEvent {
  /** The events timeline's content id (`event:` + 16 hex digits). */
  id: string;
  time: Date;
  namespace: string;
  objectKind: string;
  objectName: string;
  type: string | null;
  reason: string;
  count: number | null;
  message: string | null;
}

export interface TimelineEventsRequest {
  cluster: TimelineCluster;
  /** The caller's scope for the events' permission (the second wall). */
  scope: Scope;
  namespace?: string | undefined;
  /** Only the workload's own events and its ReplicaSets' and pods'. */
  workload?: string | undefined;
  /** The kinds the workload may be. */
  kinds: readonly WorkloadKind[];
  reasons: readonly string[];
  from: Date;
  to: Date;
  limit: number;
}

export interface TimelineEventsResult {
  events: TimelineEvent[];
  /** More events than `limit` matched. */
  truncated: boolean;
  /** The store's own notes (retention, old agent). */
  notes: string[];
  /** The store's retention note, dropped when the window is cut to the history's days. */
  retentionNote?: string | undefined;
}

/** The events-timeline service, as the timeline reads it. */
export type TimelineEventsReader = (
  request: TimelineEventsRequest,
) => Promise<TimelineEventsResult>;

export interface WhatChangedInput {
  cluster: TimelineCluster;
  /** The sources the caller holds the permission for on the cluster. */
  readable: ReadonlySet<TimelineSource>;
  /** The caller's scope for each permission (the second wall). */
  scopeFor: (permission: string) => Scope;
  query: WhatChangedQuery;
  events: TimelineEventsReader;
  /** How many days of events the history keeps (EVENT_HISTORY_DAYS). */
  historyDays: number;
  now?: Date;
}

const FORBIDDEN_NOTE: Record<TimelineSource, string> = {
  changes: 'Recorded changes are not shown: they need changes:read.',
  deploys: 'Deploys are not shown: they need changes:read.',
  events: 'Kubernetes events are not shown: they need assets:read.',
  alerts: 'Alerts are not shown: they need alerts:read.',
};

const TRUNCATED_NOTE: Record<TimelineSource, string> = {
  changes: 'Only the newest 200 recorded changes of this window are shown.',
  deploys: 'Only the newest 100 deploys of this window are shown.',
  events:
    'Only the newest 200 events of this window are shown; older events may have been left out.',
  alerts: 'Only the newest 100 alert groups of this window are shown.',
};

export const DEPLOY_NOTE =
  'Deploys are ArgoCD notifications (source deployment): attributed by their ArgoCD application when Console knows where it deploys, otherwise by their destination namespace.';
export const NO_NAMESPACE_ALERTS_NOTE =
  'Alerts without a namespace label are not shown here; they stay on the Alerts page.';
export const SHARED_ENVIRONMENT_NOTE =
  "This cluster's environment has other clusters: alerts, and deploys of apps Console does not know, are matched by namespace and may belong to another cluster with the same namespace.";
export const SHARED_ENVIRONMENT_UNKNOWN_NOTE =
  "Whether this cluster's environment has other clusters could not be checked: alerts, and deploys of apps Console does not know, are matched by namespace and may belong to another cluster with the same namespace.";
export const EVENTS_UNAVAILABLE_NOTE =
  'Kubernetes events could not be read; the other sources are complete.';
/** The note of a window that starts before the event history's first day. */
export const eventsWindowNote = (historyDays: number) =>
  `only the last ${historyDays} days of this window show events`;

const clientWideNote = (n: number) =>
  `${n} ${n === 1 ? 'deploy comes' : 'deploys come'} from a client-wide source (no environment): ${n === 1 ? 'it' : 'they'} may belong to a cluster of another environment with the same namespace.`;

/** The whole read; a database failure rejects (a 500). */
export async function readWhatChanged(
  db: Queryable,
  input: WhatChangedInput,
): Promise<WhatChanged> {
  const { cluster, query: q, readable } = input;
  const now = input.now ?? new Date();
  const truncated = {
    changes: false,
    deploys: false,
    events: false,
    alerts: false,
  };
  const sources = {} as Record<TimelineSource, SourceState>;
  for (const source of SOURCES) {
    sources[source] = readable.has(source) ? 'ok' : 'forbidden';
  }

  const [stored, events] = await Promise.all([
    readStoredSources(db, input),
    readable.has('events')
      ? readEvents(
          input.events,
          cluster,
          input.scopeFor(SOURCE_PERMISSION.events),
          q,
          now,
          input.historyDays,
        )
      : undefined,
  ]);
  const { changes, deploys, alerts, shared } = stored;

  const items: TimelineItem[] = [];
  const notes: string[] = [];
  for (const source of SOURCES) {
    if (!readable.has(source)) notes.push(FORBIDDEN_NOTE[source]);
  }
  for (const [source, read] of [
    ['changes', changes],
    ['deploys', deploys],
    ['alerts', alerts],
  ] as const) {
    if (!read) continue;
    items.push(...read.items);
    truncated[source] = read.truncated;
  }
  if (deploys) {
    notes.push(DEPLOY_NOTE);
    if (deploys.clientWide > 0) notes.push(clientWideNote(deploys.clientWide));
  }
  if (events) {
    if (events.ok) {
      items.push(...events.items);
      truncated.events = events.truncated;
      notes.push(...events.notes);
    } else {
      sources.events = 'unavailable';
      notes.push(EVENTS_UNAVAILABLE_NOTE);
    }
  }
  if (alerts) notes.push(NO_NAMESPACE_ALERTS_NOTE);
  if (shared === true) notes.push(SHARED_ENVIRONMENT_NOTE);
  if (shared === 'unknown') notes.push(SHARED_ENVIRONMENT_UNKNOWN_NOTE);
  for (const source of SOURCES) {
    if (truncated[source]) notes.push(TRUNCATED_NOTE[source]);
  }
  items.sort(compareItems);
  return {
    items: items.map(compact),
    truncated,
    sources,
    from: q.from.toISOString(),
    to: q.to.toISOString(),
    notes,
  };
}

interface SourceRead {
  items: TimelineItem[];
  truncated: boolean;
}

// ------------------------------------------------- the stored sources

/**
 * The columns every part of the stored sources' statement answers, with
 * their types (a part leaves the others null): `part` names the part, the
 * rest are the fields its items are built from.
 */
const ROW_COLUMNS = {
  part: 'text',
  id: 'uuid',
  time: 'timestamptz',
  title: 'text',
  severity: 'text',
  type: 'text',
  detail: 'text',
  namespace: 'text',
  object_kind: 'text',
  object_name: 'text',
  changes: 'jsonb',
  changes_truncated: 'boolean',
  app_name: 'text',
  revision: 'text',
  actor: 'text',
  client_wide: 'boolean',
  attributed: 'boolean',
  clusters: 'int',
} as const;

type RowPart = 'changes' | 'deploys' | 'alerts' | 'environment';

interface StoredRow extends Record<string, unknown> {
  part: RowPart;
  id: string;
  time: Date;
  title: string;
  severity: string | null;
  type: string;
  detail: string | null;
  namespace: string | null;
  object_kind: string | null;
  object_name: string | null;
  changes: unknown[] | null;
  changes_truncated: boolean | null;
  app_name: string | null;
  revision: string | null;
  actor: string | null;
  client_wide: boolean | null;
  attributed: boolean | null;
  clusters: number | null;
}

/** A part's select list: its own columns' expressions, typed nulls for the rest. */
function rowColumns(
  part: RowPart,
  own: Partial<Record<Exclude<keyof typeof ROW_COLUMNS, 'part'>, string>>,
): string {
  const list = [`'${part}'::text as part`];
  for (const [column, type] of Object.entries(ROW_COLUMNS)) {
    if (column === 'part') continue;
    list.push(
      `${own[column as keyof typeof own] ?? `null::${type}`} as ${column}`,
    );
  }
  return list.join(', ');
}

/**
 * The columns a change_events row gives whichever part reads it: recorded
 * changes and deploys are both rows of that table (aliased `e`).
 */
const CHANGE_ROW_COLUMNS = {
  id: 'e.id',
  time: 'coalesce(e.scanned_at, e.created_at)',
  title: 'e.summary',
  severity: 'e.severity',
  type: 'e.event_type',
  namespace: `e.details ->> 'namespace'`,
} as const;

/** One part of the statement, with the common table expressions it needs. */
interface StatementPart {
  ctes: string[];
  select: string;
}

interface StoredSources {
  changes?: SourceRead | undefined;
  deploys?: (SourceRead & { clientWide: number }) | undefined;
  alerts?: SourceRead | undefined;
  /** Whether the environment holds another cluster (see environmentIsShared). */
  shared?: boolean | 'unknown' | undefined;
}

/**
 * Recorded changes, deploys, alert groups and the environment's cluster
 * count, as one statement: one round trip, one parse, and the caller's
 * scope on the cluster checked once per permission (each part carries its
 * gate as an InitPlan over the gate's expression). Each part keeps its own
 * order and limit; its rows come back in that order (an Append returns each
 * subplan's rows in order), which `keep` relies on.
 *
 * The count must not fail the read: should the statement fail with the
 * count in it, the sources are read again without it and the count alone.
 */
async function readStoredSources(
  db: Queryable,
  input: WhatChangedInput,
): Promise<StoredSources> {
  const { readable } = input;
  const withCount = readable.has('alerts') || readable.has('deploys');
  if (!readable.has('changes') && !withCount) return {};
  if (!withCount) return readStatement(db, input, false);
  try {
    return await readStatement(db, input, true);
  } catch {
    // Tried again below without the count: a database that is down fails
    // there too, as any read would.
  }
  const [read, shared] = await Promise.all([
    readStatement(db, input, false),
    environmentIsShared(db, input.cluster),
  ]);
  return { ...read, shared };
}

async function readStatement(
  db: Queryable,
  input: WhatChangedInput,
  withCount: boolean,
): Promise<StoredSources> {
  const { cluster, query: q, readable } = input;
  const p = new SqlParams();
  // One gate per permission: changes and deploys share theirs.
  const gates = new Map<string, string>();
  const ctes: string[] = [];
  const gate = (source: TimelineSource): string => {
    const permission = SOURCE_PERMISSION[source];
    let name = gates.get(permission);
    if (name === undefined) {
      name = `gate_${gates.size}`;
      gates.set(permission, name);
      ctes.push(
        `${name} as (select ${clusterInScope(p, cluster.id, input.scopeFor(permission))} as inside)`,
      );
    }
    return `(select inside from ${name})`;
  };
  const parts: StatementPart[] = [];
  if (readable.has('changes')) {
    parts.push(changesPart(p, cluster, q, gate('changes')));
  }
  if (readable.has('deploys')) {
    parts.push(deploysPart(p, cluster, q, gate('deploys')));
  }
  if (readable.has('alerts')) {
    parts.push(alertsPart(p, cluster, q, gate('alerts')));
  }
  if (withCount) {
    parts.push({
      ctes: [],
      select: `select ${rowColumns('environment', { clusters: 'c.n' })}
               from (${environmentClustersSql(p.add(cluster.environmentId))}) c`,
    });
  }
  for (const part of parts) ctes.push(...part.ctes);
  const rows = await query<StoredRow>(
    db,
    `with ${ctes.join(',\n')}
     ${parts.map((part) => `(${part.select})`).join('\nunion all\n')}`,
    p.values,
  );
  const byPart: Record<RowPart, StoredRow[]> = {
    changes: [],
    deploys: [],
    alerts: [],
    environment: [],
  };
  for (const row of rows) byPart[row.part].push(row);
  return {
    changes: readable.has('changes') ? changeItems(byPart.changes) : undefined,
    deploys: readable.has('deploys') ? deployItems(byPart.deploys) : undefined,
    alerts: readable.has('alerts') ? alertItems(byPart.alerts) : undefined,
    shared: withCount ? (byPart.environment[0]?.clusters ?? 0) > 1 : undefined,
  };
}

function keep<R>(rows: R[], cap: number): { rows: R[]; truncated: boolean } {
  return { rows: rows.slice(0, cap), truncated: rows.length > cap };
}

/**
 * A deploy or an alert group is the cluster's environment's when pinned to
 * it, or client-wide (no environment) from a host of it. One statement
 * with the two ORed reads every row of the client's window and sorts them
 * (the planner cannot walk an index in order under an OR, and takes the
 * environment for one of many), a cost that grows with the client's other
 * clusters. Each branch here walks its own index newest first
 * (migrations/0028) and stops at `limit`; the union keeps the newest
 * `limit` of both, in the branches' order: time desc, then id desc.
 *
 * `gate` (the cluster inside the caller's scope) holds for every row or
 * none, so it is written once, over the union, where it runs once as a
 * one-time filter: written in each branch, the planner planned it twice.
 */
function newestOfEnvironment(
  branch: (environment: 'pinned' | 'clientWide') => string,
  gate: string,
  limit: number,
): string {
  return `select * from (
       (${branch('pinned')})
       union all
       (${branch('clientWide')})
     ) u
     where ${gate}
     order by u.time desc, u.id desc
     limit ${limit}`;
}

// -------------------------------------------------------------- changes

// Only the fields the items show are read out of `details` (a recorded
// change always names its kind, namespace and name as strings:
// shared/changes/record.ts), so the rest of the document is neither sent
// nor parsed.
function changesPart(
  p: SqlParams,
  cluster: TimelineCluster,
  q: WhatChangedQuery,
  gate: string,
): StatementPart {
  const where = [
    `e.client_id = ${p.add(cluster.clientId)}`,
    `coalesce(e.scanned_at, e.created_at) between ${p.add(q.from)} and ${p.add(q.to)}`,
    `e.source = 'k8s-config'`,
    `e.environment_id = ${p.add(cluster.environmentId)}`,
    `e.details ->> 'cluster_id' = ${p.add(cluster.id)}`,
  ];
  if (q.namespace) {
    where.push(`e.details ->> 'namespace' = ${p.add(q.namespace)}`);
  }
  if (q.workload) {
    where.push(`e.details ->> 'name' = ${p.add(q.workload)}`);
    where.push(`e.details ->> 'kind' = any(${p.add(q.kinds)}::text[])`);
  }
  where.push(gate);
  const columns = rowColumns('changes', {
    ...CHANGE_ROW_COLUMNS,
    object_kind: `e.details ->> 'kind'`,
    object_name: `e.details ->> 'name'`,
    changes: `e.details -> 'changes'`,
    changes_truncated: `coalesce(e.details -> 'truncated' = 'true', false)`,
  });
  return {
    ctes: [],
    select: `select ${columns}
     from change_events e
     where ${where.join(' and ')}
     order by coalesce(e.scanned_at, e.created_at) desc, e.id desc
     limit ${SOURCE_CAP.changes + 1}`,
  };
}

function changeItems(rows: StoredRow[]): SourceRead {
  const kept = keep(rows, SOURCE_CAP.changes);
  return {
    truncated: kept.truncated,
    items: kept.rows.map((r) => ({
      id: `change:${r.id}`,
      time: r.time.toISOString(),
      kind: 'change',
      title: r.title,
      detail: `${r.object_kind ?? undefined} ${r.namespace ?? undefined}/${r.object_name ?? undefined}`,
      link: `/changes/${r.id}`,
      severity: r.severity ?? undefined,
      type: r.type,
      namespace: r.namespace ?? undefined,
      object_kind: r.object_kind ?? undefined,
      object_name: r.object_name ?? undefined,
      changes: r.changes ?? undefined,
      ...(r.changes_truncated ? { changes_truncated: true as const } : {}),
    })),
  };
}

// -------------------------------------------------------------- deploys

/** How many characters of a revision the detail line shows. */
const REVISION_CHARS = 6;

// Only the four fields the items show are read out of `details`: a
// deploy's details also hold its synced resources (up to 200, with their
// messages), which the timeline never shows.
function deploysPart(
  p: SqlParams,
  cluster: TimelineCluster,
  q: WhatChangedQuery,
  gate: string,
): StatementPart {
  const clusterId = p.add(cluster.id);
  const env = p.add(cluster.environmentId);
  // Whether an Application mapped to this cluster concerns the view: the
  // whole cluster; a namespace (its destination or any of its resources);
  // a workload (a resource row naming it).
  let concerns = 'true';
  let fallback = 'true';
  if (q.namespace && !q.workload) {
    const ns = p.add(q.namespace);
    concerns = `(a.destination_namespace = ${ns} or exists (
      select 1 from argocd_application_resources r
      where r.application_id = a.id and r.namespace = ${ns}))`;
    fallback = `e.details ->> 'namespace' = ${ns}`;
  } else if (q.namespace && q.workload) {
    const ns = p.add(q.namespace);
    concerns = `exists (
      select 1 from argocd_application_resources r
      where r.application_id = a.id and r.namespace = ${ns}
        and r.name = ${p.add(q.workload)} and r.kind = any(${p.add(q.kinds)}::text[]))`;
    fallback = `e.details ->> 'namespace' = ${ns}`;
  }
  const where = [
    `e.client_id = ${p.add(cluster.clientId)}`,
    `coalesce(e.scanned_at, e.created_at) between ${p.add(q.from)} and ${p.add(q.to)}`,
    `e.source = '${DEPLOY_SOURCE}'`,
    `e.details ? 'namespace'`,
  ];
  if (q.namespace) {
    // What the attribution rule below implies, in a form the namespace and
    // app-name indexes (migrations/0020) answer: the view's namespace, or
    // an app that concerns the view. Without it every deploy of the client's
    // window is read to keep the view's few.
    where.push(`(${fallback} or e.details ->> 'app_name' = any(array(
      select apps.name from apps where apps.concerns)))`);
  }
  const appsClient = p.add(cluster.clientId);
  // A deploy of an app Console does not know is listed by its namespace
  // (`fallback`); a client-wide one only on a cluster that has the
  // namespace (spec: "for every environment's cluster that has the
  // namespace"); an attributed one by its app alone. Each branch carries
  // only its own half of that rule: the pinned one has no use for the
  // cluster's namespaces, nor the other for the environment's hosts.
  const environment = {
    pinned: `e.environment_id = ${env}`,
    clientWide: `e.environment_id is null and (e.host_id is null
           or exists (select 1 from hosts h where h.id = e.host_id and h.environment_id = ${env}))`,
  };
  const unattributed = {
    pinned: fallback,
    clientWide: `${fallback} and exists (select 1 from k8s_namespaces n
                  where n.cluster_id = ${clusterId} and n.name = e.details ->> 'namespace')`,
  };
  const columns = rowColumns('deploys', {
    ...CHANGE_ROW_COLUMNS,
    app_name: `e.details ->> 'app_name'`,
    revision: `e.details ->> 'revision'`,
    actor: `e.details ->> 'actor'`,
    client_wide: 'e.environment_id is null',
    attributed: 'apps.name is not null',
  });
  const branch = (which: 'pinned' | 'clientWide') =>
    `select ${columns}
     from change_events e
     left join apps on apps.name = e.details ->> 'app_name'
     where ${environment[which]} and ${where.join(' and ')}
       and case when apps.name is null then ${unattributed[which]}
           else apps.concerns end
     order by coalesce(e.scanned_at, e.created_at) desc, e.id desc
     limit ${SOURCE_CAP.deploys + 1}`;
  return {
    ctes: [
      `apps as (
       select a.name,
              coalesce(bool_or(a.mapped_cluster_id = ${clusterId} and ${concerns}), false) as concerns
       from argocd_applications a
       where a.client_id = ${appsClient}
       group by a.name
     )`,
    ],
    select: newestOfEnvironment(branch, gate, SOURCE_CAP.deploys + 1),
  };
}

function deployItems(rows: StoredRow[]): SourceRead & { clientWide: number } {
  const kept = keep(rows, SOURCE_CAP.deploys);
  let clientWide = 0;
  const items = kept.rows.map((r): TimelineItem => {
    const scoped = r.client_wide === true && r.attributed !== true;
    if (scoped) clientWide++;
    const revision = r.revision?.slice(0, REVISION_CHARS);
    const detail = [
      `app ${r.app_name ?? undefined}`,
      `namespace ${r.namespace ?? undefined}`,
      ...(revision ? [`revision ${revision}`] : []),
    ].join(' · ');
    return {
      id: `deploy:${r.id}`,
      time: r.time.toISOString(),
      kind: 'deploy',
      title: r.title,
      detail,
      link: `/changes/${r.id}`,
      severity: r.severity ?? undefined,
      type: r.type,
      namespace: r.namespace ?? undefined,
      actor: r.actor ?? undefined,
      ...(scoped ? { scope: 'client' as const } : {}),
    };
  });
  return { items, truncated: kept.truncated, clientWide };
}

// --------------------------------------------------------------- alerts

function alertsPart(
  p: SqlParams,
  cluster: TimelineCluster,
  q: WhatChangedQuery,
  gate: string,
): StatementPart {
  const env = p.add(cluster.environmentId);
  // One alert of the group must match: its namespace label always, and for
  // a workload its workload label or a pod label of the right shape.
  let match = `a ->> 'namespace' <> ''`;
  // A namespace view reads only the groups one of whose alerts carries the
  // namespace, through their `client/namespace` keys (migrations/0020), so
  // only those are sorted and walked alert by alert below.
  let holds = 'true';
  if (q.namespace) {
    const ns = p.add(q.namespace);
    match = `a ->> 'namespace' = ${ns}`;
    holds = `alert_group_namespace_keys(g.client_id, g.alert_labels)
           @> array[${p.add(cluster.clientId)}::uuid::text || '/' || ${ns}]`;
  }
  if (q.namespace && q.workload) {
    const name = p.add(q.workload);
    const labels = q.kinds.map((k) => `a ->> '${WORKLOAD_LABEL[k]}' = ${name}`);
    const pod = p.add(ownedNamePatterns(q.kinds, q.workload).pod);
    match = `${match} and (${labels.join(' or ')} or a ->> 'pod' ~ ${pod})`;
  }
  const client = p.add(cluster.clientId);
  const window = `g.first_fired_at between ${p.add(q.from)} and ${p.add(q.to)}`;
  // Each branch walks its index newest first and runs the alert-label match
  // on each group until the cap is filled (see newestOfEnvironment).
  const environment = {
    pinned: `g.environment_id = ${env}`,
    clientWide: `g.environment_id is null and exists (
         select 1 from hosts h where h.id = g.host_id and h.environment_id = ${env})`,
  };
  const columns = rowColumns('alerts', {
    id: 'g.id',
    time: 'g.first_fired_at',
    title: 'g.title',
    severity: 'g.severity',
    type: 'g.status',
    detail: 'g.detail',
    namespace: 'm.namespace',
  });
  const branch = (which: 'pinned' | 'clientWide') =>
    `select ${columns}
     from alert_groups g
     cross join lateral (
       select a ->> 'namespace' as namespace
       from jsonb_array_elements(g.alert_labels) as a
       where ${match}
       limit 1
     ) m
     where g.client_id = ${client} and ${window} and ${environment[which]}
       and ${holds}
     order by g.first_fired_at desc, g.id desc
     limit ${SOURCE_CAP.alerts + 1}`;
  return {
    ctes: [],
    select: newestOfEnvironment(branch, gate, SOURCE_CAP.alerts + 1),
  };
}

function alertItems(rows: StoredRow[]): SourceRead {
  const kept = keep(rows, SOURCE_CAP.alerts);
  return {
    truncated: kept.truncated,
    items: kept.rows.map((r) => ({
      id: `alert:${r.id}`,
      time: r.time.toISOString(),
      kind: 'alert',
      title: r.title,
      detail: r.detail ?? undefined,
      link: `/alerts/${r.id}`,
      severity: r.severity ?? undefined,
      type: r.type,
      namespace: r.namespace ?? undefined,
    })),
  };
}

// ---------------------------------------------------------------- events

async function readEvents(
  reader: TimelineEventsReader,
  cluster: TimelineCluster,
  scope: Scope,
  q: WhatChangedQuery,
  now: Date,
  historyDays: number,
): Promise<
  | { ok: true; items: TimelineItem[]; truncated: boolean; notes: string[] }
  | { ok: false }
> {
  const storeStart = new Date(now.getTime() - historyDays * DAY_MS);
  const cut = q.from < storeStart;
  const from = cut ? storeStart : q.from;
  if (from >= q.to) {
    return {
      ok: true,
      items: [],
      truncated: false,
      notes: [eventsWindowNote(historyDays)],
    };
  }
  let result: TimelineEventsResult;
  try {
    result = await reader({
      cluster,
      scope,
      namespace: q.namespace,
      workload: q.workload,
      kinds: q.kinds,
      reasons: TIMELINE_EVENT_REASONS,
      from,
      to: q.to,
      limit: SOURCE_CAP.events,
    });
  } catch (error) {
    logger.warn('what-changed: events could not be read', {
      clusterId: cluster.id,
      error: error instanceof Error ? error.message : String(error),
    });
    return { ok: false };
  }
  const notes = result.notes.filter(
    (n) => !(cut && n === result.retentionNote),
  );
  if (cut) notes.push(eventsWindowNote(historyDays));
  else if (result.retentionNote && !notes.includes(result.retentionNote)) {
    notes.push(result.retentionNote);
  }
  return {
    ok: true,
    truncated: result.truncated,
    notes,
    items: result.events.slice(0, SOURCE_CAP.events).map((e) => ({
      id: e.id,
      time: e.time.toISOString(),
      kind: 'event',
      title: `${e.reason} · ${e.objectKind} ${e.objectName}${
        e.count !== null && e.count > 1 ? ` (×${e.count})` : ''
      }`,
      detail: e.message === null ? undefined : sanitizeMessage(e.message),
      type: e.type ?? undefined,
      reason: e.reason,
      namespace: e.namespace,
      object_kind: e.objectKind,
      object_name: e.objectName,
    })),
  };
}

// ---------------------------------------------------- shared environment

/** How many clusters the environment holds, counted up to 2: `n`. */
function environmentClustersSql(environment: string): string {
  return `select count(*)::int as n from (
         select 1 from clusters where environment_id = ${environment} limit 2) c`;
}

/**
 * True when the cluster's environment holds another cluster; `unknown`
 * when that could not be counted (the read goes on, with the hedged note).
 * Read alone only when the sources' statement failed with it.
 */
async function environmentIsShared(
  db: Queryable,
  cluster: TimelineCluster,
): Promise<boolean | 'unknown'> {
  try {
    const [row] = await query<{ n: number }>(db, environmentClustersSql('$1'), [
      cluster.environmentId,
    ]);
    return (row?.n ?? 0) > 1;
  } catch (error) {
    logger.error(
      'what-changed: the environment clusters could not be counted',
      {
        clusterId: cluster.id,
        error: error instanceof Error ? error.message : String(error),
      },
    );
    return 'unknown';
  }
}
