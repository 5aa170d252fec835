/**
 * The Argo CD senders of `npm run bench -- changes`, in a process of their
 * own (as Argo CD runs on other machines): the server's process then spends
 * its CPU on receiving only, and its CPU per notification is its own.
 *
 * Arguments: URL SECRET NOTIFICATIONS CONCURRENCY. Prints one JSON object:
 * `{"rate", "failed", "cpuMs"}` (notifications per second from the first
 * send to the last answer; this process's CPU time).
 */
import { randomUUID } from 'node:crypto';

const [url = '', secret = '', total = '0', concurrency = '8'] =
  process.argv.slice(2);
const notifications = Number(total);
let sent = 0;
let failed = 0;
const cpu = process.cpuUsage();
const started = performance.now();
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (sent < notifications) {
      sent++;
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${secret}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          trigger: 'on-sync-succeeded',
          app: 'shop-api',
          destination: { server: 'https://10.0.0.1:6443', namespace: 'shop' },
          sync_status: 'Synced',
          health_status: 'Healthy',
          operation: {
            phase: 'Succeeded',
            finished_at: new Date().toISOString(),
            revision: randomUUID(),
            resources: [],
          },
        }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) failed++;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
console.log(
  JSON.stringify({
    rate: notifications / seconds,
    failed,
    cpuMs: (used.user + used.system) / 1000,
  }),
);
