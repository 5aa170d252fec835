/**
 * The API benchmark's load client, in its own process (as a real client
 * is): bench/api.ts forks it once, then sends one batch of request paths
 * per scenario. It sends them from `concurrency` loops over keep-alive HTTP,
 * each response read to its end, and answers with every latency and the
 * count of each status other than 200 (0: the request failed), and the
 * CPU time it spent.
 */
import { Agent, request } from 'node:http';

export interface LoadBatch {
  baseUrl: string;
  token: string;
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

function get(agent: Agent, url: string, token: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { agent, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
        res.resume();
      },
    );
    req.on('error', () => resolve(0));
    req.end();
  });
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
      const path = batch.paths[next] ?? '';
      next += 1;
      const started = performance.now();
      const status = await get(agent, `${batch.baseUrl}${path}`, batch.token);
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
