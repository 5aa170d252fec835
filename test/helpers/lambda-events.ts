/**
 * The events AWS delivers to the functions, in the documented shapes: an
 * EventBridge scheduled event, and an API Gateway HTTP API (payload format
 * 2.0) event of a request that passed the route's JWT authorizer, whose
 * claims API Gateway passes as strings.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { FAKE_ACCOUNT } from './lambda-bundles.ts';
import { REGION } from './lambda-stage.ts';

export function scheduledEvent(rule: string) {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: FAKE_ACCOUNT,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: REGION,
    resources: [`arn:aws:events:${REGION}:${FAKE_ACCOUNT}:rule/${rule}`],
    detail: {},
  };
}

/** API Gateway's HTTP API (payload 2.0) event of a request that passed its JWT authorizer. */
export function httpApiEvent(request: {
  method: string;
  routePath: string;
  pathParameters: Record<string, string>;
  query?: Record<string, string>;
  body?: string;
  /** The caller's email, verified. */
  email: string;
}): APIGatewayProxyEventV2WithJWTAuthorizer {
  const rawPath = request.routePath.replace(
    /\{(\w+)\}/g,
    (_, name: string) => request.pathParameters[name] ?? '',
  );
  const query = request.query ?? {};
  const rawQueryString = new URLSearchParams(query).toString();
  const routeKey = `${request.method} ${request.routePath}`;
  const now = new Date();
  const claims = {
    sub: `auth0|${request.email}`,
    email: request.email,
    email_verified: 'true',
    iss: 'https://issuer.example.test/',
    aud: 'k8s-inventory-api',
    iat: String(Math.floor(now.getTime() / 1000) - 60),
    exp: String(Math.floor(now.getTime() / 1000) + 3600),
  };
  const pathParameters = Object.fromEntries(
    [...request.routePath.matchAll(/\{(\w+)\}/g)].map(([, name]) => [
      name as string,
      request.pathParameters[name as string] ?? '',
    ]),
  );
  return {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString,
    headers: {
      accept: 'application/json',
      authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2lnbmF0dXJl',
      host: 'abcdef1234.execute-api.us-east-1.amazonaws.com',
      'user-agent': 'curl/8.5.0',
      'x-amzn-trace-id': 'Root=1-65f1a2b3-0123456789abcdef01234567',
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-port': '443',
      'x-forwarded-proto': 'https',
      ...(request.body === undefined
        ? {}
        : {
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(request.body)),
          }),
    },
    ...(rawQueryString === '' ? {} : { queryStringParameters: query }),
    ...(Object.keys(pathParameters).length === 0 ? {} : { pathParameters }),
    requestContext: {
      accountId: FAKE_ACCOUNT,
      apiId: 'abcdef1234',
      authorizer: {
        jwt: { claims, scopes: [] },
        principalId: '',
        integrationLatency: 0,
      },
      domainName: 'abcdef1234.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abcdef1234',
      http: {
        method: request.method,
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: '203.0.113.7',
        userAgent: 'curl/8.5.0',
      },
      requestId: `${randomUUID().slice(0, 8)}=`,
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(request.body === undefined ? {} : { body: request.body }),
    isBase64Encoded: false,
  } as APIGatewayProxyEventV2WithJWTAuthorizer;
}
