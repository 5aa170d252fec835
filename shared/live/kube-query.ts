/**
 * The `kube_query` live-read protocol (wire-contract.md, "Live reads"): the
 * backend asks a cluster's agent to read the cluster now, by core NATS
 * request/reply on `proxima.system.commands.{agent_id}`. Both ends parse
 * with these schemas, so the request the backend sends is exactly the one
 * the agent reads, and the reply the agent builds is the one the backend
 * checks. Nothing is stored on either side.
 *
 * The backend has already applied the spec's parameter rules; the agent
 * parses again (a request that fails is answered `bad_request`), because
 * the subject is reachable by anything on the NATS account.
 *
 * Each schema is built on its first parse (`z.lazy`): a live read's
 * function parses one kind of reply and no request, and every function that
 * imports this file for its constants would otherwise build them all as it
 * loads (~4 ms of a cold start's CPU).
 */

import { DNS_1123_LABEL, DNS_1123_SUBDOMAIN } from '../patterns.ts';
import * as z from '../zod.ts';

export const KUBE_QUERY_VERSION = 1;
/** How long the backend waits for a reply. */
export const KUBE_QUERY_TIMEOUT_MS = 15_000;
/** The largest reply an agent sends (JSON bytes). */
export const KUBE_QUERY_REPLY_MAX_BYTES = 1024 * 1024;
/** One object (a manifest, or the revisions' pod templates together). */
export const KUBE_QUERY_OBJECT_BUDGET_BYTES = 512 * 1024;
/** Revisions answered at most, newest first. */
export const KUBE_QUERY_MAX_REVISIONS = 20;
export const LOG_TAIL_MIN = 1;
export const LOG_TAIL_MAX = 300;
export const LOG_TAIL_DEFAULT = 100;

/** The subject an agent answers live reads on. */
export function commandSubject(agentId: string): string {
  return `proxima.system.commands.${agentId.toLowerCase()}`;
}

/** The kinds `manifest` reads (Secrets and ConfigMaps never). */
export const MANIFEST_KINDS = [
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'Rollout',
  'ReplicaSet',
  'Pod',
  'Service',
  'Ingress',
  'HorizontalPodAutoscaler',
  'Job',
  'CronJob',
  'NetworkPolicy',
  'PersistentVolumeClaim',
] as const;
export type ManifestKind = (typeof MANIFEST_KINDS)[number];

/** The kinds `revisions` reads: the workloads with a rollout history. */
export const REVISION_KINDS = [
  'Deployment',
  'Rollout',
  'StatefulSet',
  'DaemonSet',
] as const;
export type RevisionKind = (typeof REVISION_KINDS)[number];

export const KUBE_QUERY_ERROR_CODES = [
  'not_found',
  'forbidden',
  'not_installed',
  'too_large',
  'bad_request',
  'internal',
] as const;
export type KubeQueryErrorCode = (typeof KUBE_QUERY_ERROR_CODES)[number];

const label = () =>
  z.string().check(z.regex(DNS_1123_LABEL, 'not a DNS-1123 label'));
const subdomain = () =>
  z.string().check(z.regex(DNS_1123_SUBDOMAIN, 'not a DNS-1123 subdomain'));

const envelope = () => ({
  type: z.literal('kube_query'),
  version: z.literal(KUBE_QUERY_VERSION),
  request_id: z.uuid(),
  /** The caller's email, or `proxima-console:<subject type>:<id>`. */
  actor: z.string().check(z.minLength(1), z.maxLength(320)),
});

export const manifestRequestSchema = z.lazy(() =>
  z.object({
    ...envelope(),
    query: z.literal('manifest'),
    kind: z.enum(MANIFEST_KINDS),
    namespace: label(),
    name: subdomain(),
  }),
);

export const revisionsRequestSchema = z.lazy(() =>
  z.object({
    ...envelope(),
    query: z.literal('revisions'),
    kind: z.enum(REVISION_KINDS),
    namespace: label(),
    name: subdomain(),
  }),
);

export const logsRequestSchema = z.lazy(() =>
  z.object({
    ...envelope(),
    query: z.literal('logs'),
    namespace: label(),
    pod: subdomain(),
    container: z.optional(label()),
    tail: z._default(
      z.int().check(z.minimum(LOG_TAIL_MIN), z.maximum(LOG_TAIL_MAX)),
      LOG_TAIL_DEFAULT,
    ),
    previous: z._default(z.boolean(), false),
    since_time: z.optional(z.iso.datetime({ offset: true })),
    timestamps: z._default(z.boolean(), false),
  }),
);

export const kubeQueryRequestSchema = z.lazy(() =>
  z.discriminatedUnion('query', [
    manifestRequestSchema,
    revisionsRequestSchema,
    logsRequestSchema,
  ]),
);

export type ManifestRequest = z.output<typeof manifestRequestSchema>;
export type RevisionsRequest = z.output<typeof revisionsRequestSchema>;
export type LogsRequest = z.output<typeof logsRequestSchema>;
export type KubeQueryRequest = z.output<typeof kubeQueryRequestSchema>;
/** What a sender builds: defaulted fields may be left out. */
export type KubeQueryRequestInput = z.input<typeof kubeQueryRequestSchema>;

// ----------------------------------------------------------------- results

const jsonObject = () => z.record(z.string(), z.unknown());

export const manifestResultSchema = z.lazy(() =>
  z.object({
    kind: z.string(),
    namespace: z.string(),
    name: z.string(),
    /** Redacted by the agent before it left the cluster. */
    object: jsonObject(),
  }),
);

export const revisionSchema = z.lazy(() =>
  z.object({
    revision: z.nullable(z.int()),
    name: z.string(),
    created: z.nullable(z.string()),
    replicas: z.nullable(z.int()),
    template_hash: z.nullable(z.string()),
    containers: z.array(z.object({ name: z.string(), image: z.string() })),
    /** Redacted like a manifest; null once the reply's budget is spent. */
    pod_template: z.nullable(jsonObject()),
  }),
);

export const revisionsResultSchema = z.lazy(() =>
  z.object({
    kind: z.string(),
    namespace: z.string(),
    name: z.string(),
    revisions: z.array(revisionSchema),
    truncated: z.boolean(),
  }),
);

export const logsResultSchema = z.lazy(() =>
  z.object({
    pod: z.string(),
    container: z.nullable(z.string()),
    previous: z.boolean(),
    /**
     * Raw lines; with `timestamps` each starts with the apiserver's RFC 3339
     * stamp and a space. Not sanitized here: the backend sanitizes the text.
     */
    lines: z.array(z.string()),
    truncated: z.boolean(),
    /** Set when the pod has several containers and none was named, or the named one does not exist. */
    containers: z.optional(z.array(z.string())),
    /**
     * Absent from an agent before v0.8.0, which knows no timestamps: its
     * lines are unstamped (spec: a plain tail on v0.7.12 is still served).
     */
    timestamps: z._default(z.boolean(), false),
  }),
);

export type ManifestResult = z.output<typeof manifestResultSchema>;
export type Revision = z.output<typeof revisionSchema>;
export type RevisionsResult = z.output<typeof revisionsResultSchema>;
export type LogsResult = z.output<typeof logsResultSchema>;

// ------------------------------------------------------------------ replies

/** A success reply's `result` is checked against the query it answers. */
export const kubeQueryReplySchema = z.lazy(() =>
  z.discriminatedUnion('ok', [
    z.object({
      ok: z.literal(true),
      agent_version: z.string(),
      observed_at: z.iso.datetime({ offset: true }),
      notes: z._default(z.array(z.string()), []),
      result: z.unknown(),
    }),
    z.object({
      ok: z.literal(false),
      agent_version: z.string(),
      error: z.object({
        code: z.enum(KUBE_QUERY_ERROR_CODES),
        message: z.string(),
      }),
    }),
  ]),
);

const RESULT_SCHEMAS = {
  manifest: manifestResultSchema,
  revisions: revisionsResultSchema,
  logs: logsResultSchema,
} as const;

export interface KubeQueryResults {
  manifest: ManifestResult;
  revisions: RevisionsResult;
  logs: LogsResult;
}
export type KubeQueryName = keyof KubeQueryResults;

export type KubeQueryReply<Q extends KubeQueryName = KubeQueryName> =
  | {
      ok: true;
      agent_version: string;
      observed_at: string;
      notes: string[];
      result: KubeQueryResults[Q];
    }
  | Extract<z.output<typeof kubeQueryReplySchema>, { ok: false }>;

/**
 * Parses a reply to a `query` request: the envelope, then the result
 * against that query's schema. Throws a ZodError naming the field.
 */
export function parseKubeQueryReply<Q extends KubeQueryName>(
  query: Q,
  value: unknown,
): KubeQueryReply<Q> {
  const reply = kubeQueryReplySchema.parse(value);
  if (!reply.ok) return reply;
  const result = RESULT_SCHEMAS[query].parse(reply.result);
  return { ...reply, result: result as KubeQueryResults[Q] };
}
