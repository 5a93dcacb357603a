"""The one application error hierarchy. Every error the API returns has a stable ``code``."""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    status_code = 400
    code = "bad_request"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class ValidationFailed(ApplicationError):
    status_code = 400
    code = "validation_error"


class Unprocessable(ApplicationError):
    """Well-formed input that the operation cannot act on (e.g. a write that would store nothing)."""

    status_code = 422
    code = "unprocessable"


class NotFound(ApplicationError):
    status_code = 404
    code = "not_found"


class Conflict(ApplicationError):
    status_code = 409
    code = "conflict"


class Forbidden(ApplicationError):
    status_code = 403
    code = "forbidden"


class ServiceUnavailable(ApplicationError):
    status_code = 503
    code = "service_unavailable"


class MissingTenantScope(RuntimeError):
    """A tenant-owned model was queried with no organization in scope (a programming error)."""
