/**
 * `GET /healthz`: 200 while healthy, 503 otherwise; `GET /metrics` when a
 * scrape is given (the agent's Prometheus text); 404 for anything else.
 * The bridge's and the agent's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsScrape {
  contentType: string;
  body(): Promise<string>;
}

export async function serveHealth(
  port: number,
  healthy: () => boolean,
  metrics?: MetricsScrape,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (req.method === 'GET' && path === '/metrics' && metrics) {
      metrics.body().then(
        (body) => {
          res.writeHead(200, { 'content-type': metrics.contentType });
          res.end(body);
        },
        () => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'internal' } }));
        },
      );
      return;
    }
    if (req.method === 'GET' && path === '/healthz') {
      const ok = healthy();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ok ? 'ok' : 'unavailable' }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { code: 'not_found', message: 'not found' } }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  return server;
}

export function closeHealth(server: Server): Promise<void> {
  return new Promise<void>((resolve) => server.close(() => resolve()));
}

export function healthAddressOf(
  server: Server | undefined,
): AddressInfo | undefined {
  const address = server?.address();
  return address !== null && typeof address === 'object' ? address : undefined;
}
