/**
 * One HTTP exchange with a Prometheus-compatible store, for reads and
 * writes alike: the optional tenant header, SigV4 signing for Amazon
 * Managed Service for Prometheus (service `aps`, the AWS SDK's signer and
 * default credential chain), and a deadline after which the request is
 * abandoned. Any failure (network, deadline, a non-2xx answer) is a
 * MetricsStoreError whose message never holds the request's body.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import type { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { BadGatewayError } from '../errors.ts';
import {
  type ExchangeRequest,
  type ExchangeResponse,
  httpExchange,
} from '../http-exchange.ts';

type CredentialChain = ReturnType<typeof defaultProvider>;

/** Credentials as the environment holds them (Lambda's execution role). */
export interface EnvironmentCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

/**
 * The SDK's default credential chain, loaded on the first signed request
 * rather than at import (it is a cold start's cost otherwise).
 */
function credentialsOnFirstUse(): CredentialChain {
  let chain: Promise<CredentialChain> | undefined;
  return async (options) => {
    chain ??= import('@aws-sdk/credential-provider-node').then(
      ({ defaultProvider }) => defaultProvider(),
    );
    return (await chain)(options);
  };
}

/** The store failed, answered badly or too late (502 on the read route). */
export class MetricsStoreError extends BadGatewayError {
  /** The store's HTTP status, when it answered. */
  readonly storeStatus: number | undefined;

  constructor(
    message: string,
    options?: ErrorOptions & { storeStatus?: number },
  ) {
    super(message, options);
    this.storeStatus = options?.storeStatus;
  }
}

export interface MetricsHttpOptions {
  /** `Name: value`, sent on every request (a multi-tenant store's tenant). */
  tenantHeader?: { name: string; value: string } | undefined;
  /** Sign every request with SigV4 for `aps` in this region (AMP). */
  sigv4Region?: string | undefined;
  /**
   * The environment's credentials, which the default chain would find first
   * (in Lambda, the execution role's); unset: the chain, loaded on the first
   * signed request. Loading the chain costs ~25 ms of a cold start's CPU.
   */
  credentials?: EnvironmentCredentials | undefined;
}

export type MetricsHttpRequest = ExchangeRequest;
export type MetricsHttpResponse = ExchangeResponse;

export type MetricsHttp = (
  request: MetricsHttpRequest,
) => Promise<MetricsHttpResponse>;

/** How much of a refusal's body is kept to say why (never the request's). */
const REASON_CHARS = 300;

/** A transport with the tenant header and, when configured, SigV4. */
export function metricsHttp(options: MetricsHttpOptions = {}): MetricsHttp {
  const signer =
    options.sigv4Region === undefined
      ? undefined
      : new SignatureV4({
          service: 'aps',
          region: options.sigv4Region,
          credentials: options.credentials ?? credentialsOnFirstUse(),
          sha256: Sha256,
        });
  return async (request) => {
    let headers: Record<string, string> = { ...request.headers };
    if (options.tenantHeader) {
      headers[options.tenantHeader.name] = options.tenantHeader.value;
    }
    if (signer) headers = await signedHeaders(signer, request, headers);
    let response: MetricsHttpResponse;
    try {
      response = await httpExchange({ ...request, headers });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new MetricsStoreError(
        timedOut
          ? `metrics store did not answer within ${request.timeoutMs} ms`
          : `metrics store unreachable: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const { body } = response;
    if (response.status < 200 || response.status > 299) {
      throw new MetricsStoreError(
        `metrics store answered ${response.status}: ${body.toString('utf8', 0, REASON_CHARS)}`,
        { storeStatus: response.status },
      );
    }
    return response;
  };
}

async function signedHeaders(
  signer: SignatureV4,
  request: MetricsHttpRequest,
  headers: Record<string, string>,
): Promise<Record<string, string>> {
  const { url } = request;
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const seen = query[name];
    if (seen === undefined) query[name] = value;
    else query[name] = Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query,
    headers: { ...headers, host: url.host },
    body: request.body,
  });
  return signed.headers;
}
