"""The Python SDK (sync and async) against the real stack."""

from __future__ import annotations

import asyncio

import pytest
from mirix import AsyncMirix, AuthenticationError, Mirix, NotFound, RateLimited, ValidationError

from tests.clients.conftest import Stack, unique
from tests.conftest import _clear_cache as clear_cache

pytestmark = pytest.mark.slow

CAT = [{"role": "user", "name": "Ana", "content": "I adopted a cat named Miso last week."}]


def test_write_wait_search_answer_delete(stack: Stack) -> None:
    subject = unique("ana")
    with Mirix(api_key=stack.owner.key, base_url=stack.url) as client:
        client.subjects.create(subject)
        renamed = client.subjects.update(subject, display_name="Ana")
        assert renamed.display_name == "Ana" and renamed.graph_reindex_job_id
        assert client.jobs.wait(renamed.graph_reindex_job_id).status == "succeeded"
        written = client.memories.add(subject, messages=CAT, wait=True)
        assert written.records and client.jobs.get(written.job_id).status == "succeeded"

        found = client.search(subject, "What is the name of my cat?")
        written_ids = {r.id for r in written.records}
        assert any("Miso" in row.text and row.id in written_ids for row in found.rows), found.rows

        answer = client.answer(subject, "What is my cat's name?")
        assert "Miso" in answer.answer
        assert set(answer.cited_row_ids) <= {r.id for r in written.records} and answer.cited_row_ids

        receipt = client.subjects.erase(subject)
        client.jobs.wait(receipt.job_id)
        with pytest.raises(NotFound):
            client.subjects.get(subject)


def test_the_async_client_does_the_same(stack: Stack) -> None:
    subject = unique("bo")

    async def run() -> tuple[list[str], str]:
        async with AsyncMirix(api_key=stack.owner.key, base_url=stack.url) as client:
            await client.subjects.create(subject)
            await client.memories.add(subject, messages=CAT, wait=True)
            found = await client.search(subject, "What is the name of my cat?")
            answer = await client.answer(subject, "What is my cat's name?")
            listed = [s.external_id async for s in client.subjects.list(page_size=1)]
            assert subject in listed
            return [row.text for row in found.rows], answer.answer

    texts, answer = asyncio.run(run())
    assert any("Miso" in t for t in texts) and "Miso" in answer

    async def strangers() -> tuple[Exception, Exception]:
        async with AsyncMirix(api_key=stack.intruder.key, base_url=stack.url) as intruder:
            with pytest.raises(NotFound) as hidden:
                await intruder.search(subject, "cat")
        async with AsyncMirix(api_key="mx_live_notakey", base_url=stack.url) as nobody:
            with pytest.raises(AuthenticationError) as refused:
                await nobody.subjects.get(subject)
        return hidden.value, refused.value

    hidden, refused = asyncio.run(strangers())
    assert isinstance(hidden, NotFound) and isinstance(refused, AuthenticationError)


def test_pagination_follows_the_cursor_across_pages(stack: Stack) -> None:
    subject = unique("pages")
    with Mirix(api_key=stack.owner.key, base_url=stack.url) as client:
        client.subjects.create(subject)
        written = [
            client.memories.add(subject, text=f"Note {n}: the meeting room number is {100 + n}.") for n in range(5)
        ]
        ids = {r.id for w in written for r in w.records if r.type == "episodic"}
        listed = [row.id for row in client.memories.list(subject, type="episodic", page_size=2)]
    assert len(ids) == 5 and len(listed) == len(set(listed)) and set(listed) == ids


def test_a_429_is_retried_after_retry_after(stack: Stack) -> None:
    key = stack.owner.issue_key(["memories:read"], rate_limit=1)
    subject = stack.owner.subject(unique("rl")).external_id
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clear_cache()  # the window the server named has passed: its counters are gone

    clear_cache()
    with Mirix(api_key=key, base_url=stack.url, sleep=sleep) as client:
        assert client.subjects.get(subject).external_id == subject
        assert client.subjects.get(subject).external_id == subject  # a 429 first, then the retry
    assert len(waits) == 1 and 1 <= waits[0] <= 60

    clear_cache()
    with Mirix(api_key=key, base_url=stack.url, max_retries=0) as client:
        client.subjects.get(subject)
        with pytest.raises(RateLimited) as raised:
            client.subjects.get(subject)
    assert raised.value.code == "throttled" and raised.value.retry_after is not None
    assert 1 <= raised.value.retry_after <= 60
    clear_cache()


def test_another_organizations_key_finds_nothing(stack: Stack) -> None:
    subject = stack.owner.subject(unique("private")).external_id
    with Mirix(api_key=stack.intruder.key, base_url=stack.url) as client:
        with pytest.raises(NotFound) as raised:
            client.subjects.get(subject)
        with pytest.raises(NotFound):
            client.search(subject, "anything")
    assert raised.value.status_code == 404 and raised.value.code == "not_found" and raised.value.request_id


def test_a_bad_key_is_an_authentication_error(stack: Stack) -> None:
    with Mirix(api_key="mx_live_notakey", base_url=stack.url) as client, pytest.raises(AuthenticationError) as raised:
        client.subjects.get("anyone")
    assert raised.value.status_code == 401


def test_bad_input_is_a_validation_error_with_details(stack: Stack) -> None:
    subject = stack.owner.subject(unique("bad")).external_id
    with Mirix(api_key=stack.owner.key, base_url=stack.url) as client, pytest.raises(ValidationError) as raised:
        client.memories.add(subject, messages=[{"role": "user", "content": "x" * 100_001}])
    assert raised.value.details and "messages" in str(raised.value.details)
