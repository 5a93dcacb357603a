from __future__ import annotations

import json
import logging

import pytest
from django.test import override_settings
from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIClient

from apps.tenancy.api.base import OrganizationApiView
from apps.tenancy.models import Subject
from apps.tenancy.services import subject_create
from tests.factories import make_tenant


class ExplodingApi(OrganizationApiView):
    required_scopes = {"POST": {"memories:write"}}
    audit_actions = {"POST": "test.explode"}

    def post(self, request: Request) -> Response:
        subject_create(organization_id=self.organization_id, external_id="half-written", kind="user")
        raise RuntimeError("secret memory text that must never leak")


urlpatterns = [path("v1/explode", ExplodingApi.as_view())]


def test_unknown_route_is_json_404() -> None:
    response = APIClient().get("/v1/no-such-thing")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_request_id_is_returned_and_a_well_formed_one_is_kept() -> None:
    response = APIClient().get("/healthz", HTTP_X_REQUEST_ID="client-req-12345")
    assert response.headers["X-Request-Id"] == "client-req-12345"
    generated = APIClient().get("/healthz", HTTP_X_REQUEST_ID="bad id with spaces").headers["X-Request-Id"]
    assert generated.startswith("req_")
    error = APIClient().get("/v1/subjects")
    assert error.json()["error"]["request_id"] == error.headers["X-Request-Id"]


@override_settings(ROOT_URLCONF=__name__)
def test_server_error_is_json_500_rolls_back_and_leaks_nothing(caplog: pytest.LogCaptureFixture) -> None:
    tenant = make_tenant()
    with caplog.at_level(logging.ERROR):
        response = tenant.client().post("/v1/explode", {}, format="json")
    assert response.status_code == 500
    body = response.json()["error"]
    assert body["code"] == "server_error" and "secret" not in json.dumps(body)
    assert not Subject.objects.dangerously_across_organizations().filter(external_id="half-written").exists()
    assert any(r.getMessage() == "unhandled error" for r in caplog.records)


def test_logs_are_json_lines_with_the_request_id() -> None:
    from apps.platform.logging import JsonFormatter, RequestIdFilter, request_id_var

    record = logging.LogRecord("x", logging.INFO, __file__, 1, "subject created", None, None)
    record.subject_id = "s-1"
    token = request_id_var.set("req_abc")
    try:
        RequestIdFilter().filter(record)
    finally:
        request_id_var.reset(token)
    line = json.loads(JsonFormatter().format(record))
    assert line["event"] == "subject created" and line["request_id"] == "req_abc" and line["subject_id"] == "s-1"


def test_openapi_schema_and_docs_are_served() -> None:
    schema = APIClient().get("/v1/schema", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    document = json.loads(schema.content)
    assert "/v1/subjects" in document["paths"] and "/v1/jobs/{job_id}" in document["paths"]
    assert document["components"]["securitySchemes"]["ApiKeyAuth"]["scheme"] == "bearer"
    assert APIClient().get("/v1/docs").status_code == 200
