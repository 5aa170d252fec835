/**
 * The live benchmark's client, in its own process so that nothing it does
 * lands in the API server's: the server's process holds the server alone,
 * its event loop, heap and garbage collector included (the direct
 * requests' 100 KB replies were parsed in the server's process, their
 * garbage swept by its collector, maybe during a route's request; and one
 * message to the client per request). For each request of a batch, one after the
 * other so both see the same machine: the agent's own answer time (the
 * kube_query straight over NATS, on a connection configured as the
 * backend's, its reply read and parsed), then the route over a kept
 * keep-alive HTTP connection. Each route request is also told how long
 * each of the benchmark's processes waited for a CPU while it was out.
 */
import { Agent } from 'node:http';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { answerGcPauses } from './gc-pauses.ts';
import { httpGet } from './http-get.ts';
import { RunQueueWaits, type Watched } from './run-queue.ts';

export interface LiveBatch {
  natsUrl: string;
  subject: string;
  /** The kube_query, sent with a fresh request id each time. */
  query: Record<string, unknown>;
  url: string;
  /** One token per request, in order. */
  tokens: string[];
  /** The processes whose run-queue waits are read, by name. */
  pids: Record<string, Watched>;
}

export interface LiveSent {
  /** Epoch milliseconds. */
  directAt: number;
  directMs: number;
  routeAt: number;
  routeMs: number;
  /** The route's status (0: the request failed). */
  status: number;
  /** Each process's run-queue wait while the route's request was out. */
  waited: Record<string, number>;
}

export interface LiveBatchResult {
  sent: LiveSent[];
  replyBytes: number;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
let nc: NatsConnection | undefined;

async function runBatch(batch: LiveBatch): Promise<LiveBatchResult> {
  // Configured as the backend's connection is (shared/live/nats.ts), so
  // the agent's time carries the same client work as the route's.
  nc ??= await connect({
    servers: batch.natsUrl,
    name: 'bench-live-direct',
    noAsyncTraces: true,
  });
  const waits = new RunQueueWaits(batch.pids);
  const sent: LiveSent[] = [];
  let replyBytes = 0;
  for (const token of batch.tokens) {
    const directAt = Date.now();
    let started = performance.now();
    const reply = await nc.request(
      batch.subject,
      JSON.stringify({ ...batch.query, request_id: crypto.randomUUID() }),
      { timeout: 15_000 },
    );
    JSON.parse(new TextDecoder().decode(reply.data));
    const directMs = performance.now() - started;
    replyBytes = reply.data.length;

    waits.take();
    const routeAt = Date.now();
    started = performance.now();
    const status = await httpGet(keepAlive, batch.url, token);
    const routeMs = performance.now() - started;
    sent.push({
      directAt,
      directMs,
      routeAt,
      routeMs,
      status,
      waited: waits.take(),
    });
  }
  return { sent, replyBytes };
}

process.on('message', (batch: LiveBatch | string) => {
  if (typeof batch === 'string') return;
  void runBatch(batch).then((result) => process.send?.(result));
});
process.on('disconnect', () => {
  void nc?.close().finally(() => process.exit(0));
});
answerGcPauses();
