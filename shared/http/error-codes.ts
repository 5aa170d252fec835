/**
 * What each status means to a caller, for the OpenAPI document. The codes
 * and their statuses are ERROR_STATUS (shared/errors.ts).
 */
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
