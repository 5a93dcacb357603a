"""The pure core of semantic AutoDream: candidates, caps, the cache key, decisions, and the
conservative local rule."""

from __future__ import annotations

import pytest

from apps.dream.candidates import (
    FINAL_CAP,
    INTERMEDIATE_CAP,
    AnchorInfo,
    CandidatePair,
    Neighbour,
    candidate_pairs,
    decision_outcome,
    plan_round,
    rejection_key,
)
from apps.dream.local import local_verdict
from apps.providers.dream_schemas import DreamAnchor, DreamQuestion, verdict_schema

pytestmark = pytest.mark.unit


def _anchor(key: str, type_: str = "object", *, semantic: bool = True) -> AnchorInfo:
    return AnchorInfo(key=key, name=key.title(), type=type_, semantic_backed=semantic)


def test_candidates_keep_the_four_nearest_of_the_same_type_above_the_threshold() -> None:
    anchors = {k: _anchor(k) for k in ("a", "b", "c", "d", "e")}
    anchors["p"] = _anchor("p", "person")
    anchors["x"] = _anchor("x", semantic=False)  # episodic-only
    anchors["v"] = _anchor("v", "event")
    neighbours = {
        "a": [
            Neighbour("a", 1.0),
            Neighbour("b", 0.95),
            Neighbour("p", 0.94),
            Neighbour("x", 0.93),
            Neighbour("c", 0.99),
        ],
        "v": [Neighbour("v", 1.0), Neighbour("a", 0.99)],
        "d": [Neighbour("d", 1.0), Neighbour("e", 0.859)],
    }
    pairs = candidate_pairs([anchors["a"], anchors["v"], anchors["d"], anchors["x"]], neighbours, anchors)
    # c is the fifth entry (beyond the four nearest), p another type, x episodic-only, e below 0.86,
    # v an event (not identity-stable).
    assert [p.keys for p in pairs] == [("a", "b")]


def test_a_pair_is_one_pair_whichever_side_found_it_and_its_cache_key_ignores_order_and_case() -> None:
    a, b = _anchor("a"), _anchor("b")
    pairs = candidate_pairs([a, b], {"a": [Neighbour("b", 0.9)], "b": [Neighbour("a", 0.91)]}, {"a": a, "b": b})
    assert len(pairs) == 1 and pairs[0].cosine == 0.91
    assert rejection_key("Steel Bottle", "stainless steel bottle", "object") == rejection_key(
        "Stainless Steel Bottle", "steel bottle", "object"
    )
    assert rejection_key("steel bottle", "stainless steel bottle", "object") != rejection_key(
        "steel bottle", "stainless steel bottle", "concept"
    )


def _pairs(n: int) -> list[CandidatePair]:
    return [
        CandidatePair(first=_anchor(f"s{i:05d}"), second=_anchor(f"t{i:05d}"), cosine=0.99 - i * 1e-6) for i in range(n)
    ]


@pytest.mark.parametrize("cap", [INTERMEDIATE_CAP, FINAL_CAP])
def test_caps_hold_for_thousands_of_pairs_and_cached_pairs_are_not_asked(cap: int) -> None:
    pairs = _pairs(5000)
    rejected = {p.cache_key for p in pairs[:10]}
    plan = plan_round(pairs, rejected=rejected, cap=cap, sources=[p.first.key for p in pairs])
    assert len(plan.to_verify) == cap and len(plan.cached) == 10
    assert len(plan.skipped) == 5000 - 10 - cap and plan.considered == 5000
    assert plan.to_verify[0] is pairs[10]  # most similar unseen first
    # Sources with a pair left over are not "used": the final round and later frontiers bring them back.
    assert len(plan.used_sources) == 10 + cap
    assert not {p.first.key for p in plan.skipped} & set(plan.used_sources)


def test_a_decision_must_name_one_of_the_two_existing_names() -> None:
    pair = CandidatePair(
        first=AnchorInfo("bottle steel", "steel bottle", "object"),
        second=AnchorInfo("bottle stainless steel", "stainless steel bottle", "object"),
        cosine=0.9,
    )
    assert decision_outcome(pair, same_entity=True, representative="stainless steel bottle") == (
        "merge",
        "bottle stainless steel",
    )
    assert decision_outcome(pair, same_entity=True, representative="steel bottle") == ("merge", "bottle steel")
    assert decision_outcome(pair, same_entity=True, representative="steel water bottle") == ("invalid", None)
    assert decision_outcome(pair, same_entity=True, representative=None) == ("invalid", None)
    assert decision_outcome(pair, same_entity=False, representative=None) == ("reject", None)


def _ask(a: str, b: str, type_: str = "object", *, aliases: tuple[list[str], list[str]] = ([], [])) -> str | None:
    verdict = local_verdict(
        DreamQuestion(
            type=type_, first=DreamAnchor(name=a, aliases=aliases[0]), second=DreamAnchor(name=b, aliases=aliases[1])
        )
    )
    assert verdict.same_entity == (verdict.representative is not None)
    return verdict.representative


def test_the_local_decision_is_conservative() -> None:
    assert _ask("steel bottle", "stainless steel bottle") == "stainless steel bottle"
    assert _ask("pottery class", "Pottery Classes", "concept") is not None
    assert _ask("10 gallons", "20 gallons") is None  # different quantities
    assert _ask("John Smith", "John Miller", "person") is None  # same first name, different people
    assert _ask("John Smith", "John Smith Jr.", "person") is None
    assert _ask("Caroline", "Caroline's mom", "person") is None  # a relation, not the person
    assert _ask("bottle", "bottle cap") is None  # a part
    assert _ask("May 2023 trip", "June 2023 trip", "concept") is None
    assert _ask("Mel", "Melanie", "person") == "Melanie"  # a short form (ADR 0059)
    assert _ask("Mel", "Mell", "person") is None  # one letter more is another name, or a typo
    assert _ask("Mel", "Melanie Smith", "person", aliases=([], ["Mel"])) == "Melanie Smith"  # a known alias


def test_the_openai_schema_allows_only_the_two_names() -> None:
    schema = verdict_schema(
        DreamQuestion(
            type="object", first=DreamAnchor(name="steel bottle"), second=DreamAnchor(name="stainless steel bottle")
        )
    )
    assert schema["additionalProperties"] is False and set(schema["required"]) == {"same_entity", "representative"}
    assert schema["properties"]["representative"]["anyOf"][0]["enum"] == ["steel bottle", "stainless steel bottle"]
