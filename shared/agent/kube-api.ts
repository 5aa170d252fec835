/**
 * Reads of the Kubernetes API as the apiserver serves them: the JSON text
 * of a path, parsed as is. Authentication, TLS and proxies come from
 * `@kubernetes/client-node`'s KubeConfig (kubeconfig and its current
 * context, or the in-cluster service account); the request is a plain GET.
 *
 * Why not the generated typed clients: they turn timestamps into Date
 * objects and drop fields their models do not know, so the collector would
 * not see the objects the fixtures hold. In 1.4.x `readNamespacedPodLog`
 * has no `sinceTime` and the `Log` class drops `tailLines: 0`, which the
 * live logs read needs, so logs are read here too, by the same GET.
 */
import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import type { K8sObject } from '../collector/k8s.ts';

/** A request the apiserver did not answer within the client's timeout. */
export class KubeApiTimeoutError extends Error {
  constructor(path: string, timeoutMs: number) {
    super(`GET ${path} timed out after ${timeoutMs} ms`);
    this.name = 'KubeApiTimeoutError';
  }
}

export class KubeApiError extends Error {
  readonly status: number;
  /** The apiserver's Status reason (NotFound, Forbidden, ...), when sent. */
  readonly reason: string | undefined;
  /**
   * Whether the body was a Status. An older apiserver answers a path it
   * does not serve with plain text, and the aggregator its 503 for an
   * unavailable APIService.
   */
  readonly statusObject: boolean;

  constructor(
    message: string,
    status: number,
    reason: string | undefined,
    statusObject: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
    this.statusObject = statusObject;
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface KubeApiOptions {
  /** Per request; the apiserver's own list timeout is longer. */
  timeoutMs?: number;
  /** A response larger than this is refused (bytes). */
  maxResponseBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

export class KubeApi {
  readonly server: string;
  private readonly kubeConfig: KubeConfig;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;

  constructor(kubeConfig: KubeConfig, options: KubeApiOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) {
      throw new Error(
        'the kubeconfig has no current cluster (set KUBECONFIG or its current-context)',
      );
    }
    this.server = cluster.server.replace(/\/+$/, '');
    this.kubeConfig = kubeConfig;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxResponseBytes =
      options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /** GET a path as text; `limitBytes` cuts the body (a log read). */
  async getText(
    path: string,
    query: Query = {},
    accept = 'application/json',
  ): Promise<string> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const options: https.RequestOptions = {
      method: 'GET',
      headers: { Accept: accept },
      timeout: this.timeoutMs,
    };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise<string>((resolve, reject) => {
      const request = transport.request(url, options, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.maxResponseBytes) {
            request.destroy(
              new Error(
                `response of ${path} is over ${this.maxResponseBytes} bytes`,
              ),
            );
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            resolve(body);
            return;
          }
          reject(apiError(path, status, body));
        });
      });
      request.on('timeout', () =>
        request.destroy(new KubeApiTimeoutError(path, this.timeoutMs)),
      );
      request.on('error', reject);
      request.end();
    });
  }

  async getJson(path: string, query: Query = {}): Promise<K8sObject> {
    return JSON.parse(await this.getText(path, query));
  }

  /**
   * Every item of a list, read in pages of `pageSize` (`limit` and
   * `continue`). A continue token that expired (410) restarts the list
   * once from the beginning, as the apiserver asks. `keep`, when given,
   * is what is kept of each item, applied as its page is parsed, so a
   * page's raw items are garbage before the next page is read.
   */
  async listAll(
    path: string,
    pageSize = 500,
    query: Query = {},
    keep?: (item: K8sObject) => K8sObject,
  ): Promise<K8sObject[]> {
    for (let attempt = 0; ; attempt += 1) {
      const items: K8sObject[] = [];
      let token: string | undefined;
      try {
        do {
          const page = await this.getJson(path, {
            ...query,
            limit: pageSize,
            continue: token,
          });
          for (const item of page?.items ?? []) {
            items.push(keep ? keep(item) : item);
          }
          token = page?.metadata?.continue || undefined;
        } while (token !== undefined);
        return items;
      } catch (error) {
        if (
          error instanceof KubeApiError &&
          error.status === 410 &&
          attempt === 0
        ) {
          continue;
        }
        throw error;
      }
    }
  }
}

function apiError(path: string, status: number, body: string): KubeApiError {
  let parsed: K8sObject;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const isStatus = parsed?.kind === 'Status';
  // A plain-text answer ("404 page not found", "service unavailable") says
  // what happened; kept short, it is an apiserver's message, not an object.
  const text = isStatus ? '' : body.replace(/\s+/g, ' ').trim().slice(0, 200);
  const message =
    isStatus && typeof parsed.message === 'string'
      ? parsed.message
      : `GET ${path}: HTTP ${status}${text ? ` ${text}` : ''}`;
  return new KubeApiError(
    message,
    status,
    isStatus && typeof parsed.reason === 'string' ? parsed.reason : undefined,
    isStatus,
  );
}

/**
 * The current kube-context's API when it answers `/version` within
 * `timeoutMs`; undefined when there is no kubeconfig, no current context,
 * or nobody answers (the seeder then falls back to built-in data).
 */
export async function reachableKubeApi(
  timeoutMs = 5_000,
): Promise<KubeApi | undefined> {
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromDefault();
    if (!kubeConfig.getCurrentCluster()) return undefined;
    await new KubeApi(kubeConfig, { timeoutMs }).getJson('/version');
  } catch {
    return undefined;
  }
  return new KubeApi(kubeConfig);
}
