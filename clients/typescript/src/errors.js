// Typed errors, one per error the service answers with (its envelope
// {"error": {"code", "message", "details", "request_id"}}), plus the client's own.

/** Everything this package throws. */
export class MirixError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The service could not be reached (after the retries). */
export class APIConnectionError extends MirixError {}

/** The service did not answer in time (after the retries). */
export class APITimeoutError extends APIConnectionError {}

/** No API key, or a malformed base URL. */
export class ConfigurationError extends MirixError {}

/** An error answer of the service. */
export class APIError extends MirixError {
  constructor(message, { status, code, details = null, requestId = null, headers = new Headers() }) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.details = details;
    this.requestId = requestId;
    this.headers = headers;
    this.rawMessage = message;
  }
}

/** 400: the request is malformed. */
export class BadRequestError extends APIError {}
/** The body or parameters failed validation; `details` names each field and what to do. */
export class ValidationError extends BadRequestError {}
/** 401: no key, an unknown, revoked or expired key. */
export class AuthenticationError extends APIError {}
/** 403: the key lacks a scope the operation needs. */
export class PermissionDeniedError extends APIError {}
/** 404: nothing of that id in this organization (another organization's object included). */
export class NotFoundError extends APIError {}
/** 409: a concurrent request conflicted, or the same Idempotency-Key is still in flight. */
export class ConflictError extends APIError {}
/** 413: the body is larger than the service accepts. */
export class PayloadTooLargeError extends APIError {}
/** 422: well-formed but refused (e.g. an Idempotency-Key reused with another body). */
export class UnprocessableEntityError extends ValidationError {}

/** 429: the key's rate limit or the organization's quota; `retryAfter` in seconds. */
export class RateLimitedError extends APIError {
  get retryAfter() {
    return parseRetryAfter(this.headers.get("retry-after"));
  }
}

/** 5xx: the service failed or is unavailable (502/503/504 are retried first). */
export class ServerError extends APIError {}

/** A job the client waited for ended `failed`. */
export class JobFailedError extends MirixError {
  constructor(job) {
    super(`job ${job.id} failed: ${JSON.stringify(job.error)}`);
    this.job = job;
  }
}

/** A job the client waited for was not finished in time; `job` is its last state. */
export class WaitTimeoutError extends MirixError {
  constructor(job) {
    super(`job ${job.id} still ${job.status}`);
    this.job = job;
  }
}

const BY_STATUS = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitedError,
};

/** The typed error for an error answer, from its envelope (or its status alone). */
export function errorFromResponse(response, body) {
  let envelope = {};
  try {
    const parsed = JSON.parse(body);
    if (parsed && typeof parsed.error === "object" && parsed.error !== null) envelope = parsed.error;
  } catch {
    // not JSON: the status alone decides
  }
  const status = response.status;
  const code = String(envelope.code || `http_${status}`);
  let Cls = BY_STATUS[status] || (status >= 500 ? ServerError : APIError);
  if (status === 400 && code === "validation_error") Cls = ValidationError;
  return new Cls(String(envelope.message || response.statusText || "error"), {
    status,
    code,
    details: envelope.details ?? null,
    requestId: envelope.request_id || response.headers.get("x-request-id"),
    headers: response.headers,
  });
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date; null when absent or invalid. */
export function parseRetryAfter(value, now = Date.now()) {
  if (!value) return null;
  const trimmed = String(value).trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.max(0, Number(trimmed));
  const when = Date.parse(trimmed);
  if (Number.isNaN(when)) return null;
  return Math.max(0, (when - now) / 1000);
}
