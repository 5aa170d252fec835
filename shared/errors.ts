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

export class RateLimitedError extends DomainError {
  override readonly status = 429;
  override readonly code = 'rate_limited';
}

export class ServiceUnavailableError extends DomainError {
  override readonly status = 503;
  override readonly code: string = 'service_unavailable';
}

/**
 * An inventory that can never be applied (schema refusal, unknown tenant,
 * subject mismatch). Ingest records it and moves on instead of retrying.
 */
export class RejectedInventoryError extends DomainError {
  override readonly status = 422;
  override readonly code = 'inventory_rejected';
  readonly reason: string;

  constructor(
    reason: string,
    options?: ErrorOptions & { details?: ErrorDetails },
  ) {
    super(reason, options);
    this.reason = reason;
  }
}

/** A sync that ran past its 60 s bound and was rolled back; worth a retry. */
export class SyncTimeoutError extends DomainError {
  override readonly status = 503;
  override readonly code = 'sync_timeout';
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
