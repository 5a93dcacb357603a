"""OpenAPI post-processing: the error responses every /v1 operation can give.

Views declare their success responses; the errors come from one exception handler
(:mod:`apps.platform.exception_handler`) in one shape, so they are added here once, for
every operation, instead of in each view. Without them a client generated from the schema
(and a schema-driven fuzzer) would treat a documented 400 or 404 as a contract violation.
"""

from __future__ import annotations

import re
from typing import Any

from apps.platform.middleware import MAX_PATH_BYTES
from apps.platform.openapi_tags import TAGS

ERROR_COMPONENT = "Error"
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "example": {
        "error": {
            "code": "validation_error",
            "message": "Send 'query' only: 'question' is its deprecated alias, and both were given.",
            "details": {"question": ["Deprecated alias of 'query'; remove it."]},
            "request_id": "req_3f2c1d9e8a474b6e9c1d2f7a5b8e6d10",
        }
    },
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


def tag_by_resource(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """``POSTPROCESSING_HOOKS`` entry: each operation's tag is the resource its operationId
    starts with (``<tag>_<action>``, ADR 0041), so the tags and the ids cannot disagree. An
    operation whose id starts with no known resource keeps no tag (the schema test fails)."""
    by_length = sorted(TAGS, key=len, reverse=True)
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in _METHODS:
                continue
            operation_id = operation.get("operationId", "")
            operation["tags"] = [tag for tag in by_length if operation_id.startswith(f"{tag}_")][:1]
    return result


# Sample values by field name, so that a generated example reads like a real call; anything
# else gets a value of its schema's type and format.
_SAMPLES: dict[str, Any] = {
    "query": "Where did Ana hike with Leo last weekend?",
    "question": "Where did Ana hike with Leo last weekend?",
    "external_id": "user-42",
    "session_id": "session-2026-12-01",
    "content": "Yesterday I hiked Mount Tam with Leo.",
    "text": "We moved to Lisbon in 2021.",
    "summary": "Ana hiked Mount Tamalpais with Leo.",
    "answer": "Mount Tamalpais.",
    "name": "Ana",
    "role": "user",
    "title": "Repotting notes",
    "kind": "user",
    "task": "Convert 5 miles to kilometres",
    "domain": "units",
    "url": "http://127.0.0.1:9000/mirix-events",
    "base_url": "http://127.0.0.1:9000/v1",
    "cursor": "MjAyNi0xMi0wMVQwOTozMDowMCswMDowMHwzZjJjMWQ5ZS04YTQ3LTRiNmUtOWMxZC0yZjdhNWI4ZTZkMTA=",
    "next_cursor": None,
    "secret": "whsec_c2FtcGxlLXNlY3JldC1ub3QtcmVhbA==",
    "api_key": "sk-sample",
    "model": "gpt-4o-mini",
    "description": "CRM sync",
    "content_hash": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "model_hash": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "config_hash": "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752",
    "token_budget": 800,
    "limit": 10,
    "overlap_seconds": 3600,
}
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,)}
_FORMATS: dict[str, Any] = {
    "uuid": "3f2c1d9e-8a47-4b6e-9c1d-2f7a5b8e6d10",
    "date-time": "2026-12-01T09:30:00Z",
    "date": "2026-12-01",
    "uri": "http://127.0.0.1:9000/mirix-events",
    "email": "ops@mirix.invalid",
    "binary": "(the file's bytes)",
}
_MAX_DEPTH = 8


def _resolve(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def example_for(schema: dict[str, Any], components: dict[str, Any], name: str = "", depth: int = 0) -> Any:
    """A value that the schema accepts, built from its types, formats, enums and defaults."""
    schema = _resolve(schema, components)
    if depth > _MAX_DEPTH:
        return None
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = example_for(part, components, name, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
            else:
                return value
        return merged
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return example_for(schema[key][0], components, name, depth + 1)
    if "enum" in schema:
        return next((value for value in schema["enum"] if value is not None), None)
    kind = schema.get("type")
    sample = _SAMPLES.get(name)
    if isinstance(sample, _TYPES.get(kind or "", ())) and _within(sample, schema):
        return sample
    if "default" in schema:
        return schema["default"]
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if properties:
            return {
                key: example_for(value, components, key, depth + 1)
                for key, value in properties.items()
                if not _resolve(value, components).get("deprecated")  # an example shows the current names
            }
        extra = schema.get("additionalProperties")
        return {"key": example_for(extra, components, "", depth + 1)} if isinstance(extra, dict) and extra else {}
    if kind == "array":
        return [example_for(schema.get("items", {}), components, name, depth + 1)]
    if kind in ("integer", "number"):
        value = schema.get("minimum", 1 if kind == "integer" else 0.5)
        return min(value, schema["maximum"]) if "maximum" in schema else value
    if kind == "boolean":
        return True
    if kind == "string":
        return _FORMATS.get(schema.get("format", ""), "string")
    return None


def _within(sample: Any, schema: dict[str, Any]) -> bool:
    if isinstance(sample, str):
        fits_format = schema.get("format") in (None, "uri") and (schema.get("format") != "uri" or "://" in sample)
        fits_pattern = "pattern" not in schema or re.search(schema["pattern"], sample) is not None
        return len(sample) <= schema.get("maxLength", len(sample)) and fits_format and fits_pattern
    return bool(schema.get("minimum", sample) <= sample <= schema.get("maximum", sample))


def add_examples(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """``POSTPROCESSING_HOOKS`` entry: a request example for every body and parameter, and a
    response example for every response, where the view declared none. Each is built from its
    schema, so it always matches it (the schema test validates them)."""
    components = result.get("components", {}).get("schemas", {})
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in _METHODS:
                continue
            for parameter in operation.get("parameters", []):
                if "example" not in parameter and "examples" not in parameter:
                    parameter["example"] = example_for(parameter.get("schema", {}), components, parameter["name"])
            # Error responses share the Error component's example.
            responses = [r for status, r in operation.get("responses", {}).items() if status.startswith("2")]
            for body in [operation.get("requestBody", {}), *responses]:
                for media in body.get("content", {}).values():
                    if "example" not in media and "examples" not in media and "schema" in media:
                        media["example"] = example_for(media["schema"], components)
    return result


RATE_LIMIT_HEADERS: dict[str, Any] = {
    "X-RateLimit-Limit": {"schema": {"type": "integer"}, "description": "Requests the key may make per minute."},
    "X-RateLimit-Remaining": {
        "schema": {"type": "integer"},
        "description": "Requests left in the current minute.",
    },
    "X-RateLimit-Reset": {
        "schema": {"type": "integer"},
        "description": "Unix time (seconds) when the current minute's count starts again.",
    },
}
DEPRECATION_HEADERS: dict[str, Any] = {
    "Deprecation": {
        "schema": {"type": "string"},
        "description": "Sent when the request used a deprecated field (RFC 9745): the date it was deprecated.",
    },
    "Link": {
        "schema": {"type": "string"},
        "description": 'With Deprecation: the documentation of the replacement (rel="deprecation").',
    },
}


def add_response_headers(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """``POSTPROCESSING_HOOKS`` entry: the rate-limit headers every authenticated answer carries
    (2xx and 429), and the deprecation headers of operations that accept a deprecated field."""
    components = result.get("components", {}).get("schemas", {})
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in operations.items():
            if method not in _METHODS:
                continue
            deprecated = _has_deprecated_field(operation, components)
            for status, response in operation.get("responses", {}).items():
                if status.startswith("2") or status == "429":
                    response.setdefault("headers", {}).update(RATE_LIMIT_HEADERS)
                if status.startswith("2") and deprecated:
                    response["headers"].update(DEPRECATION_HEADERS)
    return result


def _has_deprecated_field(operation: dict[str, Any], components: dict[str, Any]) -> bool:
    for media in operation.get("requestBody", {}).get("content", {}).values():
        properties = _resolve(media.get("schema", {}), components).get("properties", {})
        if any(_resolve(p, components).get("deprecated") for p in properties.values()):
            return True
    return False
