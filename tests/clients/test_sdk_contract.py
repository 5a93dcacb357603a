"""The SDK on the parts of the API contract that came with it: idempotent retries, implicit
subjects, deleting rows, and the mem0-style facade."""

from __future__ import annotations

import httpx
import pytest
from mirix import Mirix, NotFound

from apps.memory.models import STORES
from apps.tenancy.scope import organization_scope
from tests.clients.conftest import Stack, unique

pytestmark = pytest.mark.slow


class LoseFirstAnswer(httpx.BaseTransport):
    """Sends every request to the service, but the first answer is lost on its way back (a
    timeout after the server committed): what a retry must not store twice."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        self.sent.append(request)
        if len(self.sent) == 1:
            response.read()
            raise httpx.ReadTimeout("the answer was lost", request=request)
        return response


def _count(stack: Stack, subject: str, store: str = "episodic") -> int:
    with organization_scope(stack.owner.id):
        return STORES[store].objects.filter(subject__external_id=subject).count()


def test_a_write_retried_after_a_lost_answer_stores_one_row(stack: Stack) -> None:
    subject = stack.owner.subject(unique("idem")).external_id
    transport = LoseFirstAnswer()
    http = httpx.Client(base_url=stack.url, transport=transport, timeout=60)
    with Mirix(api_key=stack.owner.key, base_url=stack.url, http_client=http, sleep=lambda _: None) as client:
        written = client.memories.add(subject, text="My locker code is 4471.")
    keys = [r.headers["idempotency-key"] for r in transport.sent]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert written.records and _count(stack, subject) == 1


def test_a_first_write_creates_its_subject(stack: Stack) -> None:
    subject = unique("implicit")
    with Mirix(api_key=stack.owner.key, base_url=stack.url) as client:
        with pytest.raises(NotFound):
            client.subjects.get(subject)
        client.memories.add(subject, text="I keep my bike in the courtyard.")
        assert client.subjects.get(subject).kind == "user"


def test_rows_are_deleted_one_by_one_and_in_bulk(stack: Stack) -> None:
    subject = stack.owner.subject(unique("del")).external_id
    with Mirix(api_key=stack.owner.key, base_url=stack.url) as client:
        rows = [  # waited: every row of each write is known before deleting them all
            client.memories.add(subject, text=f"Parking spot {n} is mine on Mondays.", wait=True).records
            for n in range(3)
        ]
        episodic = [r.id for written in rows for r in written if r.type == "episodic"]
        client.memories.delete(subject, "episodic", episodic[0])
        with pytest.raises(NotFound):
            client.memories.get(subject, "episodic", episodic[0])
        client.memories.delete_many(subject, ids=[("episodic", i) for i in episodic[1:]])
        assert [r.id for r in client.memories.list(subject, type="episodic")] == []
    with Mirix(api_key=stack.intruder.key, base_url=stack.url) as intruder, pytest.raises(NotFound):
        intruder.memories.delete(subject, "episodic", episodic[0])


def test_the_mem0_facade(stack: Stack) -> None:
    user = unique("mem0")
    with Mirix(api_key=stack.owner.key, base_url=stack.url) as m:
        added = m.add([{"role": "user", "content": "I adopted a cat named Miso last week."}], user_id=user)
        found = m.search("What is the name of my cat?", user_id=user)
        assert any("Miso" in row.text for row in found.rows)
        everything = list(m.get_all(user_id=user, type="episodic"))
        assert {r.id for r in added.records if r.type == "episodic"} == {r.id for r in everything}
        episode = next(r for r in added.records if r.type == "episodic")
        assert m.get(episode.id, user_id=user, type="episodic").id == episode.id
        assert [r.id for r in m.history(episode.id, user_id=user, type="episodic")][-1:] == [episode.id]
        m.delete(episode.id, user_id=user, type="episodic")
        with pytest.raises(NotFound):
            m.get(episode.id, user_id=user, type="episodic")
        receipt = m.delete_all(user_id=user)
        m.jobs.wait(receipt.job_id)
        with pytest.raises(NotFound):
            m.subjects.get(user)
