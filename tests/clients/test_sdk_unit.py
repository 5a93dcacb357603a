"""The SDK's pure parts: webhook verification against the service's own signing, the retry
policy, and the error envelope's mapping to exceptions."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from mirix import AsyncMirix, Mirix, NotFound, RateLimited, ValidationError, WebhookVerificationError, verify_webhook
from mirix._transport import RetryPolicy
from mirix.errors import AuthenticationError, ServerError, error_from_response

from apps.webhooks.signing import secret_generate, signed_headers

pytestmark = pytest.mark.unit


def _delivery(secrets: list[str], body: bytes, at: int) -> dict[str, str]:
    return signed_headers(secrets=secrets, message_id="msg_1", timestamp=at, body=body)


def test_a_delivery_signed_by_the_service_verifies_with_either_secret_of_a_rotation() -> None:
    old, new = secret_generate(), secret_generate()
    body = json.dumps({"type": "memory.created", "data": {"records": []}}).encode()
    headers = _delivery([new, old], body, int(time.time()))
    assert verify_webhook(body, headers, old)["type"] == "memory.created"
    assert verify_webhook(body.decode(), {k.upper(): v for k, v in headers.items()}, new)["type"] == "memory.created"


@pytest.mark.parametrize("case", ["tampered", "other secret", "too old", "no signature"])
def test_a_delivery_that_is_not_the_services_is_refused(case: str) -> None:
    secret = secret_generate()
    body = b'{"type": "memory.created"}'
    headers = _delivery([secret], body, int(time.time()) - (600 if case == "too old" else 0))
    if case == "no signature":
        del headers["webhook-signature"]
    with pytest.raises(WebhookVerificationError):
        verify_webhook(
            b'{"type": "memory.deleted"}' if case == "tampered" else body,
            headers,
            secret_generate() if case == "other secret" else secret,
        )


def _response(status: int, body: object = None, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers, request=httpx.Request("GET", "http://127.0.0.1/"))


def test_the_retry_policy_waits_what_the_server_says_and_retries_only_transient_answers() -> None:
    policy = RetryPolicy(max_retries=2, base_delay=0.5)
    assert policy.delay(0, _response(429, headers={"Retry-After": "7"})) == 7
    assert policy.delay(0, _response(409, headers={"Retry-After": "1"})) == 1
    assert 0.25 <= policy.delay(1, _response(503)) <= 1.0  # type: ignore[operator]
    assert 0.125 <= policy.delay(0, None) <= 0.5  # type: ignore[operator]  # a timeout
    assert policy.delay(2, _response(503)) is None  # out of retries
    assert policy.delay(0, _response(409)) is None
    assert policy.delay(0, _response(400)) is None
    assert policy.delay(0, _response(429, headers={"Retry-After": "3600"})) is None  # longer than it waits


def test_the_error_envelope_becomes_a_typed_exception() -> None:
    def envelope(code: str, details: object = None) -> dict[str, object]:
        return {"error": {"code": code, "message": "m", "details": details, "request_id": "req_1"}}

    invalid = error_from_response(_response(400, envelope("validation_error", {"query": ["required"]})))
    assert isinstance(invalid, ValidationError) and invalid.details == {"query": ["required"]}
    missing = error_from_response(_response(404, envelope("not_found")))
    assert isinstance(missing, NotFound) and missing.request_id == "req_1" and missing.code == "not_found"
    limited = error_from_response(_response(429, envelope("throttled"), {"Retry-After": "12"}))
    assert isinstance(limited, RateLimited) and limited.retry_after == 12
    assert isinstance(error_from_response(_response(401, envelope("authentication_failed"))), AuthenticationError)
    bare = error_from_response(
        httpx.Response(502, text="bad gateway", request=httpx.Request("GET", "http://127.0.0.1/"))
    )
    assert isinstance(bare, ServerError) and bare.code == "http_502"


def test_retry_after_is_seconds_or_an_http_date() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from mirix.errors import parse_retry_after

    in_half_a_minute = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= parse_retry_after(in_half_a_minute) <= 30  # type: ignore[operator]
    assert parse_retry_after("2") == 2 and parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_a_write_without_an_idempotency_key_is_retried_only_after_a_429() -> None:
    policy = RetryPolicy(max_retries=2)
    assert policy.delay(0, _response(429, headers={"Retry-After": "2"}), idempotent=False) == 2
    assert policy.delay(0, _response(503), idempotent=False) is None
    assert policy.delay(0, None, idempotent=False) is None  # a timeout: it may have run


JOB = {
    "id": "j1",
    "kind": "memory.write",
    "status": "succeeded",
    "attempts": 1,
    "created_at": "2026-12-04T00:00:00Z",
    "result": {
        "routed_types": ["episodic", "semantic"],
        "records": [{"type": "episodic", "id": "e1"}, {"type": "semantic", "id": "s1"}],
    },
}
ACCEPTED = {
    "chunk_id": "c1",
    "routed_types": ["episodic"],
    "records": [{"type": "episodic", "id": "e1"}],
    "job_id": "j1",
    "job": {**JOB, "status": "queued", "result": {}},  # the service's wait ran out: a 202
}
HI = [{"role": "user", "content": "hi"}]
NOWHERE = "http://127.0.0.1:9"


def _write_then_job(seen: list[str]) -> httpx.MockTransport:
    """A service whose wait ran out: the write answers 202; its job is ``indexing`` at the
    first poll and ``succeeded`` at the second."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}?{request.url.query.decode()}")
        if request.method == "POST":
            return httpx.Response(202, json=ACCEPTED, headers={"Location": "/v1/jobs/j1"})
        polls = sum(1 for line in seen if line.startswith("GET"))
        return httpx.Response(200, json=JOB if polls > 1 else {**JOB, "status": "indexing"})

    return httpx.MockTransport(handle)


def test_a_waited_write_the_service_answered_early_returns_every_row_its_job_wrote() -> None:
    seen: list[str] = []
    transport = _write_then_job(seen)
    with Mirix(
        api_key="mx_test", base_url=NOWHERE, http_client=httpx.Client(transport=transport), sleep=lambda _: None
    ) as m:
        written = m.memories.add("ana", messages=HI, wait=True)
    assert seen[0].startswith("POST") and "wait=true" in seen[0] and len(seen) == 3  # the write and two polls
    assert [(r.type, r.id) for r in written.records] == [("episodic", "e1"), ("semantic", "s1")]
    assert written.routed_types == ["episodic", "semantic"] and written.job and written.job.status == "succeeded"


def test_the_async_client_returns_every_row_of_a_followed_write_too() -> None:
    seen: list[str] = []

    async def no_sleep(_: float) -> None:
        return None

    async def run() -> list[tuple[str, str]]:
        client = httpx.AsyncClient(transport=_write_then_job(seen))
        async with AsyncMirix(api_key="mx_test", base_url=NOWHERE, http_client=client, sleep=no_sleep) as m:
            written = await m.memories.add("ana", messages=HI, wait=True)
        return [(r.type, r.id) for r in written.records]

    assert asyncio.run(run()) == [("episodic", "e1"), ("semantic", "s1")] and len(seen) == 3


def test_a_write_not_waited_for_is_the_accepted_answer_as_it_came() -> None:
    seen: list[str] = []
    with Mirix(api_key="mx_test", base_url=NOWHERE, http_client=httpx.Client(transport=_write_then_job(seen))) as m:
        accepted = m.memories.add("ana", messages=HI)
    assert len(seen) == 1 and [r.id for r in accepted.records] == ["e1"] and accepted.job is not None
