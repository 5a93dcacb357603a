"""Filters on the listing through the API: each operator, boolean combinations, row fields,
currency, and bad filters refused with what is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.factories import Tenant, make_tenant

WRITES = {
    "a": (
        "On 3 March 2024 I flew to Lisbon.",
        "s1",
        {"project": "apollo", "priority": 1, "tags": ["travel", "work"], "due": "2024-07-01"},
    ),
    "b": ("I repaired the garden fence.", "s2", {"project": "gemini", "priority": 5, "tags": ["home"]}),
    "c": ("I started learning the cello.", "s1", {}),
}


def _setup() -> tuple[Tenant, dict[str, str]]:
    tenant = make_tenant()
    tenant.subject("maya")
    chunks = {}
    for name, (text, session, tags) in WRITES.items():
        written = tenant.write("maya", {"text": text, "session_id": session, "metadata": tags})
        chunks[written["chunk_id"]] = name
    return tenant, chunks


def _list(tenant: Tenant, filters: Any, **params: Any) -> list[dict[str, Any]]:
    response = tenant.client().get(
        "/v1/subjects/maya/memories", {"type": "episodic", "limit": 200, "filters": json.dumps(filters), **params}
    )
    assert response.status_code == 200, response.content
    return response.json()["results"]  # type: ignore[no-any-return]


CASES: list[tuple[Any, set[str]]] = [
    ({"metadata.project": "apollo"}, {"a"}),
    ({"metadata.project": {"eq": "apollo"}}, {"a"}),
    ({"metadata.project": {"ne": "apollo"}}, {"b", "c"}),  # a missing key is not apollo
    ({"metadata.project": {"in": ["apollo", "gemini"]}}, {"a", "b"}),
    ({"metadata.project": {"nin": ["apollo"]}}, {"b", "c"}),
    ({"metadata.tags": {"in": ["home", "none"]}}, {"b"}),  # a list value holding one of them
    ({"metadata.priority": {"gt": 1}}, {"b"}),
    ({"metadata.priority": {"gte": 1}}, {"a", "b"}),
    ({"metadata.priority": {"lt": 5}}, {"a"}),
    ({"metadata.priority": {"lte": 5}}, {"a", "b"}),
    ({"metadata.priority": {"gt": "1"}}, set()),  # a string compares only with strings
    ({"metadata.due": {"gte": "2024-06-01", "lt": "2024-08-01"}}, {"a"}),
    ({"metadata.tags": {"contains": "travel"}}, {"a"}),
    ({"metadata.project": {"contains": "emi"}}, {"b"}),
    ({"metadata.tags": {"exists": True}}, {"a", "b"}),
    ({"metadata.tags": {"exists": False}}, {"c"}),
    ({"metadata.tags": ["travel", "work"]}, {"a"}),
    ({"metadata.tags": ["travel"]}, set()),  # eq is equality, not containment
    ({"session_id": "s1"}, {"a", "c"}),
    ({"session_id": {"ne": "s1"}}, {"b"}),
    ({"session_id": {"in": ["s2", "s9"]}}, {"b"}),
    ({"session_id": {"nin": ["s2"]}}, {"a", "c"}),
    ({"session_id": {"contains": "2"}}, {"b"}),
    ({"session_id": {"exists": True}}, {"a", "b", "c"}),
    ({"type": "episodic"}, {"a", "b", "c"}),
    ({"type": {"in": ["semantic", "core"]}}, set()),
    ({"type": {"nin": ["semantic"]}}, {"a", "b", "c"}),
    ({"and": [{"session_id": "s1"}, {"metadata.project": "apollo"}]}, {"a"}),
    ({"and": [{"session_id": "s2"}, {"metadata.project": "apollo"}]}, set()),
    ({"or": [{"metadata.project": "gemini"}, {"not": {"metadata.tags": {"exists": True}}}]}, {"b", "c"}),
    ({"not": {"or": [{"metadata.project": "gemini"}, {"session_id": "s1"}]}}, set()),
    ({"not": {"metadata.priority": {"gt": 1}}}, {"a", "c"}),
    ({"metadata.project": "apollo", "session_id": "s1"}, {"a"}),  # several fields: all hold
]


def test_each_operator_and_combination_returns_exactly_the_matching_rows() -> None:
    tenant, chunks = _setup()
    everything = _list(tenant, {"type": "episodic"})
    assert {chunks[r["provenance"]["chunk_id"]] for r in everything} == {"a", "b", "c"}
    for filters, expected in CASES:
        rows = _list(tenant, filters)
        assert {chunks[r["provenance"]["chunk_id"]] for r in rows} == expected, filters

    # Row times: created_at orders the writes; event_time only rows that have one.
    b_created = min(r["created_at"] for r in everything if chunks[r["provenance"]["chunk_id"]] == "b")
    later = _list(tenant, {"created_at": {"gte": b_created}})
    assert {chunks[r["provenance"]["chunk_id"]] for r in later} == {"b", "c"}
    earlier = _list(tenant, {"created_at": {"lt": b_created}})
    assert {chunks[r["provenance"]["chunk_id"]] for r in earlier} == {"a"}
    timed = _list(tenant, {"event_time": {"exists": True}})
    assert timed and all(r["content"]["event_time"] for r in timed)
    march = _list(tenant, {"event_time": {"gte": "2024-03-01", "lt": "2024-04-01"}})
    assert {chunks[r["provenance"]["chunk_id"]] for r in march} == {"a"}
    untimed = _list(tenant, {"not": {"event_time": {"exists": True}}})
    assert {r["id"] for r in untimed} == {r["id"] for r in everything} - {r["id"] for r in timed}

    # Pagination runs over the filtered rows.
    first = (
        tenant.client()
        .get(
            "/v1/subjects/maya/memories",
            {"type": "episodic", "limit": 1, "filters": json.dumps({"metadata.project": {"exists": True}})},
        )
        .json()
    )
    assert first["next_cursor"] and chunks[first["results"][0]["provenance"]["chunk_id"]] in {"a", "b"}


def test_a_filter_on_current_matches_the_currency_the_read_returns() -> None:
    tenant, _ = _setup()
    old = next(r for r in _list(tenant, {"metadata.project": "apollo"}))
    patched = tenant.client().patch(
        f"/v1/subjects/maya/memories/episodic/{old['id']}", {"changes": {"summary": "Flew to Porto."}}, format="json"
    )
    assert patched.status_code == 200, patched.content
    new_id = patched.json()["id"]
    assert patched.json()["metadata"] == WRITES["a"][2]  # an update keeps the row's tags
    superseded = _list(tenant, {"current": False}, include_superseded="true")
    assert [r["id"] for r in superseded] == [old["id"]] and superseded[0]["current"] is False
    current = _list(tenant, {"current": True}, include_superseded="true")
    assert old["id"] not in {r["id"] for r in current} and new_id in {r["id"] for r in current}
    assert all(r["current"] for r in current)
    negated = _list(tenant, {"current": {"ne": True}}, include_superseded="true")
    assert [r["id"] for r in negated] == [old["id"]]


@pytest.mark.parametrize(
    ("filters", "says"),
    [
        ("{not json", "filters is not valid JSON"),
        ('{"colour": "red"}', "unknown field 'colour'"),
        ('{"metadata.k": {"like": "x"}}', "unknown operator 'like'"),
        ('{"created_at": {"gt": 5}}', "expected an ISO 8601 date or time"),
        ('{"current": {"in": [true]}}', "current takes the operators"),
        ('{"and": []}', "'and' takes a non-empty list"),
    ],
)
def test_a_bad_filter_is_a_400_that_says_what_is_wrong(filters: str, says: str) -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    response = tenant.client().get("/v1/subjects/maya/memories", {"type": "episodic", "filters": filters})
    assert response.status_code == 400, response.content
    assert says in json.dumps(response.json()["error"]["details"]), response.json()
