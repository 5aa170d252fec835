/** The bridge's `GET /healthz`: 200 while healthy, 503 otherwise, 404 for anything else. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function serveHealth(
  port: number,
  healthy: () => boolean,
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === '/healthz') {
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
