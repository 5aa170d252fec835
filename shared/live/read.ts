/**
 * One live read (spec "Live Reads"), after the route's access checks (404,
 * then 403), its per-user rate limit (429, the route table entry's
 * `rateLimit`; not audited) and parameter validation (400) have passed:
 *
 * 1. the agent checks (409 no_agent, agent_offline, agent_too_old), so an
 *    agent that cannot serve the read is never asked;
 * 2. the audit row, `pending`, and at the same time the kube_query request
 *    on `proxima.system.commands.{agent_id}`, 15 s, with the caller's email
 *    (or `proxima-console:<subject type>:<id>`) as the actor. Nothing the
 *    agent answers is used before the row is stored: a row that cannot be
 *    written refuses the read (503 audit_unavailable) whatever the agent
 *    said. The reply or failure is mapped to the spec's response (502
 *    agent_error with the agent's message sanitized, 502 agent_unreachable,
 *    503 live_unavailable, 504 agent_timeout);
 * 3. the audit row completed with the outcome, duration and bytes.
 *
 * A failed agent check is audited too, by one row with its outcome.
 * Nothing read is stored.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Principal } from '../auth/access.ts';
import type { ClusterRecord } from '../clusters/repo.ts';
import type { Queryable } from '../db/pool.ts';
import { DomainError, LiveReadError } from '../errors.ts';
import { JsonText } from '../http/response.ts';
import { sanitizeMessage } from '../sanitize/secrets.ts';
import {
  type AuditEntry,
  type AuditOutcome,
  finishAudit,
  insertAudit,
} from './audit.ts';
import { checkAgent } from './gates.ts';
import {
  KUBE_QUERY_TIMEOUT_MS,
  KUBE_QUERY_VERSION,
  type KubeQueryName,
  type KubeQueryReply,
  type KubeQueryRequestInput,
  parseKubeQueryReply,
} from './kube-query.ts';
import { logsData } from './logs.ts';
import { kubeQuery, type LiveNats } from './nats.ts';
import {
  type LogsQuery,
  type ManifestQuery,
  type RevisionsQuery,
  tailOf,
} from './params.ts';

export type LiveReadQuery =
  | { route: 'manifest'; query: ManifestQuery }
  | { route: 'revisions'; query: RevisionsQuery }
  | { route: 'logs'; query: LogsQuery };

export interface LiveReadDeps {
  db: Queryable;
  nats: () => Promise<LiveNats | undefined>;
  /** The request's bound; the spec's 15 s unless a test says otherwise. */
  timeoutMs?: number;
}

/** The audit actor the agent is told: the email, else the subject. */
export function actorOf(principal: Principal): string {
  return principal.email ?? `proxima-console:user:${principal.sub}`;
}

/** The route's `data` as JSON text; its size is what the audit records. */
export async function readLive(
  principal: Principal,
  cluster: ClusterRecord,
  read: LiveReadQuery,
  deps: LiveReadDeps,
): Promise<JsonText> {
  const started = performance.now();
  const actor = actorOf(principal);
  const requestId = randomUUID();
  const entry = auditEntry(principal, cluster, read, actor, requestId);
  const outcomeOf = (error: unknown): AuditOutcome => ({
    outcome: error instanceof DomainError ? error.code : 'internal_error',
    status: error instanceof DomainError ? error.status : 500,
    durationMs: Math.round(performance.now() - started),
    bytes: 0,
  });

  let timestamps: boolean;
  try {
    ({ timestamps } = checkAgent(cluster, read.route, {
      sinceTime: read.route === 'logs' && read.query.since_time !== undefined,
    }));
  } catch (error) {
    await insertAudit(deps.db, entry, outcomeOf(error));
    throw error;
  }

  // The row and the request travel together: the agent's answer waits for
  // the row (the database's round trip is shorter than the agent's).
  const pending = insertAudit(deps.db, entry);
  const asked = (async () =>
    kubeQuery(
      await deps.nats(),
      cluster.agent_id,
      requestOf(read, actor, requestId, timestamps),
      deps.timeoutMs ?? KUBE_QUERY_TIMEOUT_MS,
    ))();
  // Read below once the row is stored; until then its failure is no one's.
  asked.catch(() => undefined);
  const auditId = await pending;
  let data: JsonText;
  try {
    const reply = parseReply(read.route, await asked);
    data = new JsonText(JSON.stringify(dataOf(read, reply, timestamps)));
  } catch (error) {
    await finishAudit(deps.db, auditId, outcomeOf(error));
    throw error;
  }
  await finishAudit(deps.db, auditId, {
    outcome: 'ok',
    status: 200,
    durationMs: Math.round(performance.now() - started),
    bytes: Buffer.byteLength(data.text),
  });
  return data;
}

function auditEntry(
  principal: Principal,
  cluster: ClusterRecord,
  read: LiveReadQuery,
  actor: string,
  requestId: string,
): AuditEntry {
  const base = {
    requestId,
    clientId: cluster.client_id,
    environmentId: cluster.environment_id,
    clusterId: cluster.id,
    clusterName: cluster.name,
    agentId: cluster.agent_id,
    subject: principal.sub,
    email: principal.email,
    actor,
    route: read.route,
  };
  if (read.route !== 'logs') {
    const { kind, namespace, name } = read.query;
    return { ...base, kind, namespace, name };
  }
  const { namespace, pod, container, previous, since_time } = read.query;
  return {
    ...base,
    namespace,
    pod,
    container,
    previous: previous ?? false,
    sinceTime: since_time?.toISOString(),
  };
}

/** Only the fields of the chosen query are sent (wire contract). */
function requestOf(
  read: LiveReadQuery,
  actor: string,
  requestId: string,
  timestamps: boolean,
): KubeQueryRequestInput {
  const envelope = {
    type: 'kube_query',
    version: KUBE_QUERY_VERSION,
    request_id: requestId,
    actor,
  } as const;
  if (read.route !== 'logs') {
    const { kind, namespace, name } = read.query;
    return {
      ...envelope,
      query: read.route,
      kind,
      namespace,
      name,
    } as KubeQueryRequestInput;
  }
  const q = read.query;
  return {
    ...envelope,
    query: 'logs',
    namespace: q.namespace,
    pod: q.pod,
    ...(q.container === undefined ? {} : { container: q.container }),
    tail: tailOf(q),
    previous: q.previous ?? false,
    // An agent before v0.8.0 would ignore both; the gate kept it from
    // seeing since_time, and it is not asked for timestamps.
    ...(q.since_time === undefined
      ? {}
      : { since_time: q.since_time.toISOString() }),
    ...(timestamps ? { timestamps: true } : {}),
  };
}

function agentError(message: string, cause?: unknown): LiveReadError {
  return new LiveReadError('agent_error', message, { cause });
}

/** The reply, checked; an agent's error becomes 502 with its message sanitized. */
function parseReply<Q extends KubeQueryName>(
  route: Q,
  bytes: Uint8Array,
): Extract<KubeQueryReply<Q>, { ok: true }> {
  const unreadable = "the cluster's agent sent a reply that could not be read";
  let json: unknown;
  try {
    // A view of the reply's bytes, not a copy (a manifest is ~100 KB).
    json = JSON.parse(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(
        'utf8',
      ),
    );
  } catch {
    // Not its SyntaxError as the cause: V8 quotes the text around the
    // fault, and the error log is no place for a log line's secret.
    throw agentError(
      unreadable,
      new Error(`the reply is not JSON (${bytes.byteLength} bytes)`),
    );
  }
  let reply: KubeQueryReply<Q>;
  try {
    reply = parseKubeQueryReply(route, json);
  } catch (error) {
    throw agentError(unreadable, error);
  }
  if (!reply.ok) {
    throw agentError(sanitizeMessage(reply.error.message || reply.error.code));
  }
  return reply as Extract<KubeQueryReply<Q>, { ok: true }>;
}

function dataOf(
  read: LiveReadQuery,
  reply: Extract<KubeQueryReply, { ok: true }>,
  timestamps: boolean,
): unknown {
  const { notes, observed_at } = reply;
  if (read.route !== 'logs') {
    // The result's schema keeps exactly the response's fields, in order:
    // kind, namespace, name, then object (manifest) or revisions and
    // truncated (revisions).
    return { ...(reply.result as object), notes, observed_at };
  }
  const result = reply.result as Extract<
    KubeQueryReply<'logs'>,
    { ok: true }
  >['result'];
  return logsData(
    result,
    { namespace: read.query.namespace, timestamps },
    reply,
  );
}
