/**
 * The cluster agent (spec: "Collected Resource Types", "Collection Limits
 * and Filtering"; wire-contract.md): every sync interval it lists the
 * cluster (shared/agent/list.ts), builds the inventory through the
 * collector (shared/collector/, pure), and publishes it on
 * `proxima.{client}.{env}.{agent_id}.kubernetes` (shared/agent/publish.ts:
 * gzip, JetStream ack, retry, the oversized rule). While running it also
 * answers live reads (`kube_query`, shared/agent/responder.ts) and serves
 * `/healthz` and `/metrics`.
 *
 * `syncOnce()` is one cycle; `runOnce()` is the `--once` mode: one cycle on
 * a connection that does not wait for an absent server, no live reads.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  closeHealth,
  healthAddressOf,
  serveHealth,
} from '../ingest/bridge/health.ts';
import { connectNats } from '../ingest/bridge/nats-setup.ts';
import type { NatsConnectOptions } from '../ingest/bridge/options.ts';
import { endNatsConnection } from '../nats-login.ts';
import { logger as defaultLogger } from '../observability/logger.ts';
import { inventorySubject } from '../wire/subject.ts';
import { KubeApi } from './kube-api.ts';
import { collectInventory, type NotCollected } from './list.ts';
import { type AgentMetrics, createAgentMetrics } from './metrics.ts';
import {
  type PublishResult,
  publishInventory,
  type RetryPolicy,
} from './publish.ts';
import {
  type KubeQueryResponder,
  startKubeQueryResponder,
} from './responder.ts';
import { AGENT_VERSION } from './version.ts';

type Logger = Pick<typeof defaultLogger, 'info' | 'warn' | 'error'>;

export interface AgentOptions {
  kubeConfig: KubeConfig;
  nats: NatsConnectOptions;
  client: string;
  environment: string;
  agentId: string;
  clusterName: string;
  intervalMs: number;
  excludeNamespaces: readonly string[];
  podLimit: number;
  pageSize: number;
  /** /healthz and /metrics; undefined: not served. */
  healthPort?: number;
  retry?: RetryPolicy;
  ackTimeoutMs?: number;
  logger?: Logger;
  /** The snapshot clock (tests pin it). */
  now?: () => Date;
}

export interface SyncResult {
  publish: PublishResult;
  pods: number;
  workloads: number;
  /** The optional kinds left out of this cycle, with why. */
  notCollected: NotCollected[];
  durationMs: number;
}

/** Consecutive failed cycles after which /healthz answers 503. */
const UNHEALTHY_AFTER_FAILURES = 3;

export class Agent {
  readonly subject: string;
  readonly metrics: AgentMetrics = createAgentMetrics();
  readonly #options: AgentOptions;
  readonly #api: KubeApi;
  readonly #logger: Logger;
  #nc: NatsConnection | undefined;
  #responder: KubeQueryResponder | undefined;
  #health: Server | undefined;
  #timer: NodeJS.Timeout | undefined;
  #cycle: Promise<void> | undefined;
  #failures = 0;
  #stopping = false;
  #stopped: Promise<void> | undefined;

  constructor(options: AgentOptions) {
    this.#options = options;
    this.#api = new KubeApi(options.kubeConfig);
    this.#logger = options.logger ?? defaultLogger;
    this.subject = inventorySubject(
      options.client,
      options.environment,
      options.agentId,
    );
  }

  /** The connection, once started. */
  get connection(): NatsConnection | undefined {
    return this.#nc;
  }

  /** Connects once (waiting for NATS unless `waitOnFirstConnect` is false). */
  async connect(): Promise<NatsConnection> {
    this.#nc ??= await connectNats({
      name: `proxima-agent-${this.#options.agentId}`,
      ...this.#options.nats,
    });
    return this.#nc;
  }

  /**
   * One cycle: list, build, publish. Throws CollectionError (the cluster)
   * or PublishError (no ack); an inventory too large even without spec
   * facts resolves with `published: false`.
   */
  async syncOnce(): Promise<SyncResult> {
    const nc = await this.connect();
    const started = Date.now();
    const { message, notCollected } = await collectInventory(this.#api, {
      pageSize: this.#options.pageSize,
      agentId: this.#options.agentId,
      agentVersion: AGENT_VERSION,
      timestamp: (this.#options.now?.() ?? new Date()).toISOString(),
      clusterName: this.#options.clusterName,
      excludeNamespaces: this.#options.excludeNamespaces,
      podLimit: this.#options.podLimit,
    });
    for (const skipped of notCollected) {
      this.metrics.kindsNotCollected.inc({
        kind: skipped.resource,
        reason: skipped.reason,
      });
      // An API the cluster does not serve is normal; a refusal is RBAC to
      // fix and an unavailable APIService (metrics-server down) a component.
      const line = {
        kind: skipped.resource,
        reason: skipped.reason,
        detail: skipped.detail,
      };
      if (skipped.reason === 'not_installed') {
        this.#logger.info(`kind not collected: ${skipped.reason}`, line);
      } else {
        this.#logger.warn(`kind not collected: ${skipped.reason}`, line);
      }
    }
    const publish = await publishInventory(message, {
      nc,
      subject: this.subject,
      metrics: this.metrics,
      logger: this.#logger,
      ...(this.#options.retry ? { retry: this.#options.retry } : {}),
      ...(this.#options.ackTimeoutMs
        ? { ackTimeoutMs: this.#options.ackTimeoutMs }
        : {}),
    });
    const result: SyncResult = {
      publish,
      pods: message.pods?.length ?? 0,
      workloads: message.workloads?.length ?? 0,
      notCollected,
      durationMs: Date.now() - started,
    };
    if (publish.published) {
      this.#logger.info('inventory published', {
        subject: this.subject,
        stream: publish.stream,
        seq: publish.seq,
        duplicate: publish.duplicate,
        bytes: publish.bytes,
        jsonBytes: publish.jsonBytes,
        specFactsDropped: publish.specFactsDropped,
        pods: result.pods,
        workloads: result.workloads,
        podsTruncated: message.collection?.pods_truncated ?? false,
        notCollected: notCollected.map((n) => n.resource),
        durationMs: result.durationMs,
      });
    }
    return result;
  }

  /**
   * The long-running mode: health endpoint, live reads, a sync now and
   * then every interval. Resolves once the first cycle has been tried.
   */
  async start(): Promise<void> {
    if (this.#options.healthPort !== undefined) {
      const registry = this.metrics.registry;
      this.#health = await serveHealth(
        this.#options.healthPort,
        () => this.healthy(),
        { contentType: registry.contentType, body: () => registry.metrics() },
      );
    }
    const nc = await this.connect();
    this.#watch(nc);
    this.#responder = await startKubeQueryResponder({
      nc,
      agentId: this.#options.agentId,
      kubeConfig: this.#options.kubeConfig,
      agentVersion: AGENT_VERSION,
      logger: this.#logger,
    });
    this.#logger.info('agent started', {
      agentId: this.#options.agentId,
      agentVersion: AGENT_VERSION,
      subject: this.subject,
      commands: this.#responder.subject,
      apiServer: this.#api.server,
      intervalMs: this.#options.intervalMs,
      excludeNamespaces: this.#options.excludeNamespaces,
      podLimit: this.#options.podLimit,
    });
    await this.#runCycle();
  }

  /** NATS connected and the last cycles did not all fail. */
  healthy(): boolean {
    return (
      this.#nc !== undefined &&
      !this.#nc.isClosed() &&
      this.#failures < UNHEALTHY_AFTER_FAILURES
    );
  }

  healthAddress(): AddressInfo | undefined {
    return healthAddressOf(this.#health);
  }

  /** Resolves when the connection closes (stop, or lost for good). */
  async closed(): Promise<Error | undefined> {
    return (await (await this.connect()).closed()) ?? undefined;
  }

  /** Stops the schedule, lets a running cycle finish, stops live reads, drains. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping = true;
      clearTimeout(this.#timer);
      await this.#cycle;
      await this.#responder?.stop();
      if (this.#nc) await endNatsConnection(this.#nc);
      if (this.#health) await closeHealth(this.#health);
      this.#logger.info('agent stopped', { agentId: this.#options.agentId });
    })();
    return this.#stopped;
  }

  #runCycle(): Promise<void> {
    this.#cycle = (async () => {
      try {
        const { publish } = await this.syncOnce();
        if (publish.published) this.#failures = 0;
      } catch (error) {
        this.#failures += 1;
        this.metrics.collectionFailures.inc();
        this.#logger.error('sync failed; trying again next interval', {
          error: (error as Error).message,
          consecutiveFailures: this.#failures,
        });
      }
      if (!this.#stopping) {
        this.#timer = setTimeout(
          () => void this.#runCycle(),
          this.#options.intervalMs,
        );
      }
    })();
    return this.#cycle;
  }

  #watch(nc: NatsConnection): void {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect' || status.type === 'reconnect') {
          this.#logger.warn('NATS connection', { status: status.type });
        }
      }
    })();
  }
}

/**
 * `--once`: one inventory, acked, on a connection that fails at once when
 * NATS does not answer; never answers live reads. Resolves with the result
 * (published or dropped as too large); throws otherwise.
 */
export async function runOnce(options: AgentOptions): Promise<SyncResult> {
  const agent = new Agent({
    ...options,
    nats: { ...options.nats, waitOnFirstConnect: false },
  });
  try {
    return await agent.syncOnce();
  } finally {
    const nc = agent.connection;
    if (nc) await endNatsConnection(nc);
  }
}
