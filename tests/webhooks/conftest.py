"""Fixtures: the local receiver, the in-process pipeline on a skipping clock, fast retries, a
queue of one's own."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from apps.webhooks import delivery
from mirix_saas.celery import app
from tests.clock import SkippingClock
from tests.webhooks.support import Pipeline, Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def pipeline(monkeypatch: pytest.MonkeyPatch, clock: SkippingClock) -> Pipeline:
    captured = Pipeline(clock=clock)
    send_task = app.send_task

    def publish(name: str, kwargs: dict[str, str], **options: Any) -> Any:
        if not name.startswith("webhooks."):  # other tasks go to the broker, as before
            return send_task(name, kwargs=kwargs, **options)
        captured.published.append((name, kwargs))
        return None

    monkeypatch.setattr(app, "send_task", publish)
    monkeypatch.setattr(delivery, "clock", clock)
    return captured


@pytest.fixture
def fast_retries(settings: Any) -> list[float]:
    settings.WEBHOOKS_RETRY_SCHEDULE = [0, 0.2, 0.2, 0.2, 0.2]
    return list(settings.WEBHOOKS_RETRY_SCHEDULE)


@pytest.fixture(autouse=True)
def webhook_queue(request: pytest.FixtureRequest, settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A queue of each test's own (a worker started by the test listens to it): the broker is
    shared with other test runs, whose workers must not take (and run against another
    database) what this test publishes. Unit tests publish nothing and have no broker."""
    if request.node.get_closest_marker("unit"):
        yield ""
        return
    name = f"webhooks-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    settings.WEBHOOKS_QUEUE = name
    monkeypatch.setenv("MIRIX_WEBHOOKS_QUEUE", name)
    yield name
    with app.connection_for_write() as conn:
        conn.default_channel.queue_delete(name)
