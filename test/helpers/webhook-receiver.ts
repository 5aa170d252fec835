/**
 * The webhook route's handler (shared/webhooks/receive.ts) behind a plain
 * node:http server on a free 127.0.0.1 port, building the event API
 * Gateway's HTTP API (payload 2.0) would: the sender under test talks HTTP
 * to it exactly as it would to the deployed route.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Db } from '../../shared/db/pool.ts';
import { toErrorResult } from '../../shared/http/error-middleware.ts';
import {
  MAX_WEBHOOK_BODY_BYTES,
  receiveWebhook,
} from '../../shared/webhooks/receive.ts';

export interface TestWebhookReceiver {
  /** `http://127.0.0.1:port`. */
  url: string;
  close(): Promise<void>;
}

const ROUTE = /^\/api\/v1\/webhooks\/([^/]+)$/;

export async function startWebhookReceiver(
  db: Db,
): Promise<TestWebhookReceiver> {
  const server = createServer((req, res) => {
    const match = ROUTE.exec(req.url ?? '');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      // Past the limit the rest is discarded: the handler refuses anyway.
      if (size <= MAX_WEBHOOK_BODY_BYTES) chunks.push(chunk);
      size += chunk.length;
    });
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers[key] = value;
      }
      const event = {
        version: '2.0',
        routeKey: 'POST /api/v1/webhooks/{sourceID}',
        rawPath: req.url ?? '',
        rawQueryString: '',
        headers,
        pathParameters: match?.[1] ? { sourceID: match[1] } : {},
        body: Buffer.concat(chunks).toString('base64'),
        isBase64Encoded: true,
      } as unknown as APIGatewayProxyEventV2;
      const answer =
        req.method === 'POST' && match
          ? receiveWebhook(db, event).catch(toErrorResult)
          : Promise.resolve(toErrorResult(new Error('no such route')));
      void answer.then((result) => {
        res.writeHead(result.statusCode ?? 200, {
          'content-type': 'application/json',
        });
        res.end(result.body);
      });
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve()),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
