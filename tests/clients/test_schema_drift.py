"""The SDK's response models against the OpenAPI document the running service serves at
``/v1/schema``: every field a model declares is a property of the schema of the same
operation's answer (nested models included), and every property the schema requires is
declared by the model. A renamed, removed or added-required field fails here."""

from __future__ import annotations

import types
import typing
from typing import Any

import pytest
import requests
from mirix import models as m
from pydantic import BaseModel

from tests.clients.conftest import Stack

pytestmark = pytest.mark.slow

# SDK model → the operation (method, path, status) whose answer it parses.
OPERATIONS: list[tuple[type[BaseModel], str, str, str, bool]] = [
    # (model, method, path, status, the answer is a page of the model / a list of it)
    (m.Subject, "post", "/v1/subjects", "201", False),
    (m.Subject, "get", "/v1/subjects", "200", True),
    (m.SubjectUpdated, "patch", "/v1/subjects/{external_id}", "200", False),
    (m.WriteResult, "post", "/v1/subjects/{external_id}/memories", "202", False),
    (m.BatchAccepted, "post", "/v1/subjects/{external_id}/memories/batch", "202", False),
    (m.MemoryRecord, "get", "/v1/subjects/{external_id}/memories", "200", True),
    (m.MemoryRecord, "get", "/v1/subjects/{external_id}/memories/{memory_type}/{record_id}", "200", False),
    (m.MemoryRecord, "get", "/v1/subjects/{external_id}/core", "200", True),
    (m.SearchResult, "post", "/v1/subjects/{external_id}/search", "200", False),
    (m.Answer, "post", "/v1/subjects/{external_id}/answer", "200", False),
    (m.Job, "get", "/v1/jobs/{job_id}", "200", False),
    (m.JobAccepted, "post", "/v1/graph/check", "202", False),
    (m.IssuedApiKey, "post", "/v1/api-keys", "201", False),
    (m.IssuedApiKey, "post", "/v1/api-keys/{api_key_id}/rotate", "201", False),
    (m.ApiKey, "post", "/v1/api-keys/{api_key_id}/revoke", "200", False),
    (m.Anchor, "get", "/v1/subjects/{external_id}/graph/anchors", "200", True),
    (m.Frame, "get", "/v1/subjects/{external_id}/graph/frames", "200", True),
    (m.SkillRetrieval, "post", "/v1/subjects/{external_id}/skills/search", "200", False),
    (m.Consent, "get", "/v1/subjects/{external_id}/consent", "200", False),
    (m.WebhookEndpoint, "get", "/v1/webhook-endpoints/{endpoint_id}", "200", False),
    (m.AuditEntry, "get", "/v1/audit-log", "200", True),
]


@pytest.fixture(scope="module")
def schema(stack: Stack) -> dict[str, Any]:
    response = requests.get(f"{stack.url}/v1/schema?format=json", timeout=60)
    assert response.status_code == 200
    return response.json()


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while True:
        if "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
        elif "allOf" in node and len(node["allOf"]) == 1:
            node = node["allOf"][0]
        else:
            return node


def _nested(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model inside a field's annotation (``X``, ``X | None``, ``list[X]``), and whether it is a list."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                return _nested(arg)
    if origin is list:
        inner, _ = _nested(typing.get_args(annotation)[0])
        return inner, True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    return None, False


def _drift(schema: dict[str, Any], model: type[BaseModel], node: dict[str, Any], where: str) -> list[str]:
    component = _resolve(schema, node)
    properties = component.get("properties", {})
    problems = [f"{where}.{name}: not in the schema" for name in model.model_fields if name not in properties]
    problems += [
        f"{where}.{name}: required by the schema, not in the SDK"
        for name in component.get("required", [])
        if name not in model.model_fields
    ]
    for name, field in model.model_fields.items():
        inner, is_list = _nested(field.annotation)
        if inner is None or name not in properties:
            continue
        child = _resolve(schema, properties[name])
        if is_list:
            child = _resolve(schema, child.get("items", {}))
        problems += _drift(schema, inner, child, f"{where}.{name}")
    return problems


def test_every_response_model_matches_the_served_schema(schema: dict[str, Any]) -> None:
    problems: list[str] = []
    for model, method, path, status, many in OPERATIONS:
        operation = schema["paths"].get(path, {}).get(method)
        if operation is None:
            problems.append(f"{method.upper()} {path}: not in the schema")
            continue
        response = operation["responses"].get(status)
        if response is None:
            problems.append(f"{method.upper()} {path}: no {status} answer (has {sorted(operation['responses'])})")
            continue
        body = _resolve(schema, response["content"]["application/json"]["schema"])
        if many:
            body = _resolve(
                schema, body["items"] if body.get("type") == "array" else body["properties"]["results"]["items"]
            )
        problems += _drift(schema, model, body, f"{model.__name__} ({method.upper()} {path})")
    assert problems == []


def test_the_check_finds_a_drifted_model(schema: dict[str, Any]) -> None:
    class Renamed(m.Subject):
        external_key: str = ""

    class Cited(m.Fact):
        sources: list[str] = []

    class Found(m.SearchResult):
        facts: list[Cited]

    def body(path: str, status: str) -> dict[str, Any]:
        method = "post"
        return schema["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]

    assert _drift(schema, Renamed, body("/v1/subjects", "201"), "Renamed") == [
        "Renamed.external_key: not in the schema"
    ]
    found = _drift(schema, Found, body("/v1/subjects/{external_id}/search", "200"), "Found")
    assert found == ["Found.facts.sources: not in the schema"]
