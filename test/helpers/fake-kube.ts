/**
 * A fake Kubernetes API server for tests: a real HTTP server on 127.0.0.1
 * that answers as kube-apiserver does, so the agent is tested against the
 * shapes a real cluster sends:
 *
 * - Discovery: `/api` (APIVersions), `/apis` (APIGroupList, every group
 *   with a served or registered version), `/apis/{group}` (APIGroup),
 *   `/api/v1` and `/apis/{group}/{version}` (APIResourceList, subresources
 *   included as `pods/log`, `rollouts/status`).
 * - The built-in resources every cluster serves, listed or not (a cluster
 *   serves `apps/v1` with no Deployment in it). A CRD or an aggregated API
 *   (Argo Rollouts, Argo CD, metrics-server, any other) is served only once
 *   installed (`install`, or `add` of its objects), per resource: Rollouts
 *   installed serves `argoproj.io/v1alpha1` with `rollouts` and no
 *   `applications`.
 * - A path nothing serves: since kube-apiserver 1.24 its NotFound handler
 *   answers a 404 Status `the server could not find the requested
 *   resource` (reason NotFound), whether the group is unknown or only the
 *   resource; older releases answer Go's plain-text `404 page not found`
 *   (`notFound: 'plain'`).
 * - An APIService registered but unavailable (`unavailable`): `/apis`
 *   still lists its group, and its discovery and lists answer the
 *   aggregator's 503, plain text `service unavailable` (`http.Error` in
 *   kube-aggregator's handler_proxy.go) or, from the backend itself, a
 *   Status with reason ServiceUnavailable.
 * - RBAC before routing: a forbidden resource answers 403 Forbidden with
 *   the authorizer's message, whether or not it is served.
 * - Lists (cluster-wide and per namespace) paged by `limit` and
 *   `continue`, single objects (a 404 Status with details when missing),
 *   `/version`, and pod logs with `tailLines`, `previous`, `sinceTime`,
 *   `timestamps` and `limitBytes`.
 */
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  KubeConfig,
  type V1APIGroup,
  type V1APIGroupList,
  type V1APIResource,
  type V1APIResourceList,
  type V1APIVersions,
  type V1Status,
  type V1StatusDetails,
} from '@kubernetes/client-node';
import { COLLECTED } from '../../shared/agent/resources.ts';
import type { ClusterObjects } from '../../shared/collector/collect.ts';
import type { K8sObject } from '../../shared/collector/k8s.ts';

export interface LogLine {
  ts: string;
  text: string;
}

export interface FakeKubeOptions {
  gitVersion?: string;
  /** How a path nothing serves answers: a Status (default) or plain text. */
  notFound?: 'status' | 'plain';
}

export interface FakeKube {
  url: string;
  kubeConfig: KubeConfig;
  /** Adds objects under `/api{s}/{group}/{version}/.../{resource}`, serving it. */
  add(groupVersion: string, resource: string, objects: K8sObject[]): void;
  /** Serves a resource with no objects: a CRD created, an APIService registered. */
  install(groupVersion: string, resource: string): void;
  /** A CRD deleted: gone from discovery, with its objects; lists answer 404. */
  uninstall(groupVersion: string, resource: string): void;
  /**
   * The group/version's APIService registered but unavailable: `/apis`
   * lists it, everything under it answers 503 (the aggregator's plain text,
   * or a Status).
   */
  unavailable(groupVersion: string, body?: 'text' | 'status'): void;
  /** Makes every read of the resource answer 403. */
  forbid(resource: string): void;
  /** Makes every read of the resource answer this 5xx Status. */
  fail(groupVersion: string, resource: string, code?: number): void;
  /** Makes every request under the group/version go unanswered (a hung backend). */
  hang(groupVersion: string): void;
  /** Called with each request's path and query before it is answered. */
  onRequest(listener: (path: string) => void): void;
  setLogs(
    namespace: string,
    pod: string,
    container: string,
    lines: LogLine[],
    previous?: boolean,
  ): void;
  /** Paths requested so far, with their query strings. */
  requests: string[];
  stop(): Promise<void>;
}

type Verbs = 'read' | 'write' | 'readonly';
const VERBS: Record<Verbs, string[]> = {
  read: ['get', 'list', 'watch'],
  readonly: ['get', 'list'],
  write: [
    'create',
    'delete',
    'deletecollection',
    'get',
    'list',
    'patch',
    'update',
    'watch',
  ],
};

interface ResourceDef {
  groupVersion: string;
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: Verbs;
  shortNames?: string[];
  /** Subresources discovery lists beside it. */
  sub?: string[];
}

const def = (
  groupVersion: string,
  name: string,
  kind: string,
  namespaced = true,
  more: Partial<ResourceDef> = {},
): ResourceDef => ({
  groupVersion,
  name,
  kind,
  namespaced,
  verbs: 'write',
  ...more,
});

/** Served by every cluster (the subset the agent reads, and a few more). */
const BUILT_IN: ResourceDef[] = [
  def('v1', 'configmaps', 'ConfigMap', true, { shortNames: ['cm'] }),
  def('v1', 'events', 'Event', true, { shortNames: ['ev'] }),
  def('v1', 'namespaces', 'Namespace', false, {
    shortNames: ['ns'],
    sub: ['finalize', 'status'],
  }),
  def('v1', 'nodes', 'Node', false, {
    shortNames: ['no'],
    sub: ['proxy', 'status'],
  }),
  def('v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, {
    shortNames: ['pvc'],
    sub: ['status'],
  }),
  def('v1', 'pods', 'Pod', true, {
    shortNames: ['po'],
    sub: ['attach', 'binding', 'eviction', 'exec', 'log', 'status'],
  }),
  def('v1', 'resourcequotas', 'ResourceQuota', true, {
    shortNames: ['quota'],
    sub: ['status'],
  }),
  def('v1', 'secrets', 'Secret'),
  def('v1', 'services', 'Service', true, {
    shortNames: ['svc'],
    sub: ['proxy', 'status'],
  }),
  def('apiregistration.k8s.io/v1', 'apiservices', 'APIService', false, {
    sub: ['status'],
  }),
  def('apps/v1', 'controllerrevisions', 'ControllerRevision'),
  def('apps/v1', 'daemonsets', 'DaemonSet', true, {
    shortNames: ['ds'],
    sub: ['status'],
  }),
  def('apps/v1', 'deployments', 'Deployment', true, {
    shortNames: ['deploy'],
    sub: ['scale', 'status'],
  }),
  def('apps/v1', 'replicasets', 'ReplicaSet', true, {
    shortNames: ['rs'],
    sub: ['scale', 'status'],
  }),
  def('apps/v1', 'statefulsets', 'StatefulSet', true, {
    shortNames: ['sts'],
    sub: ['scale', 'status'],
  }),
  def(
    'autoscaling/v2',
    'horizontalpodautoscalers',
    'HorizontalPodAutoscaler',
    true,
    {
      shortNames: ['hpa'],
      sub: ['status'],
    },
  ),
  def('batch/v1', 'cronjobs', 'CronJob', true, {
    shortNames: ['cj'],
    sub: ['status'],
  }),
  def('batch/v1', 'jobs', 'Job', true, { sub: ['status'] }),
  def('discovery.k8s.io/v1', 'endpointslices', 'EndpointSlice'),
  def('networking.k8s.io/v1', 'ingresses', 'Ingress', true, {
    shortNames: ['ing'],
    sub: ['status'],
  }),
  def('networking.k8s.io/v1', 'networkpolicies', 'NetworkPolicy', true, {
    shortNames: ['netpol'],
  }),
];

/** CRDs and aggregated APIs a cluster may serve, once installed. */
const INSTALLABLE: ResourceDef[] = [
  def('argoproj.io/v1alpha1', 'applications', 'Application', true, {
    shortNames: ['app', 'apps'],
  }),
  def('argoproj.io/v1alpha1', 'appprojects', 'AppProject', true, {
    shortNames: ['appproj', 'appprojs'],
  }),
  def('argoproj.io/v1alpha1', 'rollouts', 'Rollout', true, {
    shortNames: ['ro'],
    sub: ['scale', 'status'],
  }),
  def('argoproj.io/v1alpha1', 'analysisruns', 'AnalysisRun', true, {
    shortNames: ['ar'],
  }),
  def('metrics.k8s.io/v1beta1', 'nodes', 'NodeMetrics', false, {
    verbs: 'readonly',
  }),
  def('metrics.k8s.io/v1beta1', 'pods', 'PodMetrics', true, {
    verbs: 'readonly',
  }),
];

const groupOf = (groupVersion: string): string =>
  groupVersion.includes('/') ? (groupVersion.split('/')[0] ?? '') : '';

/** A resource no table knows: a later CRD, its kind from its plural. */
function guessed(groupVersion: string, name: string): ResourceDef {
  const singular = name.replace(/(ies|s)$/, (m) => (m === 'ies' ? 'y' : ''));
  return def(
    groupVersion,
    name,
    singular.charAt(0).toUpperCase() + singular.slice(1),
  );
}

function discoveryEntries(d: ResourceDef): V1APIResource[] {
  const main: V1APIResource = {
    name: d.name,
    singularName: d.kind.toLowerCase(),
    namespaced: d.namespaced,
    kind: d.kind,
    verbs: VERBS[d.verbs],
    ...(d.shortNames ? { shortNames: d.shortNames } : {}),
  };
  const subs = (d.sub ?? []).map(
    (s): V1APIResource => ({
      name: `${d.name}/${s}`,
      singularName: '',
      namespaced: d.namespaced,
      kind: s === 'scale' ? 'Scale' : d.kind,
      verbs: s === 'log' ? ['get'] : ['get', 'patch', 'update'],
    }),
  );
  return [main, ...subs];
}

const statusBody = (
  code: number,
  reason: string,
  message: string,
  details?: V1StatusDetails,
): string =>
  JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  } satisfies V1Status);

/** `deployments.apps`, `pods`: the qualified resource of messages. */
const qualified = (groupVersion: string, resource: string) => {
  const group = groupOf(groupVersion);
  return group === '' ? resource : `${resource}.${group}`;
};

export async function startFakeKube(
  options: FakeKubeOptions = {},
): Promise<FakeKube> {
  /** groupVersion → resource → its definition. */
  const served = new Map<string, Map<string, ResourceDef>>();
  /** groupVersion → how its unavailable APIService answers. */
  const down = new Map<string, 'text' | 'status'>();
  /** `${groupVersion} ${resource}` → objects. */
  const store = new Map<string, K8sObject[]>();
  const forbidden = new Set<string>();
  const failing = new Map<string, number>();
  const hung = new Set<string>();
  const logs = new Map<string, LogLine[]>();
  const listeners: ((path: string) => void)[] = [];
  const requests: string[] = [];

  const install = (groupVersion: string, resource: string) => {
    const inGroup = served.get(groupVersion) ?? new Map();
    if (!inGroup.has(resource)) {
      inGroup.set(
        resource,
        [...BUILT_IN, ...INSTALLABLE].find(
          (d) => d.groupVersion === groupVersion && d.name === resource,
        ) ?? guessed(groupVersion, resource),
      );
    }
    served.set(groupVersion, inGroup);
  };
  for (const d of BUILT_IN) install(d.groupVersion, d.name);

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    requests.push(path + url.search);
    for (const listener of listeners) listener(path + url.search);
    const send = (code: number, body: string, type = 'application/json') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    const json = (body: unknown) => send(200, JSON.stringify(body));
    const status = (
      code: number,
      reason: string,
      message: string,
      details?: V1StatusDetails,
    ) => send(code, statusBody(code, reason, message, details));
    // Go's http.Error and http.NotFound: text, newline, nosniff.
    const plain = (code: number, text: string) => {
      res.writeHead(code, {
        'content-type': 'text/plain; charset=utf-8',
        'x-content-type-options': 'nosniff',
      });
      res.end(`${text}\n`);
    };
    const notFound = () =>
      options.notFound === 'plain'
        ? plain(404, '404 page not found')
        : status(
            404,
            'NotFound',
            'the server could not find the requested resource',
          );

    if (path === '/version') {
      const gitVersion = options.gitVersion ?? 'v1.30.2';
      const [major, minor] = gitVersion.replace(/^v/, '').split('.');
      json({
        major,
        minor,
        gitVersion,
        gitCommit: '39683505b630ff2121012f3c5b16215a1449d5ed',
        gitTreeState: 'clean',
        buildDate: '2024-06-11T20:21:00Z',
        goVersion: 'go1.22.4',
        compiler: 'gc',
        platform: 'linux/amd64',
      });
      return;
    }
    if (path === '/api') {
      json({
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [
          { clientCIDR: '0.0.0.0/0', serverAddress: '172.18.0.2:6443' },
        ],
      } satisfies V1APIVersions);
      return;
    }
    const groups = () => {
      const byGroup = new Map<string, string[]>();
      for (const gv of [...served.keys(), ...down.keys()]) {
        const group = groupOf(gv);
        if (
          group === '' ||
          (served.get(gv)?.size ?? 0) + (down.has(gv) ? 1 : 0) === 0
        )
          continue;
        const versions = byGroup.get(group) ?? [];
        if (!versions.includes(gv)) versions.push(gv);
        byGroup.set(group, versions);
      }
      return [...byGroup].map(
        ([name, gvs]): V1APIGroup => ({
          name,
          versions: gvs.map((gv) => ({
            groupVersion: gv,
            version: gv.split('/')[1] ?? gv,
          })),
          preferredVersion: {
            groupVersion: gvs[0] ?? '',
            version: gvs[0]?.split('/')[1] ?? '',
          },
        }),
      );
    };
    if (path === '/apis') {
      json({
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: groups(),
      } satisfies V1APIGroupList);
      return;
    }
    const m =
      /^\/(?:api\/(v1)|apis\/([^/]+)(?:\/([^/]+))?)(?:\/namespaces\/([^/]+))?(?:\/([^/]+)(?:\/([^/]+)(?:\/(log))?)?)?$/.exec(
        path,
      );
    if (!m) {
      notFound();
      return;
    }
    if (m[2] !== undefined && m[3] === undefined) {
      const group = groups().find((g) => g.name === m[2]);
      if (group) json({ kind: 'APIGroup', apiVersion: 'v1', ...group });
      else notFound();
      return;
    }
    const groupVersion = m[1] ? 'v1' : `${m[2]}/${m[3]}`;
    const group = groupOf(groupVersion);
    const [, , , , namespace, resource, name, log] = m;
    // The authorizer runs before any handler: a refusal whatever is served.
    if (
      resource !== undefined &&
      forbidden.has(log ? `${resource}/log` : resource)
    ) {
      const verb = name === undefined ? 'list' : 'get';
      const scope =
        namespace === undefined
          ? 'at the cluster scope'
          : `in the namespace "${namespace}"`;
      const what = log ? `${resource}/log` : resource;
      status(
        403,
        'Forbidden',
        `${qualified(groupVersion, resource)}${name ? ` "${name}"` : ''} is forbidden: User "system:serviceaccount:proxima:proxima-agent" cannot ${verb} resource "${what}" in API group "${group}" ${scope}`,
        { ...(name ? { name } : {}), group, kind: resource },
      );
      return;
    }
    if (hung.has(groupVersion)) return; // stop() closes the connection
    const unavailable = down.get(groupVersion);
    if (unavailable === 'text') {
      plain(503, 'service unavailable');
      return;
    }
    if (unavailable === 'status') {
      status(503, 'ServiceUnavailable', 'service unavailable');
      return;
    }
    const inGroup = served.get(groupVersion);
    if (inGroup === undefined || inGroup.size === 0) {
      notFound();
      return;
    }
    if (resource === undefined) {
      json({
        kind: 'APIResourceList',
        ...(groupVersion === 'v1' ? {} : { apiVersion: 'v1' }),
        groupVersion,
        resources: [...inGroup.values()].flatMap(discoveryEntries),
      } satisfies V1APIResourceList);
      return;
    }
    const definition = inGroup.get(resource);
    if (definition === undefined) {
      notFound();
      return;
    }
    const failure = failing.get(`${groupVersion} ${resource}`);
    if (failure !== undefined) {
      status(
        failure,
        failure === 504 ? 'Timeout' : 'InternalError',
        'Internal error occurred: etcdserver: request timed out',
        { causes: [{ message: 'etcdserver: request timed out' }] },
      );
      return;
    }
    const all = store.get(`${groupVersion} ${resource}`) ?? [];
    const inNamespace =
      namespace === undefined
        ? all
        : all.filter((o) => o.metadata?.namespace === namespace);
    if (name === undefined) {
      const limit = Number(url.searchParams.get('limit') ?? '0');
      const start = Number(url.searchParams.get('continue') ?? '0');
      const end = limit > 0 ? start + limit : inNamespace.length;
      const items = inNamespace.slice(start, end);
      json({
        kind: `${definition.kind}List`,
        apiVersion: groupVersion,
        metadata: {
          resourceVersion: '1',
          ...(end < inNamespace.length
            ? {
                continue: String(end),
                remainingItemCount: inNamespace.length - end,
              }
            : {}),
        },
        items,
      });
      return;
    }
    const object = inNamespace.find((o) => o.metadata?.name === name);
    if (!object) {
      status(
        404,
        'NotFound',
        `${qualified(groupVersion, resource)} "${name}" not found`,
        { name, group, kind: resource },
      );
      return;
    }
    if (!log) {
      json(object);
      return;
    }
    const container = url.searchParams.get('container') ?? '';
    const previous = url.searchParams.get('previous') === 'true';
    const lines = logs.get(`${namespace}/${name}/${container}/${previous}`);
    if (lines === undefined) {
      status(
        400,
        'BadRequest',
        `previous terminated container "${container}" in pod "${name}" not found`,
      );
      return;
    }
    const since = url.searchParams.get('sinceTime');
    const tail = url.searchParams.get('tailLines');
    let picked = since
      ? lines.filter(
          (l) =>
            Date.parse(l.ts) >= Math.floor(Date.parse(since) / 1000) * 1000,
        )
      : lines;
    if (tail !== null) picked = picked.slice(-Number(tail));
    const stamped = url.searchParams.get('timestamps') === 'true';
    let body = picked
      .map((l) => (stamped ? `${l.ts} ${l.text}\n` : `${l.text}\n`))
      .join('');
    const limitBytes = url.searchParams.get('limitBytes');
    if (limitBytes !== null)
      body = Buffer.from(body).subarray(0, Number(limitBytes)).toString('utf8');
    send(200, body, 'text/plain');
  };

  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
    users: [{ name: 'agent' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'agent' }],
    currentContext: 'fake',
  });
  return {
    url,
    kubeConfig,
    requests,
    add(groupVersion, resource, objects) {
      install(groupVersion, resource);
      const key = `${groupVersion} ${resource}`;
      store.set(key, [...(store.get(key) ?? []), ...objects]);
    },
    install,
    uninstall(groupVersion, resource) {
      served.get(groupVersion)?.delete(resource);
      store.delete(`${groupVersion} ${resource}`);
    },
    unavailable(groupVersion, body = 'text') {
      down.set(groupVersion, body);
    },
    forbid(resource) {
      forbidden.add(resource);
    },
    fail(groupVersion, resource, code = 500) {
      failing.set(`${groupVersion} ${resource}`, code);
    },
    hang(groupVersion) {
      hung.add(groupVersion);
    },
    onRequest(listener) {
      listeners.push(listener);
    },
    setLogs(namespace, pod, container, lines, previous = false) {
      logs.set(`${namespace}/${pod}/${container}/${previous}`, lines);
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Serves the collector's input at the paths the agent lists (resources.ts). */
export function serveCluster(kube: FakeKube, objects: ClusterObjects): void {
  for (const [field, list] of Object.entries(objects)) {
    if (field === 'version' || list === undefined) continue;
    const r = COLLECTED[field as keyof typeof COLLECTED];
    kube.add(
      r.group === '' ? r.version : `${r.group}/${r.version}`,
      r.resource,
      list as K8sObject[],
    );
  }
}
