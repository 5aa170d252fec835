import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../shared/config.ts';
import { metricsStoreFromConfig } from '../../../shared/metrics/from-config.ts';

describe('metricsHttp signing', () => {
  let seen: IncomingHttpHeaders | undefined;
  const server = createServer((req, res) => {
    seen = req.headers;
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        status: 'success',
        data: { resultType: 'vector', result: [] },
      }),
    );
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('signs with the credentials the environment holds, as the default chain would', async () => {
    // Prepare: the variables Lambda sets for the execution role.
    const store = metricsStoreFromConfig(
      parseConfig({
        METRICS_URL: url,
        METRICS_SIGV4_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'ASIAENVIRONMENTKEY00',
        AWS_SECRET_ACCESS_KEY: 'environment-secret',
        AWS_SESSION_TOKEN: 'environment-session',
      }),
    );
    // Act
    await store?.queryInstant('up', 0);
    // Assess
    expect(seen?.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=ASIAENVIRONMENTKEY00\/\d{8}\/eu-west-1\/aps\/aws4_request, /,
    );
    expect(seen?.['x-amz-security-token']).toBe('environment-session');
  });
});
