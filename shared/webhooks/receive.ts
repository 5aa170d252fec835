/**
 * `POST /api/v1/webhooks/{sourceID}`: a webhook source's notification. No
 * JWT: the source's secret authenticates the request as
 * `Authorization: Bearer <secret>`. In this order:
 *
 * 1. 401 `unauthorized` for a missing or wrong secret, a disabled source or
 *    an unknown id, all with the same body, so ids cannot be probed;
 * 2. 400 `bad_request` for any query parameter (the route takes none), read
 *    only now so an unauthenticated caller learns nothing of the route;
 * 3. 413 `payload_too_large` for a body over 1 MiB;
 * 4. 415 `unsupported_media_type` unless the body is `application/json`;
 * 5. 400 `bad_request` for a body that is not JSON;
 * 6. 422 `unprocessable` naming the field the source's format refuses;
 * 7. 200 `{"data": {"id", "created"}}` (Argo CD) or `{"data": {"id",
 *    "outcome"}}` (Alertmanager).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Db } from '../db/pool.ts';
import {
  PayloadTooLargeError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.ts';
import { readRouteQuery } from '../http/query.ts';
import { type ApiResult, ok } from '../http/response.ts';
import { receiveWebhookRoute, routeQuery } from '../http/routes.ts';
import { storeAlertmanagerNotification } from './alertmanager.ts';
import { storeArgocdNotification } from './argocd.ts';
import { authenticateWebhookSource } from './sources.ts';

/** The largest body a source may send. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** The one message of every refused credential. */
export const WEBHOOK_UNAUTHORIZED = 'missing or invalid webhook credentials';

function header(
  event: Pick<APIGatewayProxyEventV2, 'headers'>,
  name: string,
): string | undefined {
  const headers = event.headers ?? {};
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return value;
  }
  return undefined;
}

function bearer(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  return match?.[1];
}

/** The body as bytes, however API Gateway encoded it. */
function bodyBytes(event: APIGatewayProxyEventV2): Buffer {
  const body = event.body ?? '';
  return Buffer.from(body, event.isBase64Encoded ? 'base64' : 'utf8');
}

export async function receiveWebhook(
  db: Db,
  event: APIGatewayProxyEventV2,
  now: () => Date = () => new Date(),
): Promise<ApiResult> {
  const source = await authenticateWebhookSource(
    db,
    event.pathParameters?.sourceID,
    bearer(header(event, 'authorization')),
  );
  if (!source) throw new UnauthorizedError(WEBHOOK_UNAUTHORIZED);
  readRouteQuery(event.rawQueryString, await routeQuery(receiveWebhookRoute));

  const bytes = bodyBytes(event);
  if (bytes.length > MAX_WEBHOOK_BODY_BYTES) {
    throw new PayloadTooLargeError(
      `the body is over ${MAX_WEBHOOK_BODY_BYTES} bytes`,
    );
  }
  const mediaType = header(event, 'content-type')
    ?.split(';')[0]
    ?.trim()
    .toLowerCase();
  if (mediaType !== 'application/json') {
    throw new UnsupportedMediaTypeError(
      'content-type: the body must be application/json',
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ValidationError('body: not valid JSON');
  }
  if (source.kind === 'argocd') {
    return ok(await storeArgocdNotification(db, source, body, now()));
  }
  return ok(await storeAlertmanagerNotification(db, source, body, now()));
}
