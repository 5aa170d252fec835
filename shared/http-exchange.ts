/**
 * One HTTP request and its whole answer over node:http(s), for the few
 * outbound calls a function makes on its cold path (the secret read through
 * the Parameters and Secrets extension, the metrics store).
 *
 * Not global fetch: its first call loads undici (~20 ms of a cold start's
 * CPU), where node:http costs a few (and is loaded already where the
 * Tracer's X-Ray patch runs, which traces either). Taken with
 * `process.getBuiltinModule`, not `import()`: the bundles are CommonJS, but
 * esbuild leaves `import('node:http')` an ESM import, whose facade reads
 * every export of the module, and its lazy fetch-family getters load undici
 * too (~14 ms of every function's first answer).
 */

export interface ExchangeRequest {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  /** The whole exchange's deadline; past it, a `TimeoutError` rejects it. */
  timeoutMs: number;
}

export interface ExchangeResponse {
  status: number;
  body: Buffer;
}

export function httpExchange(
  request: ExchangeRequest,
): Promise<ExchangeResponse> {
  const { url, body } = request;
  const { request: send } = process.getBuiltinModule(
    url.protocol === 'https:' ? 'node:https' : 'node:http',
  );
  return new Promise((resolve, reject) => {
    // Settles once: whatever the socket reports after the deadline is moot.
    const deadline = setTimeout(() => {
      const error = new Error(`no answer within ${request.timeoutMs} ms`);
      error.name = 'TimeoutError';
      reject(error);
      req.destroy();
    }, request.timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(deadline);
      reject(error);
    };
    const req = send(
      url,
      {
        method: request.method,
        headers:
          body === undefined
            ? request.headers
            : {
                ...request.headers,
                'content-length': String(Buffer.byteLength(body)),
              },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          clearTimeout(deadline);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
        });
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}
