"""OpenAPI post-processing: the error responses every /v1 operation can give.

Views declare their success responses; the errors come from one exception handler
(:mod:`apps.platform.exception_handler`) in one shape, so they are added here once, for
every operation, instead of in each view. Without them a client generated from the schema
(and a schema-driven fuzzer) would treat a documented 400 or 404 as a contract violation.
"""

from __future__ import annotations

from typing import Any

from apps.platform.middleware import MAX_PATH_BYTES

ERROR_COMPONENT = "Error"
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details", "request_id"],
            "properties": {
                "code": {"type": "string", "description": "Stable machine-readable error code."},
                "message": {"type": "string", "description": "What went wrong and what to change."},
                "details": {"description": "Per-field messages for validation errors; otherwise an object."},
                "request_id": {"type": "string", "nullable": True, "description": "Quote it when reporting a problem."},
            },
        }
    },
}
# Status → description. 401/403/429 come from authentication, scopes and throttles on every
# operation; 400/404/409/413/414/415/422 from input and lookups; 502 when
# the model provider fails; 503 when the database is down or the request ran out of time.
ERROR_RESPONSES: dict[str, str] = {
    "400": "The request is invalid; the message and details say what to change.",
    "401": "No API key, or one that is malformed, revoked or expired.",
    "403": "The API key lacks the scope this operation requires.",
    "404": "Nothing with this id exists in the caller's organization.",
    "405": "The method is not allowed on this path.",
    "409": "The request conflicts with the current state.",
    "413": "The request body is larger than the server accepts.",
    "414": f"The path and query are longer than the server accepts ({MAX_PATH_BYTES} bytes).",
    "415": "The request body's media type is not accepted.",
    "422": "The request is well-formed but cannot be acted on (e.g. it would store nothing); the message says why.",
    "429": "Rate limit or quota exceeded; retry after the Retry-After header.",
    "502": "The model provider failed or answered malformed output; nothing was stored.",
    "503": "A backing service is unavailable, or the request ran past its time budget (nothing was stored); "
    "retry after the Retry-After header.",
}
_METHODS = {"get", "post", "put", "patch", "delete"}


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular ``POSTPROCESSING_HOOKS`` entry: documents the shared error responses, and
    that an optional query parameter sent empty counts as not sent."""
    result.setdefault("components", {}).setdefault("schemas", {})[ERROR_COMPONENT] = ERROR_SCHEMA
    reference = {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in operations.items():
            if method not in _METHODS:
                continue
            for parameter in operation.get("parameters", []):
                # DRF reads an empty optional query value (``?cursor=``) as absent.
                if parameter.get("in") == "query" and not parameter.get("required"):
                    parameter["allowEmptyValue"] = True
            responses = operation.setdefault("responses", {})
            for status, description in ERROR_RESPONSES.items():
                responses.setdefault(
                    status, {"description": description, "content": {"application/json": {"schema": reference}}}
                )
    return result
