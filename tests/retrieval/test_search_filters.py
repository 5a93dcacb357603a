"""Filtered searches through the API on a real graph: graph and flat mode return only matching
rows and facts citing them, within the budgets; the filter is applied before the caps."""

from __future__ import annotations

import json
from typing import Any

import pytest

from apps.memory.models import EpisodicEvent, SemanticItem
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant
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
