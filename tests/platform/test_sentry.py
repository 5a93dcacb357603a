"""Sentry through the real SDK to a local HTTP sink: events arrive, content does not."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import sentry_sdk
from django.test import override_settings

from apps.jobs.services import job_create
from apps.tenancy.scope import organization_scope
from mirix_saas.observability import init_sentry
from tests.factories import make_tenant
from tests.processes import wait_for

SECRET = "memory text: the patient's diagnosis is private"


class _Sink(BaseHTTPRequestHandler):
    received: list[bytes] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        _Sink.received.append(body)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def sentry_sink() -> Iterator[list[bytes]]:
    _Sink.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    dsn = f"http://publickey@127.0.0.1:{server.server_port}/1"
    with override_settings(SENTRY_DSN=dsn, SENTRY_ENVIRONMENT="test"):
        assert init_sentry()
        try:
            yield _Sink.received
        finally:
            sentry_sdk.flush(timeout=5)
            sentry_sdk.init(dsn=None)
            server.shutdown()


def _events(raw: list[bytes]) -> list[dict]:  # type: ignore[type-arg]
    events = []
    for envelope in raw:
        lines = envelope.split(b"\n")
        for header, payload in zip(lines[1::2], lines[2::2], strict=False):
            if json.loads(header).get("type") == "event":
                events.append(json.loads(payload))
    return events


def test_view_and_task_exceptions_arrive_without_content(
    sentry_sink: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.maintenance import graph_check_task

    tenant = make_tenant()
    with override_settings(ROOT_URLCONF="tests.platform.test_api_basics"):
        response = tenant.client().post("/v1/explode", {"content": SECRET}, format="json")
    assert response.status_code == 500

    def explode(**_: object) -> dict:  # type: ignore[type-arg]
        raise ValueError(SECRET)

    monkeypatch.setattr("workers.maintenance.graph_check", explode)
    with organization_scope(tenant.id):
        job = job_create(organization_id=tenant.id, kind="graph.check")
    graph_check_task.apply(kwargs={"organization_id": str(tenant.id), "job_id": str(job.id)})
    sentry_sdk.flush(timeout=5)

    events = wait_for(lambda: len(_events(sentry_sink)) >= 2 and _events(sentry_sink), timeout=10)
    types = sorted(e["exception"]["values"][-1]["type"] for e in events)
    assert types == ["RuntimeError", "ValueError"]
    raw = b"".join(sentry_sink).decode()
    assert "diagnosis" not in raw and "secret memory text" not in raw
    for event in events:
        assert "data" not in event.get("request", {})
        assert "user" not in event
        for frame in event["exception"]["values"][-1]["stacktrace"]["frames"]:
            assert "vars" not in frame


@pytest.mark.unit
def test_scrubber_strips_bodies_messages_and_database_text() -> None:
    from apps.platform.sentry_scrub import scrub_event

    event = {
        "request": {
            "data": SECRET,
            "query_string": "q=secret",
            "cookies": {"s": "1"},
            "headers": {"Authorization": "Bearer mx_live_x", "Content-Type": "application/json"},
        },
        "exception": {
            "values": [
                {
                    "type": "ProgrammingError",
                    "value": 'syntax error near "SELECT secret"',
                    "stacktrace": {"frames": [{"function": "f", "vars": {"text": SECRET}, "context_line": SECRET}]},
                }
            ]
        },
        "logentry": {"message": SECRET},
        "extra": {"text": SECRET},
        "breadcrumbs": {"values": [{"category": "query", "message": "SELECT secret", "data": {"p": SECRET}}]},
    }
    scrubbed = json.dumps(scrub_event(event))
    assert "secret" not in scrubbed.lower() and "diagnosis" not in scrubbed
    assert "ProgrammingError" in scrubbed and "application/json" in scrubbed and "mx_live_" not in scrubbed
