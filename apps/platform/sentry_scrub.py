"""``before_send`` for Sentry: strip request bodies, memory text and database error text.

Framework-free. Keeps what is needed to debug (exception type, stack frames' function and
file names, request method and path, ids) and drops everything that could carry customer
content: bodies, query strings, cookies, headers other than a safe list, local variables,
log messages, exception values, breadcrumbs' messages and data.
"""

from __future__ import annotations

from typing import Any

SAFE_HEADERS = {"content-type", "content-length", "user-agent", "x-request-id"}
REDACTED = "[redacted]"


def _scrub_request(request: dict[str, Any]) -> None:
    for key in ("data", "query_string", "cookies", "env"):
        request.pop(key, None)
    headers = request.get("headers")
    if isinstance(headers, dict):
        request["headers"] = {k: v for k, v in headers.items() if k.lower() in SAFE_HEADERS}


def _scrub_exception(exception: dict[str, Any]) -> None:
    for value in exception.get("values") or []:
        if value.get("value"):
            value["value"] = REDACTED
        for frame in (value.get("stacktrace") or {}).get("frames") or []:
            frame.pop("vars", None)
            frame.pop("pre_context", None)
            frame.pop("context_line", None)
            frame.pop("post_context", None)


def scrub_event(event: dict[str, Any], hint: dict[str, Any] | None = None) -> dict[str, Any]:
    if isinstance(event.get("request"), dict):
        _scrub_request(event["request"])
    if isinstance(event.get("exception"), dict):
        _scrub_exception(event["exception"])
    for thread in (event.get("threads") or {}).get("values") or []:
        for frame in (thread.get("stacktrace") or {}).get("frames") or []:
            frame.pop("vars", None)
    if "logentry" in event:
        event["logentry"] = {"message": REDACTED}
    event.pop("message", None)
    event.pop("extra", None)
    breadcrumbs = event.get("breadcrumbs")
    if isinstance(breadcrumbs, dict):
        for crumb in breadcrumbs.get("values") or []:
            crumb.pop("data", None)
            if "message" in crumb:
                crumb["message"] = REDACTED
    event.pop("user", None)
    return event
