"""Nothing accepted is dropped: every write that gets a 2xx has a stored row for every input,
and one that would store nothing is a 4xx that says why. Through the API, local providers."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.graph.services import index_chunk
from apps.language.words import count_tokens
from apps.memory.api.serializers import MAX_MESSAGE_CHARS
from apps.memory.models import STORES, EpisodicEvent, ResourceItem, SemanticItem
from apps.memory.services import memory_batch_step
from apps.resources.storage import storage
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, complete_writes, make_tenant
from tests.processes import celery_worker, purge_queues, wait_for

NEEDLE = "The backup generator in Building Q7 runs on biodiesel and was last serviced by Ingrid Solberg in March."
FILLER = [
    "The night shift checked the pumps on line {n} and logged normal pressure.",
    "Crates for order {n} were moved to the north dock before noon.",
    "The cleaning crew finished hall {n} and restocked the supply closet.",
    "Forklift {n} was charged overnight and passed its morning inspection.",
    "Visitors to floor {n} signed in at the front desk and wore badges.",
]


def long_text(length: int, *, seed: int = 7) -> str:
    """Operations notes of about ``length`` characters in paragraphs, with NEEDLE in the middle."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < length:
        paragraph = " ".join(rng.choice(FILLER).format(n=rng.randint(1, 999)) for _ in range(rng.randint(3, 7)))
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    paragraphs.insert(len(paragraphs) // 2, NEEDLE)
    return "\n\n".join(paragraphs)[:length].strip()


def _stored_message_ids(tenant: Tenant) -> set[str]:
    with organization_scope(tenant.id):
        return {
            i
            for model in STORES.values()
            for ids in model.objects.values_list("source_message_ids", flat=True)
            for i in ids
        }


def test_a_pasted_logs_records_are_found_in_its_passages_and_replace_nothing() -> None:
    """A log's records are events: its passages hold them, and no statement keyed by a
    record's verb marks the earlier records as replaced (ADR 0102). A search for one record
    gets the passage holding it first."""
    tenant = make_tenant()
    tenant.subject("ops")
    log = "\n".join(
        f"2026-03-05 1{n % 10}:{n:02d} deploy #{1000 + n} of billing-api to eu-west succeeded" for n in range(60)
    )
    written = _write(tenant, {"messages": [{"role": "assistant", "name": "deploy-bot", "content": log}]}, subject="ops")
    assert written.status_code == 202, written.content
    with organization_scope(tenant.id):
        assert index_chunk(chunk_id=written.json()["chunk_id"])["failed"] == 0
        assert not SemanticItem.objects.filter(summary__contains="deploy #").exists()
    found = tenant.client().post(
        "/v1/subjects/ops/search", {"query": "What happened in deploy #1044 of billing-api?"}, format="json"
    )
    assert found.status_code == 200, found.content
    rows = found.json()["rows"]
    assert rows[0]["provenance"]["resource"] and "#1044 of billing-api to eu-west succeeded" in rows[0]["text"]
    assert all(row["current"] for row in rows)


def _row_count(tenant: Tenant) -> int:
    with organization_scope(tenant.id):
        return sum(model.objects.count() for model in STORES.values())


def _write(tenant: Tenant, body: dict[str, Any], subject: str = "lena") -> Any:
    """The write's answer (a 202 when accepted), once the worker completed it (in process)."""
    response = tenant.client().post(f"/v1/subjects/{subject}/memories", body, format="json")
    complete_writes(tenant.id)
    return response


def _assert_document_stored(
    tenant: Tenant, body: dict[str, Any], text: str
) -> tuple[ResourceItem, list[EpisodicEvent]]:
    records = body["records"]
    resource_ids = [r["id"] for r in records if r["type"] == "resource"]
    assert len(resource_ids) == 1, records
    assert "resource" in body["routed_types"] and body["job_id"]
    with organization_scope(tenant.id):
        resource = ResourceItem.objects.get(id=resource_ids[0])
        passages = list(EpisodicEvent.objects.filter(resource_id=resource.id).order_by("resource_start"))
    # The whole text, in the row and in object storage; its passages cover it, each citing its offsets.
    assert resource.extracted_text == text and storage().get(resource.object_key) == text.encode()
    assert {str(p.id) for p in passages} <= {r["id"] for r in records if r["type"] == "episodic"}
    assert all(text[p.resource_start : p.resource_end] == p.summary for p in passages)
    assert all(len(p.summary) <= 1_400 and p.source_kind == "document" for p in passages)
    assert "".join(p.summary for p in passages).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace(
        "\n", ""
    )
    return resource, passages


def test_long_text_becomes_a_resource_and_passages_found_by_search() -> None:
    tenant = make_tenant()
    tenant.subject("lena")
    text = long_text(20_000)
    written = _write(tenant, {"text": text})
    assert written.status_code == 202, written.content
    resource, passages = _assert_document_stored(tenant, written.json(), text)
    assert len(passages) >= 14
    with organization_scope(tenant.id):
        indexed = index_chunk(chunk_id=written.json()["chunk_id"])
    assert indexed["failed"] == 0 and indexed["rows"] == len(passages)

    found = tenant.client().post(
        "/v1/subjects/lena/search",
        {"query": "Who serviced the backup generator in Building Q7?", "token_budget": 400},
        format="json",
    )
    assert found.status_code == 200, found.content
    result = found.json()
    # The one passage that holds the sentence, not the whole text; within the budget, counted.
    needle_rows = [row for row in result["rows"] if NEEDLE in row["text"]]
    assert needle_rows and needle_rows[0]["provenance"]["resource"]["id"] == str(resource.id)
    start, end = needle_rows[0]["provenance"]["resource"]["start"], needle_rows[0]["provenance"]["resource"]["end"]
    assert text[start:end] == needle_rows[0]["text"]
    assert result["budget"]["tokens_returned"] == sum(count_tokens(row["text"]) for row in result["rows"]) <= 400


def test_pasted_text_shorter_than_a_document_is_kept_in_passages_and_read_by_the_writers() -> None:
    """ADR 0100: 3,000 to 20,000 characters are a resource and its passages, as a document is,
    and the writers still read them: a fact the text states becomes a row; no episode repeats
    the whole text."""
    tenant = make_tenant()
    tenant.subject("lena")
    notes = long_text(8_000, seed=5)
    body = notes.replace(NEEDLE, f"{NEEDLE}\n\nMy sister Ines works as a glassblower in Porto.")
    text = f"RIVERSIDE STUDIO - MEMBER HANDBOOK\n{body}"
    written = _write(tenant, {"messages": [{"id": "p1", "role": "user", "content": text}]})
    assert written.status_code == 202, written.content
    resource, passages = _assert_document_stored(tenant, written.json(), text)
    assert len(passages) >= 6
    with organization_scope(tenant.id):
        episodes = list(EpisodicEvent.objects.filter(chunk_id=written.json()["chunk_id"]))
        facts = list(SemanticItem.objects.filter(chunk_id=written.json()["chunk_id"]))
        indexed = index_chunk(chunk_id=written.json()["chunk_id"])
    assert indexed["failed"] == 0
    assert max(len(row.summary) for row in episodes) <= 1_400  # no row retells the whole text
    assert any("glassblower" in fact.summary for fact in facts), [f.summary for f in facts]
    assert not any("RIVERSIDE STUDIO" in fact.summary for fact in facts)  # a title states nothing (ADR 0136)
    found = (
        tenant.client()
        .post(
            "/v1/subjects/lena/search",
            {"query": "Who serviced the backup generator in Building Q7?", "token_budget": 400},
            format="json",
        )
        .json()
    )
    needle_rows = [row for row in found["rows"] if NEEDLE in row["text"]]
    assert needle_rows and needle_rows[0]["provenance"]["resource"]["id"] == str(resource.id)
    assert found["budget"]["tokens_returned"] <= 400


def test_100000_characters_in_a_message_are_stored_and_searchable() -> None:
    tenant = make_tenant()
    tenant.subject("lena")
    text = long_text(100_000, seed=11)
    messages = [
        {"id": "m1", "role": "user", "content": "Here are the site notes, keep them."},
        {"id": "m2", "role": "user", "content": text},
    ]
    written = _write(tenant, {"messages": messages})
    assert written.status_code == 202, written.content
    resource, passages = _assert_document_stored(tenant, written.json(), text)
    assert resource.source_message_ids == ["m2"] and all(p.source_message_ids == ["m2"] for p in passages)
    assert _stored_message_ids(tenant) >= {"m1", "m2"}
    flat = (
        tenant.client()
        .post(
            "/v1/subjects/lena/search",
            {"query": "backup generator Building Q7 biodiesel", "mode": "flat", "token_budget": 300},
            format="json",
        )
        .json()
    )
    assert NEEDLE in flat["rows"][0]["text"] and flat["budget"]["tokens_returned"] <= 300


def test_resource_search_returns_passages_within_the_token_budget() -> None:
    tenant = make_tenant()
    tenant.subject("lena")
    text = long_text(25_000, seed=3)
    upload = tenant.client().post(
        "/v1/subjects/lena/memories",
        {"file": SimpleUploadedFile("ops.txt", text.encode(), "text/plain"), "title": "Operations manual"},
        format="multipart",
    )
    assert upload.status_code == 202, upload.content
    complete_writes(tenant.id)
    resource, passages = _assert_document_stored(tenant, upload.json(), text)
    assert {p.actor for p in passages} == {"Operations manual"}

    query = "Who serviced the backup generator in Building Q7?"
    for path, body in (
        ("/v1/subjects/lena/memories/resource/search", {"query": query, "token_budget": 200}),
        ("/v1/subjects/lena/search", {"query": query, "memory_types": ["resource"], "token_budget": 200}),
    ):
        response = tenant.client().post(path, body, format="json")
        assert response.status_code == 200, response.content
        data = response.json()
        hits = data["results"] if "results" in data else data["typed"]["resource"]
        record = hits[0]["record"] if "record" in hits[0] else hits[0]
        assert record["id"] == str(resource.id) and "extracted_text" not in record["content"]
        excerpts = hits[0]["excerpts"]
        assert NEEDLE in excerpts[0]["text"]
        assert text[excerpts[0]["start"] : excerpts[0]["end"]] == excerpts[0]["text"]
        assert sum(e["tokens"] for e in excerpts) == sum(count_tokens(e["text"]) for e in excerpts) <= 200
        if "budget" in data:  # the report counts what was returned
            assert data["rows"] == [] and data["budget"]["tokens_returned"] == sum(e["tokens"] for e in excerpts)

    tiny = (
        tenant.client()
        .post("/v1/subjects/lena/memories/resource/search", {"query": query, "token_budget": 5}, format="json")
        .json()["results"]
    )
    assert tiny[0]["excerpts"][0]["truncated"] and tiny[0]["excerpts"][0]["tokens"] <= 5
    procedural = tenant.client().post(
        "/v1/subjects/lena/memories/procedural/search", {"query": query, "token_budget": 5}, format="json"
    )
    assert procedural.status_code == 200 and procedural.json()["next_cursor"] is None


def test_a_system_message_with_a_url_is_stored() -> None:
    tenant = make_tenant()
    tenant.subject("lena")
    content = "Refer the user to the runbook at https://runbooks.invalid/oncall when the pager fires."
    written = _write(tenant, {"messages": [{"id": "sys-1", "role": "system", "content": content}]})
    assert written.status_code == 202, written.content
    episodic = [r for r in written.json()["records"] if r["type"] == "episodic"]
    got = tenant.client().get(f"/v1/subjects/lena/memories/episodic/{episodic[0]['id']}").json()
    assert (
        got["provenance"]["source_message_ids"] == ["sys-1"]
        and "https://runbooks.invalid/oncall" in got["content"]["summary"]
    )


def test_small_talk_next_to_substance_is_kept_and_small_talk_alone_is_a_422() -> None:
    tenant = make_tenant()
    tenant.subject("lena")
    mixed = _write(
        tenant,
        {
            "messages": [
                {"id": "a", "role": "user", "content": "Haha, thanks!"},
                {"id": "b", "role": "user", "content": "I moved to Lyon last spring for a job at the museum."},
            ]
        },
    )
    assert mixed.status_code == 202, mixed.content
    assert _stored_message_ids(tenant) >= {"a", "b"}

    before = _row_count(tenant)
    alone = _write(
        tenant, {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}]}
    )
    assert alone.status_code == 422, alone.content
    error = alone.json()["error"]
    assert error["code"] == "nothing_to_store" and "nothing was stored" in error["message"]
    assert _row_count(tenant) == before


def test_small_talk_next_to_a_pasted_document_is_kept() -> None:
    """A document alone makes a write worth storing; the messages around it are kept too."""
    tenant = make_tenant()
    tenant.subject("lena")
    written = _write(
        tenant,
        {
            "messages": [
                {"id": "thanks", "role": "user", "content": "Thanks!"},
                {"id": "doc", "role": "user", "content": long_text(21_000)},
            ]
        },
    )
    assert written.status_code == 202, written.content
    assert _stored_message_ids(tenant) >= {"thanks", "doc"}


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (
            {
                "messages": [{"role": "user", "content": "I'm allergic to shellfish."}],
                "user_id": "lena",
                "filters": {"a": 1},
            },
            {"user_id": "/v1/subjects/{external_id}/memories", "filters": "GET /v1/subjects/{external_id}/memories"},
        ),
        ({"text": "I run 5 km every morning.", "budget": 3}, {"budget": "not a field"}),
    ],
)
def test_unknown_fields_are_a_400_naming_them(body: dict[str, Any], named: dict[str, str]) -> None:
    tenant = make_tenant()
    tenant.subject("lena")
    response = _write(tenant, body)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    for field, advice in named.items():
        assert repr(field) in error["message"] and advice in error["details"]["unknown_fields"][field]
    nested = _write(tenant, {"messages": [{"role": "user", "content": "I'm a nurse.", "metadata": {}}]})
    assert nested.status_code == 400 and "a field of the write" in str(nested.json()["error"]["details"]["messages"])
    assert _row_count(tenant) == 0


def test_a_batch_stores_its_long_chunk_and_reports_a_chunk_that_stored_nothing() -> None:
    """The batch step itself (the worker's job status is covered by test_batch_job_with_a_rejected_chunk_fails)."""
    tenant = make_tenant()
    tenant.subject("lena")
    text = long_text(30_000, seed=5)
    chunks = [
        {"messages": [{"id": "c0", "role": "user", "content": "I adopted a cat named Miso last week."}]},
        {"text": text},
        {"messages": [{"id": "c2", "role": "user", "content": "ok"}]},
    ]
    accepted = tenant.client().post("/v1/subjects/lena/memories/batch", {"chunks": chunks}, format="json")
    assert accepted.status_code == 202, accepted.content
    steps = []
    with organization_scope(tenant.id):
        while not steps or not steps[-1].finished:
            steps.append(memory_batch_step(batch_id=accepted.json()["batch_id"]))
        assert ResourceItem.objects.get().extracted_text == text
        assert EpisodicEvent.objects.filter(resource_id__isnull=False).count() >= 20
    assert [s.rejected is not None for s in steps] == [False, False, True]
    assert "c0" in _stored_message_ids(tenant) and "c2" not in _stored_message_ids(tenant)


def test_another_organizations_key_gets_404_and_changes_nothing() -> None:
    tenant, intruder = make_tenant(), make_tenant()
    tenant.subject("lena")
    assert _write(tenant, {"text": long_text(20_000)}).status_code == 202
    before = _row_count(tenant)
    client = intruder.client()
    # A write to an unknown external id would create the intruder's own subject (ADR 0039):
    # off here, so that every call names only the owner's subject.
    assert client.patch("/v1/organization", {"subjects_created_on_write": False}, format="json").status_code == 200
    for method, path, body in (
        ("post", "/v1/subjects/lena/memories", {"text": long_text(20_000)}),
        ("post", "/v1/subjects/lena/memories", {"text": "hi"}),
        ("post", "/v1/subjects/lena/memories/batch", {"chunks": [{"text": long_text(20_000)}]}),
        ("post", "/v1/subjects/lena/memories/resource/search", {"query": "generator", "token_budget": 50}),
        ("post", "/v1/subjects/lena/search", {"query": "generator", "memory_types": ["resource"], "token_budget": 50}),
    ):
        response = getattr(client, method)(path, body, format="json")
        assert response.status_code == 404, (path, response.content)
    upload = client.post(
        "/v1/subjects/lena/memories",
        {"file": SimpleUploadedFile("x.txt", b"Gate code notes", "text/plain")},
        format="multipart",
    )
    assert upload.status_code == 404
    assert _row_count(tenant) == before and _row_count(intruder) == 0


@pytest.mark.slow
def test_batch_job_with_a_rejected_chunk_fails_after_writing_the_others() -> None:
    purge_queues()
    tenant = make_tenant()
    tenant.subject("lena")
    text = long_text(20_000, seed=9)
    chunks = [
        {"text": text},
        {"messages": [{"role": "user", "content": "thanks!"}]},
        {"text": "I joined a choir in May."},
    ]
    accepted = tenant.client().post("/v1/subjects/lena/memories/batch", {"chunks": chunks}, format="json")
    assert accepted.status_code == 202, accepted.content
    job_id = accepted.json()["job_id"]
    with celery_worker():
        job = wait_for(
            lambda: (j := tenant.client().get(f"/v1/jobs/{job_id}").json())["status"] in ("succeeded", "failed") and j,
            timeout=180,
        )
    # Never "succeeded" with a chunk missing: failed, saying which chunk and why; the others are stored.
    assert job["status"] == "failed" and job["error"]["code"] == "chunks_rejected"
    assert "1 of 3 chunks" in job["error"]["message"]
    assert [item["chunk"] for item in job["result"]["chunks_rejected"]] == [1]
    assert "worth remembering" in job["result"]["chunks_rejected"][0]["message"]
    assert job["result"]["chunks_done"] == 3
    with organization_scope(tenant.id):
        assert ResourceItem.objects.get().extracted_text == text
        assert EpisodicEvent.objects.filter(summary__contains="choir").exists()


# --- every accepted message is reachable from a stored row ---------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "I moved to Porto in 2021 and work as a nurse at the children's hospital.",
        "We're flying to Oslo next Friday for my sister's wedding!",
        "See https://docs.invalid/setup?step=2 for the install guide.",
        "```python\nprint('hello')\n```",
        "Café au lait, naïve façade, Zürich, 東京, emoji 🎉.",
        "haha",
        "ok",
        "thanks!",
        "First, boil the water. Then steep the tea for 4 minutes. Finally, add milk.",
        "You are a helpful assistant. Answer briefly.",
    ]
)
_SAFE_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00"), min_size=1, max_size=60
)


@st.composite
def _content(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 19)) == 0:  # now and then a pasted document, up to the limit
        return long_text(draw(st.sampled_from([20_000, 100_000])), seed=draw(st.integers(0, 99)))
    parts = draw(st.lists(st.one_of(_FRAGMENTS, _SAFE_TEXT), min_size=1, max_size=4))
    return " ".join(parts)[:MAX_MESSAGE_CHARS]


_MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system"]), "content": _content()})


def test_every_accepted_message_is_reachable_from_a_stored_row() -> None:
    """Random message sets (roles, lengths from 1 character to the limit, URLs, code, unicode):
    a 202 means every message id is in some stored row's provenance; anything else is a 4xx
    that stored nothing."""
    tenant = make_tenant()
    subjects = iter(range(10_000))

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(messages=st.lists(_MESSAGE, min_size=1, max_size=3))
    def check(messages: list[dict[str, str]]) -> None:
        subject = tenant.subject(f"p{next(subjects)}")
        numbered = [{**message, "id": f"m{n}"} for n, message in enumerate(messages)]
        before = _row_count(tenant)
        response = _write(tenant, {"messages": numbered}, subject=subject.external_id)
        if response.status_code == 202:
            with organization_scope(tenant.id):
                cited = {
                    i
                    for model in STORES.values()
                    for ids in model.objects.filter(subject=subject).values_list("source_message_ids", flat=True)
                    for i in ids
                }
            assert cited >= {m["id"] for m in numbered}, response.json()
        else:
            assert response.status_code in (400, 422), response.content
            assert _row_count(tenant) == before

    check()


def test_a_pasted_log_is_not_run_together_into_one_statement() -> None:
    """The parser runs lines without full stops together; the writers read them line by line,
    so no row they write from a pasted log holds more than a line or two of it."""
    tenant = make_tenant()
    tenant.subject("ops")
    log = "\n".join(
        f"2026-03-05 1{n % 10}:{n:02d} deploy #{1000 + n} of billing-api to eu-west succeeded" for n in range(60)
    )
    message = {"role": "assistant", "name": "deploy-bot", "content": f"{log}\nAlso the billing team moved to Lyon."}
    written = _write(tenant, {"messages": [message]}, subject="ops")
    assert written.status_code == 202, written.content
    with organization_scope(tenant.id):
        written_rows = [*SemanticItem.objects.all(), *EpisodicEvent.objects.filter(resource_id__isnull=True)]
    assert all(len(row.summary) <= 300 for row in written_rows), max(len(row.summary) for row in written_rows)
