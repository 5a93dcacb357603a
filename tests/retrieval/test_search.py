"""Searches through the API on real graphs: invariants 1, 3 and 4 at several history sizes."""

from __future__ import annotations

import pytest
from django.db.models import Count
from django.test import override_settings
from rest_framework.test import APIClient

from apps.memory.models import EpisodicEvent, SemanticItem
from apps.retrieval import reads
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant
from tests.memory.conversation import SESSIONS

QUESTIONS = [
    "When did Maya run Bay to Breakers?",
    "Where will Maya fly next month?",
    "How many dresses did Maya buy?",
    "What does Maya do for work?",
    "How does Maya make cold brew?",
]
# Anchor entry: 15 recalled + 16 exactly named; the base lane adds a bounded set of co-participants.
MAX_ANCHORS_INSPECTED = reads.ANCHOR_RECALL + 16 + reads.CO_PARTICIPANTS


def _history(tenant: Tenant, repeats: int) -> None:
    """``repeats`` copies of the conversation, on shifted dates, each session written and indexed."""
    tenant.subject("maya")
    for copy in range(repeats):
        for session in SESSIONS:
            messages = [
                {**m, "id": f"{m['id']}#{copy}", "timestamp": m["timestamp"].replace("2023", str(2023 + copy))}
                for m in session
            ]
            tenant.write("maya", {"messages": messages}, index=True)


def _search(tenant: Tenant, query: str, **options: object) -> dict:  # type: ignore[type-arg]
    response = tenant.client().post("/v1/subjects/maya/search", {"query": query, **options}, format="json")
    assert response.status_code == 200, response.content
    return response.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("repeats", [1, 4])
def test_searches_stay_within_budgets_and_every_fact_cites_existing_rows(repeats: int) -> None:
    tenant = make_tenant()
    _history(tenant, repeats)
    with organization_scope(tenant.id):
        rows = {str(i) for m in (EpisodicEvent, SemanticItem) for i in m.objects.values_list("id", flat=True)}
    for question in QUESTIONS:
        result = _search(tenant, question)
        budgets, budget = result["plan"]["budgets"], result["budget"]
        assert not result["fallback"]
        # Invariant 3: explicit caps, read from the budget report.
        assert budget["rows_returned"] == len(result["rows"]) <= budgets["base_rows"] + budgets["cited_rows"]
        assert budget["facts_returned"] == len(result["facts"]) <= budgets["cited_rows"]
        assert budget["anchors_inspected"] <= MAX_ANCHORS_INSPECTED
        assert budget["frames_inspected"] <= reads.RELATION_FRAME_CAP + reads.FRAMES_PER_ANCHOR * MAX_ANCHORS_INSPECTED
        # Invariant 1: every fact exposes its source rows, and those rows exist.
        for fact in result["facts"]:
            assert fact["citations"] and set(fact["citations"]) <= rows
        assert {row["id"] for row in result["rows"]} <= rows
        assert len({row["id"] for row in result["rows"]}) == len(result["rows"])


def test_the_relation_lane_renders_the_asked_fact_with_its_citations() -> None:
    tenant = make_tenant()
    _history(tenant, 1)
    result = _search(tenant, "How many dresses did Maya buy?")
    assert result["plan"]["operator"] == "count"
    buy = next(f for f in result["facts"] if f["predicate"] == "buy")
    assert buy["literals"]["price"] == "$240"
    cited = next(r for r in result["rows"] if r["id"] in buy["citations"])
    assert "3 dresses" in cited["text"] and cited["provenance"]["source_message_ids"] == ["s2:2#0"]


def test_an_activity_question_reads_the_frames_of_every_activity_family() -> None:
    tenant = make_tenant()
    _history(tenant, 1)
    result = _search(tenant, "What activities does Maya partake in?")
    assert "activity" in result["plan"]["answer_types"]
    run = next(f for f in result["facts"] if f["predicate"] == "run")  # no word of the question cues it
    cited = next(r for r in result["rows"] if r["id"] in run["citations"])
    assert "Bay to Breakers" in cited["text"]


def test_a_family_question_reads_frames_whose_arm_is_a_relative() -> None:
    tenant = make_tenant()
    _history(tenant, 1)
    result = _search(tenant, "What has Maya done with her family?")
    assert result["plan"]["relations"] == ["family"]
    # "family" forms are nouns: no predicate matches, the cousin arm does
    fact = next(f for f in result["facts"] if "cousin" in {role["anchor"] for role in f["roles"]})
    cited = next(r for r in result["rows"] if r["id"] in fact["citations"])
    assert "cousin's wedding" in cited["text"]


def test_a_graph_read_that_raises_falls_back_to_direct_evidence_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    tenant = make_tenant()
    _history(tenant, 1)

    def broken(**_: object) -> list[object]:
        raise RuntimeError("graph unavailable")

    monkeypatch.setattr(reads, "recall_anchors", broken)
    result = _search(tenant, "When did Maya run Bay to Breakers?")
    assert result["fallback"] is True and result["rows"]  # invariant 4
    assert any("Bay to Breakers" in row["text"] for row in result["rows"])
    assert result["facts"] == []


def test_flat_mode_token_budget_time_range_and_typed_paths() -> None:
    tenant = make_tenant()
    _history(tenant, 1)
    flat = _search(tenant, "When did Maya run Bay to Breakers?", mode="flat")
    assert flat["mode"] == "flat" and flat["budget"]["anchors_inspected"] == 0 and flat["rows"]
    trimmed = _search(tenant, "When did Maya run Bay to Breakers?", token_budget=30)
    assert 0 < trimmed["budget"]["tokens_returned"] <= 30
    june = _search(tenant, "What did Maya do?", since="2023-06-01T00:00:00Z", until="2023-07-01T00:00:00Z")
    assert june["rows"] and all(r["event_time"] or r["mention_time"] for r in june["rows"])
    assert all((r["event_time"] or r["mention_time"]).startswith("2023-06") for r in june["rows"])
    typed = _search(tenant, "cold brew coffee", memory_types=["episodic", "procedural", "core"])
    assert typed["typed"]["procedural"] and "core" in typed["typed"]
    refused = tenant.client().post("/v1/subjects/maya/search", {"query": "x", "memory_types": ["vault"]}, format="json")
    assert refused.status_code == 400 and "vault" in str(refused.json()["error"])


def test_another_organization_cannot_search_this_subject() -> None:
    tenant, intruder = make_tenant(), make_tenant()
    _history(tenant, 1)
    response = intruder.client().post("/v1/subjects/maya/search", {"query": "Maya"}, format="json")
    assert response.status_code == 404 and "Maya" not in response.content.decode().replace("maya", "")


@override_settings()
def test_bad_search_input_is_a_clear_400() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    for body in (
        {},
        {"query": ""},
        {"query": "x" * 2001},
        {"query": "x", "mode": "magic"},
        {"query": "x", "token_budget": 0},
    ):
        response = tenant.client().post("/v1/subjects/maya/search", body, format="json")
        assert response.status_code == 400, body


def test_neighbours_and_row_mentions_read_only_this_subjects_rows() -> None:
    tenant, other = make_tenant(), make_tenant()
    _history(tenant, 1)
    _history(other, 1)
    with organization_scope(tenant.id):
        subject = Subject.objects.get(external_id="maya")
        chunk = (
            EpisodicEvent.objects.filter(subject=subject)
            .values("chunk_id")
            .annotate(rows=Count("id"))
            .order_by("-rows", "chunk_id")
            .values_list("chunk_id", flat=True)
            .first()
        )
        ordered = [
            str(i)
            for i in EpisodicEvent.objects.filter(chunk_id=chunk)
            .order_by("created_at", "id")
            .values_list("id", flat=True)
        ]
        assert len(ordered) >= 3
        near = reads.neighbours(subject=subject, row_ids=[ordered[1]], per_row=1)
        assert near == {ordered[1]: [ordered[0], ordered[2]]}  # one turn before and after, in chunk order
        row_ids = [str(i) for i in EpisodicEvent.objects.filter(subject=subject).values_list("id", flat=True)]
        mentions = _mentions(subject, row_ids, ["maya", "no such anchor"])
        assert mentions and set(mentions) <= set(row_ids)
        assert {key for keys in mentions.values() for key in keys} == {"maya"}
    with organization_scope(other.id):
        other_subject = Subject.objects.get(external_id="maya")
        # This organization's ids, asked for under the other one, read nothing.
        assert reads.neighbours(subject=other_subject, row_ids=[ordered[1]], per_row=1) == {}
        assert _mentions(other_subject, row_ids, ["maya"]) == {}


def _mentions(subject: Subject, row_ids: list[str], keys: list[str]) -> dict[str, list[str]]:
    return reads.rows_with_mentions(
        subject=subject, ids=row_ids, vector=[0.0] * 384, model="any", lane="base", keys=keys
    )[1]


def test_the_schema_types_the_search_response() -> None:
    document = APIClient().get("/v1/schema", HTTP_ACCEPT="application/json").json()
    response = document["paths"]["/v1/subjects/{external_id}/search"]["post"]["responses"]["200"]
    assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/SearchOutput"}
    schemas = document["components"]["schemas"]
    output = schemas["SearchOutput"]["properties"]
    assert output["facts"]["items"] == {"$ref": "#/components/schemas/Fact"}
    assert output["rows"]["items"] == {"$ref": "#/components/schemas/EvidenceRow"}
    assert output["plan"] == {"$ref": "#/components/schemas/Plan"}
    assert output["budget"] == {"$ref": "#/components/schemas/BudgetReport"}
    assert schemas["Fact"]["properties"]["citations"] == {"type": "array", "items": {"type": "string"}}
    assert schemas["EvidenceRow"]["properties"]["provenance"] == {"$ref": "#/components/schemas/RowProvenance"}
    assert set(schemas["BudgetReport"]["required"]) == {
        "anchors_inspected",
        "frames_inspected",
        "rows_inspected",
        "rows_returned",
        "facts_returned",
        "tokens_returned",
    }


def test_a_statement_its_turn_already_says_is_returned_once() -> None:
    """ADR 0102: the writers' statement of a turn's sentence is not returned beside the turn
    that says it; the turn, whose details are the whole message, stays."""
    tenant = make_tenant()
    tenant.subject("melanie")
    said = "I just signed up for a pottery class at the Rio studio yesterday. My neighbour Tessa talked me into it."
    message = {"id": "m1", "role": "user", "name": "Melanie", "content": said, "timestamp": "2024-03-04T09:00:00+00:00"}
    tenant.write("melanie", {"messages": [message]}, index=True)
    with organization_scope(tenant.id):
        statements = [row.summary for row in SemanticItem.objects.all()]
    assert any("pottery class at the Rio" in text for text in statements), statements  # one to collapse
    response = tenant.client().post(
        "/v1/subjects/melanie/search",
        {"query": "When did Melanie sign up for the class at the Rio studio?"},
        format="json",
    )
    assert response.status_code == 200, response.content
    rows = response.json()["rows"]
    turns = [row["text"] for row in rows if row["type"] == "episodic"]
    assert any("pottery class at the Rio studio" in text for text in turns), rows
    statements = [row["text"] for row in rows if row["type"] == "semantic"]
    # Melanie's own words, said by the turn; "Melanie, about Melanie's neighbour: …" says more.
    assert not [text for text in statements if text.startswith("Melanie: ") and any(text in turn for turn in turns)]
