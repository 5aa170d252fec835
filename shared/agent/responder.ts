/**
 * The agent's half of the live reads (wire-contract.md, "Live reads"):
 * answers `kube_query` requests on `proxima.system.commands.{agent_id}`
 * with one read of the cluster, now, redacted before it leaves. Nothing is
 * kept. Each request is audited in the agent's log with its actor.
 *
 * `startKubeQueryResponder({ nc, agentId, kubeConfig })` subscribes on the
 * agent's command subject over the given NATS connection and reads the
 * cluster through the given KubeConfig (any context: a kubeconfig file, the
 * in-cluster account, or `loadFromOptions` pointing at a test server). It
 * returns a handle whose `stop()` drains the subscription; the connection
 * stays the caller's.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type {
  Msg,
  NatsConnection,
  Subscription,
} from '@nats-io/transport-node';
import type { K8sObject } from '../collector/k8s.ts';
import { redactObject } from '../collector/redact.ts';
import {
  commandSubject,
  KUBE_QUERY_MAX_REVISIONS,
  KUBE_QUERY_OBJECT_BUDGET_BYTES,
  KUBE_QUERY_REPLY_MAX_BYTES,
  type KubeQueryErrorCode,
  type KubeQueryRequest,
  kubeQueryRequestSchema,
  type LogsRequest,
  type LogsResult,
  type ManifestRequest,
  type ManifestResult,
  type Revision,
  type RevisionsRequest,
  type RevisionsResult,
} from '../live/kube-query.ts';
import { logger as defaultLogger } from '../observability/logger.ts';
import { formatIssues } from '../wire/issues.ts';
import { discoverAbsent } from './discovery.ts';
import { KubeApi, KubeApiError } from './kube-api.ts';
import {
  COLLECTED,
  CONTROLLER_REVISIONS,
  MANIFEST_RESOURCES,
  resourcePath,
} from './resources.ts';
import { AGENT_VERSION } from './version.ts';

export interface KubeQueryResponderOptions {
  nc: NatsConnection;
  agentId: string;
  kubeConfig: KubeConfig;
  agentVersion?: string;
  logger?: Pick<typeof defaultLogger, 'info' | 'warn' | 'error'>;
  /** The clock for `observed_at` (tests pin it). */
  now?: () => Date;
}

export interface KubeQueryResponder {
  subject: string;
  stop(): Promise<void>;
}

/** A refusal that becomes an `ok: false` reply with its code. */
export class KubeQueryError extends Error {
  readonly code: KubeQueryErrorCode;
  constructor(
    code: KubeQueryErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'KubeQueryError';
    this.code = code;
  }
}

interface Answer<R> {
  result: R;
  notes: string[];
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** The apiserver's refusal as the protocol's error code. */
function fromKube(error: unknown, what: string): KubeQueryError {
  if (error instanceof KubeQueryError) return error;
  if (error instanceof KubeApiError) {
    if (error.status === 404)
      return new KubeQueryError('not_found', `${what} not found`, {
        cause: error,
      });
    if (error.status === 403 || error.status === 401) {
      return new KubeQueryError(
        'forbidden',
        `not permitted to read ${what} (is the agent's read-only ClusterRole bound?)`,
        { cause: error },
      );
    }
    if (error.status === 400)
      return new KubeQueryError('bad_request', error.message, { cause: error });
  }
  return new KubeQueryError('internal', `reading ${what} failed`, {
    cause: error,
  });
}

/**
 * After a 404 on a Rollout: whether Argo Rollouts is served at all, by its
 * group's discovery (per resource: `argoproj.io/v1alpha1` is served for
 * Argo CD's applications alone on a cluster without Rollouts).
 */
async function requireServed(api: KubeApi, kind: string): Promise<void> {
  if (kind !== 'Rollout') return;
  const absence = await discoverAbsent(api, [COLLECTED.rollouts]).then(
    (absent) => absent.get(COLLECTED.rollouts),
    () => undefined,
  );
  if (absence?.reason === 'not_installed') {
    throw new KubeQueryError(
      'not_installed',
      'Argo Rollouts is not installed in this cluster',
    );
  }
}

async function getObject(
  api: KubeApi,
  kind: keyof typeof MANIFEST_RESOURCES,
  namespace: string,
  name: string,
): Promise<K8sObject> {
  const what = `${kind} ${namespace}/${name}`;
  try {
    return await api.getJson(
      resourcePath(MANIFEST_RESOURCES[kind], namespace, name),
    );
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 404)
      await requireServed(api, kind);
    throw fromKube(error, what);
  }
}

async function manifest(
  api: KubeApi,
  q: ManifestRequest,
): Promise<Answer<ManifestResult>> {
  const object = await getObject(api, q.kind, q.namespace, q.name);
  const { object: safe, notes } = redactObject(object);
  const size = jsonBytes(safe);
  if (size > KUBE_QUERY_OBJECT_BUDGET_BYTES) {
    throw new KubeQueryError(
      'too_large',
      `${q.kind} ${q.namespace}/${q.name} is ${size} bytes, over the ${KUBE_QUERY_OBJECT_BUDGET_BYTES}-byte limit of a live read`,
    );
  }
  return {
    result: {
      kind: q.kind,
      namespace: q.namespace,
      name: q.name,
      object: safe,
    },
    notes,
  };
}

const REVISION_ANNOTATION: Record<string, string> = {
  Deployment: 'deployment.kubernetes.io/revision',
  Rollout: 'rollout.argoproj.io/revision',
};
const HASH_LABEL: Record<string, string> = {
  Deployment: 'pod-template-hash',
  Rollout: 'rollouts-pod-template-hash',
};

function containersOf(template: K8sObject): Revision['containers'] {
  return (
    Array.isArray(template?.spec?.containers) ? template.spec.containers : []
  ).map((c: K8sObject) => ({
    name: String(c?.name ?? ''),
    image: String(c?.image ?? ''),
  }));
}

const ownedBy = (uid: string) => (o: K8sObject) =>
  (o?.metadata?.ownerReferences ?? []).some((r: K8sObject) => r?.uid === uid);

async function revisions(
  api: KubeApi,
  q: RevisionsRequest,
): Promise<Answer<RevisionsResult>> {
  const owner = await getObject(api, q.kind, q.namespace, q.name);
  const uid = String(owner?.metadata?.uid ?? '');
  const replicaSets = q.kind === 'Deployment' || q.kind === 'Rollout';
  const source = replicaSets ? COLLECTED.replicasets : CONTROLLER_REVISIONS;
  let items: K8sObject[];
  try {
    items = (await api.listAll(resourcePath(source, q.namespace))).filter(
      ownedBy(uid),
    );
  } catch (error) {
    throw fromKube(error, `${source.resource} in ${q.namespace}`);
  }
  const rows = items.map((item) => {
    const meta = item.metadata ?? {};
    const template = replicaSets
      ? item.spec?.template
      : item.data?.spec?.template;
    const written = replicaSets
      ? Number(meta.annotations?.[REVISION_ANNOTATION[q.kind] ?? ''])
      : Number(item.revision);
    return {
      revision: Number.isInteger(written) ? written : null,
      name: String(meta.name ?? ''),
      created:
        typeof meta.creationTimestamp === 'string'
          ? meta.creationTimestamp
          : null,
      replicas:
        replicaSets && Number.isInteger(item.spec?.replicas)
          ? item.spec.replicas
          : null,
      template_hash:
        (replicaSets
          ? meta.labels?.[HASH_LABEL[q.kind] ?? '']
          : (meta.labels?.['controller.kubernetes.io/hash'] ??
            meta.labels?.['controller-revision-hash'])) ?? null,
      containers: containersOf(template),
      template,
    };
  });
  rows.sort(
    (a, b) =>
      (b.revision ?? -1) - (a.revision ?? -1) ||
      String(b.created ?? '').localeCompare(String(a.created ?? '')),
  );
  const shown = rows.slice(0, KUBE_QUERY_MAX_REVISIONS);
  const notes: string[] = [];
  let spent = 0;
  let withoutTemplate = 0;
  const out: Revision[] = shown.map(({ template, ...row }) => {
    if (template === undefined || template === null)
      return { ...row, pod_template: null };
    const { object, notes: redactions } = redactObject(template);
    for (const note of redactions) if (!notes.includes(note)) notes.push(note);
    const size = jsonBytes(object);
    if (spent + size > KUBE_QUERY_OBJECT_BUDGET_BYTES) {
      withoutTemplate += 1;
      spent = KUBE_QUERY_OBJECT_BUDGET_BYTES;
      return { ...row, pod_template: null };
    }
    spent += size;
    return { ...row, pod_template: object };
  });
  if (rows.length > shown.length) {
    notes.push(
      `${rows.length - shown.length} older revisions not shown (at most ${KUBE_QUERY_MAX_REVISIONS})`,
    );
  }
  if (withoutTemplate > 0) {
    notes.push(
      `pod_template left out of the ${withoutTemplate} oldest revisions: the reply's ${KUBE_QUERY_OBJECT_BUDGET_BYTES / 1024} KiB budget is spent`,
    );
  }
  return {
    result: {
      kind: q.kind,
      namespace: q.namespace,
      name: q.name,
      revisions: out,
      truncated: rows.length > shown.length,
    },
    notes,
  };
}

/** Leaves room in the 1 MiB reply for the envelope and JSON escaping. */
const LOG_LIMIT_BYTES = 768 * 1024;

async function logs(api: KubeApi, q: LogsRequest): Promise<Answer<LogsResult>> {
  const pod = await getObject(api, 'Pod', q.namespace, q.pod);
  const names = (list: unknown) =>
    (Array.isArray(list) ? list : []).map((c: K8sObject) => String(c?.name));
  const main = names(pod?.spec?.containers);
  const all = [...main, ...names(pod?.spec?.initContainers)];
  const base = { pod: q.pod, previous: q.previous, timestamps: q.timestamps };
  let container = q.container;
  if (container === undefined && main.length === 1) container = main[0];
  if (container === undefined || !all.includes(container)) {
    return {
      result: {
        ...base,
        container: q.container ?? null,
        lines: [],
        truncated: false,
        containers: all,
      },
      notes: [
        q.container === undefined
          ? 'the pod has several containers: name one'
          : `the pod has no container ${q.container}`,
      ],
    };
  }
  let text: string;
  try {
    text = await api.getText(
      `${resourcePath(COLLECTED.pods, q.namespace, q.pod)}/log`,
      {
        container,
        tailLines: q.tail,
        previous: q.previous ? true : undefined,
        sinceTime: q.since_time,
        timestamps: q.timestamps ? true : undefined,
        limitBytes: LOG_LIMIT_BYTES,
      },
      'text/plain',
    );
  } catch (error) {
    throw fromKube(error, `logs of ${q.namespace}/${q.pod} (${container})`);
  }
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const cutByBytes = Buffer.byteLength(text) >= LOG_LIMIT_BYTES;
  if (cutByBytes) lines.pop();
  return {
    result: {
      ...base,
      container,
      lines,
      truncated: cutByBytes || lines.length >= q.tail,
    },
    notes: cutByBytes ? [`cut at ${LOG_LIMIT_BYTES / 1024} KiB`] : [],
  };
}

async function answer(
  api: KubeApi,
  q: KubeQueryRequest,
): Promise<Answer<unknown>> {
  switch (q.query) {
    case 'manifest':
      return manifest(api, q);
    case 'revisions':
      return revisions(api, q);
    case 'logs':
      return logs(api, q);
  }
}

/** Starts answering live reads; see the module comment. */
export async function startKubeQueryResponder(
  options: KubeQueryResponderOptions,
): Promise<KubeQueryResponder> {
  const api = new KubeApi(options.kubeConfig);
  const log = options.logger ?? defaultLogger;
  const agentVersion = options.agentVersion ?? AGENT_VERSION;
  const now = options.now ?? (() => new Date());
  const subject = commandSubject(options.agentId);

  const fail = (code: KubeQueryErrorCode, message: string) => ({
    ok: false as const,
    agent_version: agentVersion,
    error: { code, message },
  });

  const handle = async (msg: Msg) => {
    let request: KubeQueryRequest | undefined;
    let reply: unknown;
    const started = Date.now();
    try {
      let raw: unknown;
      try {
        raw = JSON.parse(msg.string());
      } catch {
        throw new KubeQueryError('bad_request', 'request: not JSON');
      }
      const parsed = kubeQueryRequestSchema.safeParse(raw);
      if (!parsed.success) {
        throw new KubeQueryError('bad_request', formatIssues(parsed.error));
      }
      request = parsed.data;
      const { result, notes } = await answer(api, request);
      reply = {
        ok: true,
        agent_version: agentVersion,
        observed_at: now().toISOString(),
        notes,
        result,
      };
      if (jsonBytes(reply) > KUBE_QUERY_REPLY_MAX_BYTES) {
        throw new KubeQueryError(
          'too_large',
          `the reply is over ${KUBE_QUERY_REPLY_MAX_BYTES} bytes`,
        );
      }
    } catch (error) {
      const refusal =
        error instanceof KubeQueryError ? error : fromKube(error, 'the object');
      if (refusal.code === 'internal') {
        log.error('kube_query failed', { error: refusal.cause ?? refusal });
      }
      reply = fail(refusal.code, refusal.message);
    }
    const outcome = (reply as { ok: boolean; error?: { code: string } }).ok
      ? 'ok'
      : (reply as { error: { code: string } }).error.code;
    // The audit line: who read what, and how it went. Never a value.
    log.info('kube_query', {
      requestId: request?.request_id,
      actor: request?.actor,
      query: request?.query,
      kind: request && 'kind' in request ? request.kind : undefined,
      namespace: request?.namespace,
      name: request && 'name' in request ? request.name : undefined,
      pod: request?.query === 'logs' ? request.pod : undefined,
      container: request?.query === 'logs' ? request.container : undefined,
      outcome,
      durationMs: Date.now() - started,
    });
    msg.respond(JSON.stringify(reply));
  };

  const subscription: Subscription = options.nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error) {
        log.warn('kube_query subscription error', { error });
        return;
      }
      void handle(msg);
    },
  });
  // The subscription is registered with the server before live reads count on it.
  await options.nc.flush();
  return {
    subject,
    async stop() {
      await subscription.drain();
    },
  };
}
