"""One JSON error shape for every error: ``{"error": {"code", "message", "details", "request_id"}}``."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
import sentry_sdk
from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import DatabaseError, InterfaceError, OperationalError, connections, transaction
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions as drf
from rest_framework.response import Response

from apps.platform.budget import RequestTimedOut
from apps.platform.errors import ApplicationError
from apps.platform.logging import request_id_var

logger = logging.getLogger(__name__)

_DRF_CODES: dict[type[drf.APIException], str] = {
    drf.NotAuthenticated: "not_authenticated",
    drf.AuthenticationFailed: "authentication_failed",
    drf.PermissionDenied: "permission_denied",
    drf.NotFound: "not_found",
    drf.MethodNotAllowed: "method_not_allowed",
    drf.NotAcceptable: "not_acceptable",
    drf.UnsupportedMediaType: "unsupported_media_type",
    drf.Throttled: "throttled",
    drf.ParseError: "malformed_request",
    drf.ValidationError: "validation_error",
}


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {
        "error": {
            "code": code,
            "message": message,
            "details": details if details is not None else {},
            "request_id": request_id_var.get(),
        }
    }


def _rollback_open_transactions() -> None:
    for conn in connections.all(initialized_only=True):
        if conn.in_atomic_block:
            transaction.set_rollback(True, using=conn.alias)


def _drf_error(exc: drf.APIException) -> tuple[str, str, Any]:
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "bad_request")
    if isinstance(exc, drf.ValidationError):
        return code, "The request is invalid; see details for each field.", exc.detail
    if isinstance(exc, drf.Throttled):
        return code, str(exc.detail), {"retry_after_seconds": getattr(exc, "wait", None)}
    return code, str(exc.detail), {}


_DATABASE_UNAVAILABLE = ("service_unavailable", "The database is unavailable; retry shortly.")
_RETRY_AFTER = {"Retry-After": "5"}


def _log_database_unavailable(exc: Exception) -> None:
    logger.warning("database unavailable", extra={"error_type": type(exc).__name__})
    sentry_sdk.capture_exception(exc)


def timed_out(exc: BaseException) -> tuple[str, str] | None:
    """The 503's code and message when ``exc`` is a timeout (the request's budget spent before
    its commit, or a statement cancelled by ``statement_timeout``); None for anything else.
    Either way the request's transaction is rolled back: nothing of it is stored."""
    if isinstance(exc, RequestTimedOut):
        return (
            "request_timeout",
            f"The request took longer than its {exc.budget_seconds} s budget and was rolled back; nothing "
            "was stored. Retry it; split a large request (fewer chunks, messages or rows) if it keeps timing out.",
        )
    if isinstance(exc.__cause__, psycopg.errors.QueryCanceled):
        return (
            "request_timeout",
            f"A database statement ran longer than {settings.DATABASE_STATEMENT_TIMEOUT_SECONDS} s and was "
            "cancelled; nothing of this request was stored. Retry shortly; narrow the request if it keeps timing out.",
        )
    return None


def _logged_timeout(exc: BaseException) -> dict[str, Any] | None:
    timeout = timed_out(exc)
    if timeout is None:
        return None
    logger.warning("request timed out", extra={"error_type": type(exc.__cause__ or exc).__name__})
    return error_body(*timeout)


def timeout_response(exc: BaseException) -> JsonResponse | None:
    """The JSON 503 with ``Retry-After`` for a timeout (see ``timed_out``), for the places that
    see an exception outside DRF's handler; None for anything else."""
    body = _logged_timeout(exc)
    return None if body is None else JsonResponse(body, status=503, headers=_RETRY_AFTER)


def database_unavailable(exc: Exception) -> JsonResponse:
    """The 503 for a database that went away where DRF's handler cannot see it: while the
    request's transaction ends (its commit, or the reconnect after a failed rollback)."""
    timeout = timeout_response(exc)
    if timeout is not None:
        return timeout
    _log_database_unavailable(exc)
    return JsonResponse(error_body(*_DATABASE_UNAVAILABLE), status=503, headers=_RETRY_AFTER)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    _rollback_open_transactions()
    headers: dict[str, str] = {}
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = drf.PermissionDenied()

    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body("payload_too_large", "The request body is larger than the server accepts."), status=413
        )
    if isinstance(exc, ApplicationError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
    if isinstance(exc, drf.APIException):
        code, message, details = _drf_error(exc)
        auth_header = getattr(exc, "auth_header", None)
        if auth_header:
            headers["WWW-Authenticate"] = auth_header
        wait = getattr(exc, "wait", None)
        if wait is not None:
            headers["Retry-After"] = str(max(1, int(wait + 0.999)))
        return Response(error_body(code, message, details), status=exc.status_code, headers=headers)
    if isinstance(exc.__cause__, (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)):
        # The database rolled this request back to break a cycle with another one; nothing
        # of it was stored, and the same request succeeds when sent again.
        logger.warning("transaction conflict", extra={"error_type": type(exc.__cause__).__name__})
        return Response(
            error_body("conflict", "A concurrent request conflicted with this one; retry it."),
            status=409,
            headers={"Retry-After": "1"},
        )
    timeout = _logged_timeout(exc)
    if timeout is not None:
        return Response(timeout, status=503, headers=_RETRY_AFTER)
    if isinstance(exc, (OperationalError, InterfaceError)):
        _log_database_unavailable(exc)
        return Response(error_body(*_DATABASE_UNAVAILABLE), status=503, headers=_RETRY_AFTER)
    # Never echo raw error text (database errors can carry other queries' text).
    logger.error("unhandled error", exc_info=exc, extra={"error_type": type(exc).__name__})
    sentry_sdk.capture_exception(exc)
    status = 500
    if isinstance(exc, DatabaseError):
        return Response(error_body("database_error", "The database rejected the operation."), status=status)
    return Response(error_body("server_error", "An internal error occurred; it has been logged."), status=status)


def json_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("not_found", f"No route for {request.path}."), status=404)


def json_server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_body("server_error", "An internal error occurred; it has been logged."), status=500)
