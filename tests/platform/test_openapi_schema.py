"""The OpenAPI document is one a client generator can trust (ADR 0041).

It validates as OpenAPI 3; every route of the URLconf and each of its methods is in it, with a
typed 2xx response (no bare object, no missing body); operationIds are ``<tag>_<action>`` and
tagged by that resource; every body, parameter and 2xx response has an example that its own
schema accepts; every list answers ``{"results", "next_cursor"}``; ``servers`` is the
deployment's URL. The routes come from the URLconf, so a route added later is checked too.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings
from openapi_schema_validator import OAS30Validator
from openapi_spec_validator import validate
from rest_framework.test import APIClient

from apps.platform.openapi_tags import TAGS
from tests.authz import url_routes

UNDOCUMENTED = {"v1/schema", "v1/docs", "v1/docs/swagger"}
HANDLERS = ("get", "post", "put", "patch", "delete")
OPERATION_ID = re.compile(r"^[a-z]+(?:_[a-z]+)+$")


@pytest.fixture(scope="module")
def schema(django_db_setup: None, django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = APIClient().get("/v1/schema", {"format": "json"})
    assert response.status_code == 200, response.content[:500]
    document: dict[str, Any] = response.json()
    return document


def _openapi_path(route: str) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if method in HANDLERS
    ]


def _deref(schema: Any, components: dict[str, Any], depth: int = 0) -> Any:
    """The schema with every ``$ref`` replaced by its component (components are not recursive)."""
    assert depth < 30, "a component refers to itself"
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _deref(components[schema["$ref"].rsplit("/", 1)[-1]], components, depth + 1)
        return {key: _deref(value, components, depth + 1) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_deref(value, components, depth + 1) for value in schema]
    return schema


def _bare_objects(schema: Any, where: str) -> list[str]:
    """Places in a (dereferenced) schema that say "an object" and nothing of its fields."""
    if isinstance(schema, list):
        return [found for i, item in enumerate(schema) for found in _bare_objects(item, f"{where}[{i}]")]
    if not isinstance(schema, dict):
        return []
    found = []
    if schema.get("type") == "object" and "properties" not in schema and "additionalProperties" not in schema:
        found.append(where)
    if schema == {}:
        found.append(where)
    for key, value in schema.items():
        if key in ("properties",):
            found += [f for name, sub in value.items() for f in _bare_objects(sub, f"{where}.{name}")]
        elif key in ("items", "allOf", "oneOf", "anyOf") or (key == "additionalProperties" and value):
            found += _bare_objects(value, f"{where}.{key}")
    return found


def test_the_document_is_valid_openapi(schema: dict[str, Any]) -> None:
    validate(schema)
    assert schema["openapi"].startswith("3.")


def test_servers_come_from_settings(schema: dict[str, Any]) -> None:
    assert [server["url"] for server in schema["servers"]] == [settings.API_PUBLIC_URL]
    assert settings.API_PUBLIC_URL.startswith("http")


def test_every_route_of_the_urlconf_is_documented_with_a_typed_success(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    routes = [(route, view) for route, view in url_routes() if route.startswith("v1/") and route not in UNDOCUMENTED]
    assert len(routes) > 40  # the walk found the URLconf
    problems = []
    for route, view in routes:
        path = _openapi_path(route)
        methods = [m for m in HANDLERS if hasattr(view.view_class, m)]
        assert methods, f"{route} answers no method"
        for method in methods:
            operation = schema["paths"].get(path, {}).get(method)
            if operation is None:
                problems.append(f"{method.upper()} {path}: not in the schema")
                continue
            successes = {status: r for status, r in operation["responses"].items() if status.startswith("2")}
            if not successes:
                problems.append(f"{method.upper()} {path}: no 2xx response")
            for status, response in successes.items():
                if status == "204":
                    continue
                content = response.get("content", {})
                if not content:
                    problems.append(f"{method.upper()} {path} {status}: no response body schema")
                for media, body in content.items():
                    resolved = _deref(body.get("schema", {}), components)
                    problems += [
                        f"{method.upper()} {path} {status} {media}: bare object at {where}"
                        for where in _bare_objects(resolved, "$")
                    ]
                    if resolved.get("type") == "array":
                        problems.append(f"{method.upper()} {path} {status}: a bare list (use results/next_cursor)")
    assert problems == []


def test_operation_ids_are_resource_action_and_tag_the_operation(schema: dict[str, Any]) -> None:
    ids = [operation["operationId"] for _, _, operation in _operations(schema)]
    assert len(ids) == len(set(ids)), "operationIds are unique"
    document_tags = {tag["name"] for tag in schema["tags"]}
    assert set(TAGS) <= document_tags
    for path, method, operation in _operations(schema):
        operation_id = operation["operationId"]
        assert OPERATION_ID.match(operation_id), f"{method} {path}: {operation_id}"
        [tag] = operation["tags"] or [f"no known resource prefixes {operation_id}"]
        assert tag in document_tags and operation_id.startswith(f"{tag}_"), f"{method} {path}: {operation_id}"
    used = {operation["tags"][0] for _, _, operation in _operations(schema)}
    assert {"subjects", "memories", "search", "graph", "dream", "skills", "consent", "erasure"} <= used
    assert {"webhooks", "keys", "audit", "jobs"} <= used


def test_every_operation_has_examples_its_schema_accepts(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    checked = 0
    for path, method, operation in _operations(schema):
        where = f"{method.upper()} {path}"
        for parameter in operation.get("parameters", []):
            assert "example" in parameter, f"{where}: parameter {parameter['name']} has no example"
            OAS30Validator(_deref(parameter["schema"], components)).validate(parameter["example"])
        bodies = [("request", operation.get("requestBody", {}))]
        bodies += [(status, r) for status, r in operation["responses"].items() if status.startswith("2")]
        for label, body in bodies:
            for media, content in body.get("content", {}).items():
                assert "example" in content, f"{where} {label} {media}: no example"
                if media.endswith("json"):
                    OAS30Validator(_deref(content["schema"], components)).validate(content["example"])
                    checked += 1
    assert checked > 60
    # A deprecated field is documented as such, and the examples use its replacement.
    answer = schema["paths"]["/v1/subjects/{external_id}/answer"]["post"]
    request = answer["requestBody"]["content"]["application/json"]
    assert _deref(request["schema"], components)["properties"]["question"]["deprecated"] is True
    assert "query" in request["example"] and "question" not in request["example"]


def test_every_list_answers_results_and_next_cursor(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    lists = []
    for path, method, operation in _operations(schema):
        for status, response in operation["responses"].items():
            body = response.get("content", {}).get("application/json")
            if not status.startswith("2") or body is None:
                continue
            resolved = _deref(body["schema"], components)
            if method == "get" and "results" in resolved.get("properties", {}):
                lists.append(path)
                assert {"results", "next_cursor"} <= set(resolved.get("required", [])), path
                assert resolved["properties"]["next_cursor"].get("nullable") is True, path
                assert resolved["properties"]["results"]["type"] == "array", path
    assert {"/v1/subjects", "/v1/jobs", "/v1/audit-log", "/v1/api-keys", "/v1/webhook-endpoints"} <= set(lists)


def test_every_response_documents_the_rate_limit_headers(schema: dict[str, Any]) -> None:
    for path, method, operation in _operations(schema):
        for status, response in operation["responses"].items():
            if status.startswith("2") or status == "429":
                headers = response.get("headers", {})
                assert {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} <= set(headers), (
                    f"{method} {path} {status}"
                )
