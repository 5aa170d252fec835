/**
 * The API benchmark's load client, in its own process (as a real client
 * is): bench/api.ts forks it once, then sends one batch of request paths
 * per scenario. It sends them from `concurrency` loops over keep-alive HTTP,
 * each response read to its end, and answers with every latency and the
 * count of each status other than 200 (0: the request failed), and the
 * CPU time it spent.
 */
import { Agent } from 'node:http';
import { httpGet } from './http-get.ts';

export interface LoadBatch {
  baseUrl: string;
  token: string;
  /** When given, request i is sent with tokens[i % length] (per-user budgets). */
  tokens?: string[];
  paths: string[];
  concurrency: number;
  /**
   * Send over the connections kept from the previous batch that said so
   * (a caller sending one request per batch would otherwise connect anew
   * each time).
   */
  reuseConnections?: boolean;
}

export interface LoadResult {
  latencies: number[];
  failures: [status: number, count: number][];
  wallMs: number;
  /** This process's CPU time over the batch. */
  cpuMs: number;
}

let kept: Agent | undefined;

async function runBatch(batch: LoadBatch): Promise<LoadResult> {
  const fresh = () =>
    new Agent({ keepAlive: true, maxSockets: batch.concurrency });
  if (batch.reuseConnections) kept ??= fresh();
  const agent = batch.reuseConnections && kept ? kept : fresh();
  const latencies: number[] = [];
  const failures = new Map<number, number>();
  let next = 0;
  const loop = async () => {
    while (next < batch.paths.length) {
      const index = next;
      const path = batch.paths[index] ?? '';
      next += 1;
      const token = batch.tokens?.length
        ? (batch.tokens[index % batch.tokens.length] ?? batch.token)
        : batch.token;
      const started = performance.now();
      const status = await httpGet(agent, `${batch.baseUrl}${path}`, token);
      latencies.push(performance.now() - started);
      if (status !== 200) failures.set(status, (failures.get(status) ?? 0) + 1);
    }
  };
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(Array.from({ length: batch.concurrency }, loop));
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  if (agent !== kept) agent.destroy();
  return {
    latencies,
    failures: [...failures],
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

process.on('message', (batch: LoadBatch) => {
  void runBatch(batch).then((result) => process.send?.(result));
});
