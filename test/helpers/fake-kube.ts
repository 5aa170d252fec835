/**
 * A fake Kubernetes API server for tests: a real HTTP server on 127.0.0.1
 * that serves the objects it is given at their API paths, as the apiserver
 * does: lists (cluster-wide and per namespace) paged by `limit` and
 * `continue`, single objects, a 404 Status for a missing object, a plain
 * 404 for an API group it does not serve, 403 for resources it is told to
 * forbid, `/version`, and pod logs with `tailLines`, `previous`,
 * `sinceTime`, `timestamps` and `limitBytes`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { COLLECTED } from '../../shared/agent/resources.ts';
import type { ClusterObjects } from '../../shared/collector/collect.ts';
import type { K8sObject } from '../../shared/collector/k8s.ts';

export interface LogLine {
  ts: string;
  text: string;
}

export interface FakeKube {
  url: string;
  kubeConfig: KubeConfig;
  /** Adds objects under `/api{s}/{group}/{version}/.../{resource}`. */
  add(groupVersion: string, resource: string, objects: K8sObject[]): void;
  /** Makes every read of the resource answer 403. */
  forbid(resource: string): void;
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

const status = (code: number, reason: string, message: string) =>
  JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message,
    reason,
    code,
  });

export async function startFakeKube(
  options: { gitVersion?: string } = {},
): Promise<FakeKube> {
  /** `${groupVersion} ${resource}` → objects. */
  const store = new Map<string, K8sObject[]>();
  const forbidden = new Set<string>();
  const logs = new Map<string, LogLine[]>();
  const requests: string[] = [];

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push(url.pathname + url.search);
    const send = (code: number, body: string, type = 'application/json') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (url.pathname === '/version') {
      send(
        200,
        JSON.stringify({
          major: '1',
          minor: '30',
          gitVersion: options.gitVersion ?? 'v1.30.2',
        }),
      );
      return;
    }
    const m =
      /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?(?:\/([^/]+)(?:\/([^/]+)(?:\/(log))?)?)?$/.exec(
        url.pathname,
      );
    if (!m) {
      send(404, '404 page not found', 'text/plain');
      return;
    }
    const groupVersion = m[1] ? 'v1' : `${m[2]}/${m[3]}`;
    const [, , , , namespace, resource, name, log] = m;
    const served = [...store.keys()].some((k) =>
      k.startsWith(`${groupVersion} `),
    );
    if (!served) {
      send(404, '404 page not found', 'text/plain');
      return;
    }
    if (resource === undefined) {
      send(
        200,
        JSON.stringify({
          kind: 'APIResourceList',
          groupVersion,
          resources: [],
        }),
      );
      return;
    }
    if (forbidden.has(log ? `${resource}/log` : resource)) {
      send(403, status(403, 'Forbidden', `${resource} is forbidden`));
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
      send(
        200,
        JSON.stringify({
          kind: 'List',
          apiVersion: groupVersion,
          metadata: {
            resourceVersion: '1',
            ...(end < inNamespace.length ? { continue: String(end) } : {}),
          },
          items,
        }),
      );
      return;
    }
    const object = inNamespace.find((o) => o.metadata?.name === name);
    if (!object) {
      send(404, status(404, 'NotFound', `${resource} "${name}" not found`));
      return;
    }
    if (!log) {
      send(200, JSON.stringify(object));
      return;
    }
    const container = url.searchParams.get('container') ?? '';
    const previous = url.searchParams.get('previous') === 'true';
    const lines = logs.get(`${namespace}/${name}/${container}/${previous}`);
    if (lines === undefined) {
      send(
        400,
        status(
          400,
          'BadRequest',
          `previous terminated container "${container}" in pod "${name}" not found`,
        ),
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
  });
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
      const key = `${groupVersion} ${resource}`;
      store.set(key, [...(store.get(key) ?? []), ...objects]);
    },
    forbid(resource) {
      forbidden.add(resource);
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
