"""Webhook test support: a real local HTTP receiver, the delivery pipeline run in this
process, and factories for endpoints and events."""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from apps.tenancy.scope import organization_scope
from apps.webhooks import services
from apps.webhooks.models import WebhookDelivery, WebhookEvent
from mirix_saas.celery import app
from tests.clock import SkippingClock
from tests.factories import Tenant
from workers.webhooks import drain_outbox


@dataclass(frozen=True)
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b"ok"
    delay: float = 0.0


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    at: float  # time.time() when it arrived


class Receiver:
    """A ThreadingHTTPServer on 127.0.0.1 that records every request and answers from a script
    (then 200)."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.requests.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.time())
                    )
                    reply = receiver._script.popleft() if receiver._script else Reply()
                time.sleep(reply.delay)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def on(self, path: str) -> list[Received]:
        return [r for r in self.requests if r.path == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Pipeline:
    """The delivery pipeline in this process: what the drain and the sends would publish is
    captured, and ``pump`` runs those task messages with the real task code. Delivery reads
    ``clock``, which ``run_until`` moves to the next due attempt instead of waiting for it."""

    clock: SkippingClock
    published: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def pump(self, *, only: str | None = None) -> int:
        """Run the captured messages (of task ``only``, if given) and those they publish."""
        ran = 0
        while runnable := [m for m in self.published if only in (None, m[0])]:
            self.published.remove(runnable[0])
            name, kwargs = runnable[0]
            app.tasks[name].apply(kwargs=kwargs).maybe_throw()
            ran += 1
        return ran

    def tick(self) -> int:
        """One beat tick, then everything it caused."""
        drain_outbox.apply().maybe_throw()
        return self.pump()

    def run_until(self, condition: Callable[[], Any], *, ticks: int = 20) -> Any:
        """Beat ticks until ``condition`` holds; between ticks the clock skips to the next
        attempt due (of any organization), so retries run as soon as the schedule allows."""
        for _ in range(ticks):
            self.tick()
            value = condition()
            if value:
                return value
            due = (
                WebhookDelivery.objects.dangerously_across_organizations()
                .filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__isnull=False)
                .order_by("next_attempt_at")
                .values_list("next_attempt_at", flat=True)
                .first()
            )
            if due is not None:
                self.clock.advance_to(due)
        raise TimeoutError(f"condition not met in {ticks} beat ticks")


def make_endpoint(
    tenant: Tenant, url: str, *, event_types: Sequence[str] = ("*",), include_content_for: Sequence[str] = ()
) -> services.IssuedSecret:
    return services.webhook_endpoint_create(
        organization_id=tenant.id, url=url, event_types=event_types, include_content_for=include_content_for
    )


def emit(
    tenant: Tenant,
    event_type: str = "job.failed",
    payload: dict[str, Any] | None = None,
    content: dict[str, Any] | None = None,
) -> WebhookEvent | None:
    with organization_scope(tenant.id):
        return services.webhook_event_emit(
            organization_id=tenant.id,
            event_type=event_type,
            payload=payload if payload is not None else {"job_id": str(uuid.uuid4())},
            content=content,
        )
