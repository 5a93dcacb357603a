from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.platform.budget import request_budget
from apps.platform.exception_handler import error_body, timeout_response
from apps.platform.logging import request_id_var

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
