/**
 * The benchmarks' HTTP client: one GET with a bearer token over the given
 * keep-alive agent, resolving to its status (0 when the request failed),
 * its body read and dropped. node:http, not fetch: undici's fetch costs the
 * client about as much CPU per request as the server it measures.
 */
import { type Agent, request } from 'node:http';

export function httpGet(
  agent: Agent,
  url: string,
  token: string,
): Promise<number> {
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
