"""Typed exceptions, one per error the service answers with (its envelope
``{"error": {"code", "message", "details", "request_id"}}``), plus the client's own."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx


class MirixError(Exception):
    """Everything this package raises."""


class APIConnectionError(MirixError):
    """The service could not be reached (after the retries)."""


class APITimeoutError(APIConnectionError):
    """The service did not answer in time (after the retries)."""


class ConfigurationError(MirixError):
    """No API key, or a malformed base URL."""


class APIError(MirixError):
    """An error answer of the service."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        code: str,
        details: Any = None,
        request_id: str | None = None,
        headers: httpx.Headers | None = None,
    ) -> None:
        super().__init__(f"{status_code} {code}: {message}")
        self.message = message
        self.status_code = status_code
        self.code = code
        self.details = details
        self.request_id = request_id
        self.headers = headers or httpx.Headers()


class BadRequest(APIError):
    """400: the request is malformed."""


class ValidationError(BadRequest):
    """The body or parameters failed validation; ``details`` names each field and what to do."""


class AuthenticationError(APIError):
    """401: no key, an unknown, revoked or expired key."""


class PermissionDenied(APIError):
    """403: the key lacks a scope the operation needs."""


class NotFound(APIError):
    """404: nothing of that id in this organization (another organization's object included)."""


class Conflict(APIError):
    """409: a concurrent request conflicted, or the same Idempotency-Key is still in flight."""


class PayloadTooLarge(APIError):
    """413: the body is larger than the service accepts."""


class UnprocessableEntity(ValidationError):
    """422: well-formed but refused (e.g. an Idempotency-Key reused with another body)."""


class RateLimited(APIError):
    """429: the key's rate limit or the organization's quota; ``retry_after`` in seconds."""

    @property
    def retry_after(self) -> float | None:
        return parse_retry_after(self.headers.get("retry-after"))


class ServerError(APIError):
    """5xx: the service failed or is unavailable (502/503/504 are retried first)."""


class JobFailed(MirixError):
    """A job the client waited for ended ``failed``."""

    def __init__(self, job: Any) -> None:
        super().__init__(f"job {job.id} failed: {job.error}")
        self.job = job


class WaitTimeout(MirixError):
    """A job the client waited for was not finished in time; ``job`` is its last state."""

    def __init__(self, job: Any) -> None:
        super().__init__(f"job {job.id} still {job.status}")
        self.job = job


_BY_CODE: dict[str, type[APIError]] = {"validation_error": ValidationError}
_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: UnprocessableEntity,
    429: RateLimited,
}


def error_from_response(response: httpx.Response) -> APIError:
    """The typed exception for an error answer, from its envelope (or its status alone)."""
    try:
        envelope = response.json().get("error") or {}
    except (ValueError, AttributeError):
        envelope = {}
    if not isinstance(envelope, dict):
        envelope = {}
    code = str(envelope.get("code") or f"http_{response.status_code}")
    status = response.status_code
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else APIError)
    if status == 400 and code in _BY_CODE:
        cls = _BY_CODE[code]
    return cls(
        str(envelope.get("message") or response.reason_phrase or "error"),
        status_code=status,
        code=code,
        details=envelope.get("details"),
        request_id=envelope.get("request_id") or response.headers.get("x-request-id"),
        headers=response.headers,
    )


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date; None when absent or invalid."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
