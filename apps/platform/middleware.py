from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.platform.budget import request_budget
from apps.platform.exception_handler import error_body, timeout_response
from apps.platform.logging import request_id_var
from apps.platform.timing import phase, timed_request

REQUEST_ID_HEADER = "X-Request-Id"
_ACCEPTABLE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


class RequestIdMiddleware:
    """Gives every request an id (a well-formed client id is kept), echoed in the response."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = incoming if _ACCEPTABLE_REQUEST_ID.match(incoming) else f"req_{uuid.uuid4().hex}"
        request.request_id = request_id  # type: ignore[attr-defined]
        token = request_id_var.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
        response[REQUEST_ID_HEADER] = request_id
        return response


class RequestBudgetMiddleware:
    """Opens the request's time budget (``settings.REQUEST_BUDGET_SECONDS``, see
    ``apps.platform.budget``) and answers a timeout raised outside the API views' error
    handling (the console, a commit after the view) with the JSON 503 and ``Retry-After``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with request_budget(settings.REQUEST_BUDGET_SECONDS):
            return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return timeout_response(exception)


MAX_PATH_BYTES = 2048


class RequestLineMiddleware:
    """Refuses a path (with its query) that no route can take before any view runs: longer than
    ``MAX_PATH_BYTES`` (a 414) or holding a NUL character, which no Postgres text can store
    (a 400). The server itself refuses request lines over 8190 bytes (``infra.gunicorn_config``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = len(request.get_full_path().encode())
        if length > MAX_PATH_BYTES:
            return JsonResponse(
                error_body(
                    "uri_too_long",
                    f"The path and query are {length} bytes; at most {MAX_PATH_BYTES} are accepted. "
                    "Shorten the identifiers, or send long values in a JSON body.",
                ),
                status=414,
            )
        query = [text for key, values in request.GET.lists() for text in (key, *values)]
        if "\x00" in request.path or any("\x00" in text for text in query):
            return JsonResponse(
                error_body(
                    "malformed_request", "The path or query holds a NUL character (%00); remove it from the URL."
                ),
                status=400,
            )
        return self.get_response(request)


TIMING_REQUEST_HEADER = "X-Server-Timing"


def _timing_wanted(request: HttpRequest) -> bool:
    mode = settings.SERVER_TIMING
    if mode == "always":
        return True
    asked = request.headers.get(TIMING_REQUEST_HEADER, "").strip().lower()
    return mode == "on-request" and asked not in ("", "0", "off", "false")


class ServerTimingMiddleware:
    """Times the request's phases (``apps.platform.timing``) and answers them in a
    ``Server-Timing`` header, when the request asks (``X-Server-Timing: 1``) or the deployment
    times every request (``MIRIX_SERVER_TIMING=always``; ``off`` never does). Every SQL
    statement of a timed request counts as ``sql``, one over the graph (AGE's vertices and
    edges, the adjacency index, the anchor vectors) as ``graph``. A request
    that does not ask pays one header lookup."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not _timing_wanted(request):
            return self.get_response(request)
        with timed_request() as timer, ExitStack() as wrappers:
            for alias in connections:
                wrappers.enter_context(connections[alias].execute_wrapper(_timed_statement))
            response = self.get_response(request)
            response["Server-Timing"] = timer.header()
        return response


def _timed_statement(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
    # The graph's statements read AGE's types or the graph plane's tables (all named graph_…).
    with phase("graph" if "ag_catalog." in sql or "graph_" in sql else "sql"):
        return execute(sql, params, many, context)
