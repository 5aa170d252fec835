/**
 * The API's response bodies: `{"data": ..., "meta"?: ...}` on success and
 * `{"error": {"code", "message", "details"?}}` on failure, always JSON.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export type ApiResult = APIGatewayProxyStructuredResultV2;

const JSON_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
};

/**
 * JSON text made elsewhere (PostgreSQL renders the inventory lists' pages),
 * spliced into a response body as it is instead of parsed and serialized
 * again. `T` is what the text holds.
 */
export class JsonText<T = unknown> {
  constructor(readonly text: string) {}

  /** A JSON array of these JSON texts, in order. */
  static array<E>(items: readonly string[]): JsonText<E[]> {
    return new JsonText<E[]>(`[${items.join(',')}]`);
  }

  parse(): T {
    return JSON.parse(this.text) as T;
  }
}

export function json(statusCode: number, body: unknown): ApiResult {
  return {
    statusCode,
    headers: { ...JSON_HEADERS },
    body: JSON.stringify(body),
  };
}

/** 200 with `data`, and `meta` when given. */
export function ok(data: unknown, meta?: object): ApiResult {
  if (data instanceof JsonText) {
    const metaText =
      meta === undefined ? '' : `,"meta":${JSON.stringify(meta)}`;
    return {
      statusCode: 200,
      headers: { ...JSON_HEADERS },
      body: `{"data":${data.text}${metaText}}`,
    };
  }
  return json(200, meta === undefined ? { data } : { data, meta });
}

export function errorResult(
  statusCode: number,
  code: string,
  message: string,
  details?: Record<string, unknown>,
): ApiResult {
  return json(statusCode, {
    error:
      details === undefined ? { code, message } : { code, message, details },
  });
}
