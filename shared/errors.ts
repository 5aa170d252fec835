/**
 * Domain errors. Each carries the HTTP status and the spec's error code, so one
 * error middleware can map any of them without a lookup table per handler.
 * A status of 500 or more never exposes its message to a caller.
 */
export type ErrorDetails = Record<string, unknown>;

export class DomainError extends Error {
  readonly status: number = 500;
  readonly code: string = 'internal_error';
  readonly details: ErrorDetails | undefined;

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
  override readonly status = 400;
  override readonly code: string = 'bad_request';
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
  override readonly status = 401;
  override readonly code = 'unauthorized';
}

export class ForbiddenError extends DomainError {
  override readonly status = 403;
  override readonly code = 'forbidden';
}

export class NotFoundError extends DomainError {
  override readonly status = 404;
  override readonly code = 'not_found';
}

export class ConflictError extends DomainError {
  override readonly status = 409;
  override readonly code: string = 'conflict';
}

/** A request body over its route's limit (413). */
export class PayloadTooLargeError extends DomainError {
  override readonly status = 413;
  override readonly code = 'payload_too_large';
}

/** A request body of a media type the route does not take (415). */
export class UnsupportedMediaTypeError extends DomainError {
  override readonly status = 415;
  override readonly code = 'unsupported_media_type';
}

/** A well-formed body the contract refuses, naming the field (422). */
export class UnprocessableError extends DomainError {
  override readonly status = 422;
  override readonly code = 'unprocessable';
}

/** A spent budget; the response carries `Retry-After: retryAfterSeconds`. */
export class RateLimitedError extends DomainError {
  override readonly status = 429;
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
  override readonly status = 502;
  override readonly code = 'events_backend_unavailable';
  readonly expose = true;
}

/** The events store did not answer within the read's deadline (504). */
export class EventsBackendTimeoutError extends DomainError {
  override readonly status = 504;
  override readonly code = 'events_backend_timeout';
  readonly expose = true;
}

export class ServiceUnavailableError extends DomainError {
  override readonly status = 503;
  override readonly code: string = 'service_unavailable';
}

/**
 * An inventory that can never be applied (schema refusal, unknown tenant,
 * subject mismatch). Ingest records it and moves on instead of retrying.
 */
/** The longest refusal reason kept, logged or stored. */
export const MAX_REJECTION_REASON_CHARS = 300;

export class RejectedInventoryError extends DomainError {
  override readonly status = 422;
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
  override readonly status = 502;
  override readonly code: string = 'bad_gateway';
}

/**
 * A live read (manifest, revisions, logs) the agent could not or would not
 * serve: the spec's 409 agent gates, 502/503/504 agent and NATS failures,
 * and 503 audit_unavailable. Their messages are written for callers (an
 * agent's own message only after the sanitizer), so a 5xx keeps its message.
 */
export class LiveReadError extends DomainError {
  override readonly status: number;
  override readonly code: string;
  readonly expose = true;

  constructor(
    status: number,
    code: string,
    message: string,
    options?: ErrorOptions & { details?: ErrorDetails },
  ) {
    super(message, options);
    this.status = status;
    this.code = code;
  }
}
