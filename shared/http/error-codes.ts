/**
 * Every error code the API answers, with the status it comes with (the
 * spec's error tables). The route table names, per route, the codes its own
 * domain can answer (`failures`); the access, parameter and rate-limit codes
 * follow from the rest of its entry (openapi.ts errorCodesOf). Tests check
 * each error a route answers against what its entry documents.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_param: 400,
  invalid_pql: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  no_agent: 409,
  agent_offline: 409,
  agent_too_old: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal_error: 500,
  agent_error: 502,
  agent_unreachable: 502,
  bad_gateway: 502,
  events_backend_unavailable: 502,
  audit_unavailable: 503,
  live_unavailable: 503,
  metrics_not_configured: 503,
  agent_timeout: 504,
  events_backend_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'A bad, repeated or unknown query parameter (details.param names it), or a bad body',
  401: 'No valid bearer token (a webhook: no valid source secret)',
  403: 'The permission is not held (on the cluster environment, for a cluster route)',
  404: 'No such object, or one outside the caller environments',
  409: "The cluster's agent cannot serve the read (none, offline, or too old)",
  413: 'The body is over the size limit',
  415: 'The body is not JSON',
  422: 'The body breaks the contract (the message names the field)',
  429: 'The per-user budget is spent (Retry-After says when to retry)',
  500: 'An unexpected failure (a generic message)',
  502: 'An upstream (the agent, the events or metrics store) failed',
  503: 'A service the read needs is not configured or not reachable',
  504: 'An upstream did not answer in time',
};

/** A live read's own failures (shared/live: gates, NATS, the audit). */
export const LIVE_READ_FAILURES = [
  'no_agent',
  'agent_offline',
  'agent_too_old',
  'agent_error',
  'agent_unreachable',
  'live_unavailable',
  'agent_timeout',
  'audit_unavailable',
] as const satisfies readonly ErrorCode[];
