"""Filtered searches through the API on a real graph: graph and flat mode return only matching
rows and facts citing them, within the budgets; the filter is applied before the caps."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from apps.memory.filters import parse_filters
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.retrieval import reads
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant
from tests.graph.test_adjacency import _anchor, _frame, _write_graph
from tests.memory.conversation import SESSIONS

TRIPS = [{"trip": "race", "year": 2023}, {"trip": "lisbon", "year": 2023}, {}]


def _history(tenant: Tenant) -> None:
    tenant.subject("maya")
    for session, tags in zip(SESSIONS, TRIPS, strict=True):
        tenant.write("maya", {"messages": session, "metadata": tags}, index=True)


def _search(tenant: Tenant, query: str, **options: Any) -> dict[str, Any]:
    response = tenant.client().post("/v1/subjects/maya/search", {"query": query, **options}, format="json")
    assert response.status_code == 200, response.content
    return response.json()  # type: ignore[no-any-return]


def _tags(tenant: Tenant, ids: set[str]) -> dict[str, dict[str, Any]]:
    with organization_scope(tenant.id):
        return {
            str(row_id): tags
            for model in (EpisodicEvent, SemanticItem)
            for row_id, tags in model.objects.filter(id__in=ids).values_list("id", "metadata")
        }


@pytest.mark.parametrize("mode", ["graph", "flat"])
def test_a_filtered_search_returns_only_matching_rows_and_facts_citing_them(mode: str) -> None:
    tenant = make_tenant()
    _history(tenant)
    lisbon = {"metadata.trip": "lisbon"}
    for question in (
        "Where will Maya fly next month?",
        "How many dresses did Maya buy?",
        "When did Maya run Bay to Breakers?",
    ):
        unfiltered = _search(tenant, question, mode=mode)
        filtered = _search(tenant, question, mode=mode, filters=lisbon)
        assert not filtered["fallback"]
        rows = filtered["rows"]
        assert rows, question  # matching rows exist for every question: the caps chose among them
        assert all(row["metadata"] == TRIPS[1] for row in rows), question
        cited = {c for fact in filtered["facts"] for c in fact["citations"]}
        assert all(tags == TRIPS[1] for tags in _tags(tenant, cited).values()) and len(_tags(tenant, cited)) == len(
            cited
        )
        assert filtered["budget"]["rows_returned"] == len(rows)
        # The filter mattered: without it, other trips' rows are returned too.
        if question.startswith("When did"):
            assert any(row["metadata"] != TRIPS[1] for row in unfiltered["rows"])
    none = _search(tenant, "Where will Maya fly next month?", mode=mode, filters={"metadata.trip": "mars"})
    assert none["rows"] == [] and none["facts"] == []


@pytest.mark.parametrize("mode", ["graph", "flat"])
def test_a_filtered_search_respects_the_token_budget(mode: str) -> None:
    tenant = make_tenant()
    _history(tenant)
    filters = {"or": [{"metadata.trip": "race"}, {"not": {"metadata.trip": {"exists": True}}}]}
    result = _search(tenant, "What does Maya do?", mode=mode, filters=filters, token_budget=40)
    assert result["rows"] and result["budget"]["tokens_returned"] <= 40
    assert all(row["metadata"] in (TRIPS[0], TRIPS[2]) for row in result["rows"])


def test_a_graph_search_filtered_on_currency_returns_only_superseded_rows() -> None:
    tenant = make_tenant()
    _history(tenant)
    before = _search(tenant, "Where will Maya fly next month?")
    target = next(row for row in before["rows"] if row["type"] == "episodic")
    patched = tenant.client().patch(
        f"/v1/subjects/maya/memories/episodic/{target['id']}",
        {"changes": {"summary": "Maya will fly to Porto next month."}},
        format="json",
    )
    assert patched.status_code == 200, patched.content
    superseded = _search(tenant, "Where will Maya fly next month?", filters={"current": False})
    assert [row["id"] for row in superseded["rows"]] == [target["id"]]
    assert superseded["rows"][0]["current"] is False
    current = _search(tenant, "Where will Maya fly next month?", filters={"current": True})
    assert current["rows"] and all(row["current"] for row in current["rows"])
    assert target["id"] not in {row["id"] for row in current["rows"]}


def test_bad_or_foreign_filters_on_search() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    too_many = {"or": [{"metadata.k": i} for i in range(65)]}
    for filters, says in ((too_many, "at most 64 conditions"), ({"metadata.k": {"regex": "x"}}, "unknown operator")):
        response = tenant.client().post("/v1/subjects/maya/search", {"query": "x", "filters": filters}, format="json")
        assert response.status_code == 400, response.content
        assert says in json.dumps(response.json()["error"]["details"])
    other = make_tenant()
    refused = other.client().post(
        "/v1/subjects/maya/search", {"query": "x", "filters": {"type": "episodic"}}, format="json"
    )
    assert refused.status_code == 404


def test_typed_stores_and_per_type_search_apply_the_filter() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    client = tenant.client()
    how_tos = {
        "home": SESSIONS[2][0]["content"],
        "office": "How I make cold brew at the office: first grind 80 grams of coffee, then steep it in cold "
        "water for 12 hours, then strain it through a cloth.",
    }
    for kitchen, text in how_tos.items():
        message = {**SESSIONS[2][0], "content": text}
        written = tenant.write("maya", {"messages": [message], "metadata": {"kitchen": kitchen}})
        assert "procedural" in written["routed_types"], written
    hits = client.post(
        "/v1/subjects/maya/memories/procedural/search",
        {"query": "cold brew", "filters": {"metadata.kitchen": "office"}},
        format="json",
    )
    assert hits.status_code == 200, hits.content
    found = hits.json()["results"]
    assert found and all(hit["record"]["metadata"] == {"kitchen": "office"} for hit in found)
    typed = _search(tenant, "cold brew", memory_types=["procedural"], filters={"metadata.kitchen": "home"})
    assert typed["typed"]["procedural"]
    assert all(row["metadata"] == {"kitchen": "home"} for row in typed["typed"]["procedural"])


def test_an_answers_cited_rows_carry_their_metadata() -> None:
    tenant = make_tenant()
    _history(tenant)
    response = tenant.client().post(
        "/v1/subjects/maya/answer", {"question": "When did Maya run Bay to Breakers?"}, format="json"
    )
    assert response.status_code == 200, response.content
    cited = response.json()["cited_rows"]
    assert cited
    stored = _tags(tenant, {row["id"] for row in cited})
    assert [row["metadata"] for row in cited] == [stored[row["id"]] for row in cited]
    assert TRIPS[0] in [row["metadata"] for row in cited]


def _tagged_row(subject: Subject, text: str, tags: dict[str, Any]) -> str:
    with organization_scope(subject.organization_id):
        row = EpisodicEvent.objects.create(
            organization_id=subject.organization_id,
            subject=subject,
            source_kind="chat",
            session_id="s1",
            chunk_id=uuid.uuid4(),
            actor="Maya",
            event_type="event",
            summary=f"Maya: {text}",
            details=text,
            mention_time=datetime(2024, 3, 2, 9, 30, tzinfo=UTC),
            metadata=tags,
            index_status="indexed",
        )
    return str(row.id)


def test_frame_caps_choose_among_frames_citing_matching_rows() -> None:
    """More relation frames than the 240-frame cap, and more incident frames than the 16 per
    anchor, cite rows the filter excludes and come first by frame id; the frames citing the
    matching rows come last. The filtered search still finds them, within the same caps."""
    tenant = make_tenant()
    subject = tenant.subject("maya")
    old = [_tagged_row(subject, f"Maya bought lamp {i} at the flea market.", {"shop": "flea"}) for i in range(20)]
    new = [_tagged_row(subject, f"Maya bought a {item} at the mall.", {"shop": "mall"}) for item in ("coat", "desk")]
    items = [f"item{i:03d}" for i in range(300)] + ["coat", "desk"]
    frames = [
        {**_frame(subject, f"f{i:03d}", [["agent", "maya"], ["theme", item]], predicate="buy"), "citations": [cited]}
        for i, (item, cited) in enumerate(zip(items, [old[i % len(old)] for i in range(300)] + new, strict=True))
    ]
    # No mentions on the anchors: the rows are reachable through the frames only.
    _write_graph(subject, [_anchor(subject, key, []) for key in ["maya", *items]], frames)

    mall = {"metadata.shop": "mall"}
    found = _search(tenant, "What did Maya buy?", filters=mall)
    assert not found["fallback"]
    assert {fact["frame_id"] for fact in found["facts"]} == {"f300", "f301"}
    assert set(new) <= {row["id"] for row in found["rows"]}
    assert all(row["metadata"] == {"shop": "mall"} for row in found["rows"])
    # The same caps: at most 16 incident frames of the anchor and 240 relation frames were read.
    assert found["budget"]["frames_inspected"] <= reads.FRAMES_PER_ANCHOR + reads.RELATION_FRAME_CAP
    with organization_scope(tenant.id):
        where = parse_filters(mall)
        incident = reads.incident_frames(subject=subject, keys=["maya"], where=where)
        relation = reads.relation_frames(subject=subject, keys=["maya"], predicates=["buy"], where=where)
        unfiltered = reads.relation_frames(subject=subject, keys=["maya"], predicates=["buy"])
    assert [f["frame_id"] for f in incident] == ["f300", "f301"]
    assert [f["frame_id"] for f in relation] == ["f300", "f301"]
    assert len(unfiltered) == reads.RELATION_FRAME_CAP and "f300" not in {f["frame_id"] for f in unfiltered}
    # Unfiltered, the cap is spent on the first frames, which cite only the flea-market rows.
    plain = _search(tenant, "What did Maya buy?")
    assert plain["facts"] and not {fact["frame_id"] for fact in plain["facts"]} & {"f300", "f301"}
    other = (
        make_tenant()
        .client()
        .post("/v1/subjects/maya/search", {"query": "What did Maya buy?", "filters": mall}, format="json")
    )
    assert other.status_code == 404
