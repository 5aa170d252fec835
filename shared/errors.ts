/**
 * Domain errors. Each carries the spec's error code, and the code its HTTP
 * status (ERROR_STATUS, the one table of both), so one error middleware can
 * map any of them without a lookup table per handler. A status of 500 or
 * more never exposes its message to a caller.
 */
export type ErrorDetails = Record<string, unknown>;

/**
 * Every error code, with the status it comes with (the spec's error
 * tables). The route table names, per route, the codes its own domain can
 * answer (`failures`); the access, parameter and rate-limit codes follow
 * from the rest of its entry (shared/http/openapi.ts errorCodesOf).
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_param: 400,
  invalid_pql: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  no_agent: 409,
  agent_offline: 409,
  agent_too_old: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  inventory_rejected: 422,
  rate_limited: 429,
  internal_error: 500,
  agent_error: 502,
  agent_unreachable: 502,
  bad_gateway: 502,
  events_backend_unavailable: 502,
  audit_unavailable: 503,
  live_unavailable: 503,
  metrics_not_configured: 503,
  service_unavailable: 503,
  agent_timeout: 504,
  events_backend_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class DomainError extends Error {
  readonly code: ErrorCode = 'internal_error';
  readonly details: ErrorDetails | undefined;

  /** The code's status: ERROR_STATUS is the only place it is written. */
  get status(): number {
    return ERROR_STATUS[this.code];
  }

  constructor(
    message: string,
    options?: ErrorOptions & { details?: ErrorDetails },
  ) {
    super(message, options);
    this.name = new.target.name;
    this.details = options?.details;
  }
}

/** A request or input that breaks a rule of the contract (400 bad_request). */
export class ValidationError extends DomainError {
  override readonly code: ErrorCode = 'bad_request';
}

/** A search or sort parameter outside its rule (400 invalid_param). */
export class InvalidParamError extends ValidationError {
  override readonly code = 'invalid_param';
}

/** A PQL expression that does not parse or names an unknown field (400 invalid_pql). */
export class InvalidPqlError extends ValidationError {
  override readonly code = 'invalid_pql';
}

export class UnauthorizedError extends DomainError {
  override readonly code = 'unauthorized';
}

export class ForbiddenError extends DomainError {
  override readonly code = 'forbidden';
}

export class NotFoundError extends DomainError {
  override readonly code = 'not_found';
}

export class ConflictError extends DomainError {
  override readonly code: ErrorCode = 'conflict';
}

/** A request body over its route's limit (413). */
export class PayloadTooLargeError extends DomainError {
  override readonly code = 'payload_too_large';
}

/** A request body of a media type the route does not take (415). */
export class UnsupportedMediaTypeError extends DomainError {
  override readonly code = 'unsupported_media_type';
}

/** A well-formed body the contract refuses, naming the field (422). */
export class UnprocessableError extends DomainError {
  override readonly code = 'unprocessable';
}

/** A spent budget; the response carries `Retry-After: retryAfterSeconds`. */
export class RateLimitedError extends DomainError {
  override readonly code = 'rate_limited';
  readonly retryAfterSeconds: number;

  constructor(
    message: string,
    options: ErrorOptions & { retryAfterSeconds: number },
  ) {
    super(message, options);
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * The events store failed or could not be reached (502): never an empty
 * list, which would read as "nothing happened". Its message is for callers.
 */
export class EventsBackendUnavailableError extends DomainError {
  override readonly code = 'events_backend_unavailable';
  readonly expose = true;
}

/** The events store did not answer within the read's deadline (504). */
export class EventsBackendTimeoutError extends DomainError {
  override readonly code = 'events_backend_timeout';
  readonly expose = true;
}

export class ServiceUnavailableError extends DomainError {
  override readonly code: ErrorCode = 'service_unavailable';
}

/**
 * An inventory that can never be applied (schema refusal, unknown tenant,
 * subject mismatch). Ingest records it and moves on instead of retrying.
 */
/** The longest refusal reason kept, logged or stored. */
export const MAX_REJECTION_REASON_CHARS = 300;

export class RejectedInventoryError extends DomainError {
  override readonly code = 'inventory_rejected';
  /** Names the field and the rule; bounded, whatever built it. */
  readonly reason: string;

  constructor(
    reason: string,
    options?: ErrorOptions & { details?: ErrorDetails },
  ) {
    const bounded =
      reason.length > MAX_REJECTION_REASON_CHARS
        ? `${reason.slice(0, MAX_REJECTION_REASON_CHARS - 1)}…`
        : reason;
    super(bounded, options);
    this.reason = bounded;
  }
}

/** An upstream service failed or timed out (502; the body stays generic). */
export class BadGatewayError extends DomainError {
  override readonly code: ErrorCode = 'bad_gateway';
}

/**
 * A live read (manifest, revisions, logs) the agent could not or would not
 * serve: the spec's 409 agent gates, 502/503/504 agent and NATS failures,
 * and 503 audit_unavailable. Their messages are written for callers (an
 * agent's own message only after the sanitizer), so a 5xx keeps its message.
 */
export class LiveReadError extends DomainError {
  override readonly code: ErrorCode;
  readonly expose = true;

  constructor(
    code: LiveReadFailure,
    message: string,
    options?: ErrorOptions & { details?: ErrorDetails },
  ) {
    super(message, options);
    this.code = code;
  }
}

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

export type LiveReadFailure = (typeof LIVE_READ_FAILURES)[number];
