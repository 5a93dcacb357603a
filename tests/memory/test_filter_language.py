"""The pure cores of metadata and filters: what is accepted, what is refused and why, and how a
tree folds and compiles (no database)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from apps.memory.filter_sql import NamedParams, filter_sql
from apps.memory.filters import MAX_CONDITIONS, MAX_DEPTH, And, Condition, FilterError, Not, Or, parse_filters
from apps.memory.metadata import MAX_BYTES, MAX_KEYS, MetadataError, validate_metadata

pytestmark = pytest.mark.unit


def test_metadata_accepts_flat_scalars_and_lists_of_scalars() -> None:
    tags = {"project": "apollo", "priority": 2, "score": 0.5, "urgent": True, "owner": None, "tags": ["a", 1]}
    assert validate_metadata(tags) == tags


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (["a"], "must be a JSON object"),
        ({"k": {"nested": 1}}, "metadata.k is dict"),
        ({"k": [[1]]}, "a list nested in a list"),
        ({"": 1}, "non-empty strings"),
        ({"k": float("nan")}, "metadata.k is float"),
        ({"k": "a\x00b"}, "NUL"),
        ({"k": ["\udc00"]}, "unpaired surrogate"),
        ({f"k{i}": i for i in range(MAX_KEYS + 1)}, f"at most {MAX_KEYS} are accepted"),
        ({"blob": "x" * MAX_BYTES}, f"at most {MAX_BYTES} are accepted"),
    ],
)
def test_metadata_refusals_say_what_is_wrong(raw: Any, message: str) -> None:
    with pytest.raises(MetadataError, match=message.replace("[", r"\[")):
        validate_metadata(raw)


def test_a_tree_parses_into_typed_nodes_with_shorthands() -> None:
    tree = parse_filters(
        {
            "and": [
                {"metadata.project": "apollo"},
                {
                    "or": [
                        {"type": {"in": ["episodic", "semantic"]}},
                        {"created_at": {"gte": "2024-07-01", "lt": "2025-01-01"}},
                    ]
                },
                {"not": {"metadata.tags": {"contains": "draft"}}},
            ]
        }
    )
    assert isinstance(tree, And)
    first, second, third = tree.children
    assert first == Condition("metadata", "eq", "apollo", key="project")
    assert isinstance(second, Or) and second.children[0] == Condition("type", "in", ("episodic", "semantic"))
    created = second.children[1]
    assert isinstance(created, And)
    assert created.children[0] == Condition("created_at", "gte", datetime(2024, 7, 1, tzinfo=UTC))
    assert isinstance(third, Not) and third.child == Condition("metadata", "contains", "draft", key="tags")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "a filter is a non-empty JSON object"),
        ({"colour": "red"}, "unknown field 'colour'"),
        ({"metadata.k": {"like": "x"}}, "unknown operator 'like'"),
        ({"current": {"gt": True}}, "current takes the operators"),
        ({"current": "yes"}, "current is true or false"),
        ({"type": "vault"}, "type is one of"),
        ({"created_at": {"gte": "yesterday"}}, "not an ISO 8601"),
        ({"metadata.k": {"in": []}}, "a list of 1-100 values"),
        ({"metadata.k": {"gt": True}}, "compares numbers or strings"),
        ({"metadata.k": {"exists": "yes"}}, "exists takes true or false"),
        ({"metadata.k": {"a": 1}}, "unknown operator 'a'"),
        ({"and": {"type": "core"}}, "'and' takes a non-empty list"),
        ({"and": [{"type": "core"}], "type": "core"}, "must be the only key"),
        ({"metadata.": 1}, "a metadata key is"),
        ({"session_id": "a\x00"}, "cannot hold a NUL"),
        ({"metadata.k\ud800": 1}, "cannot hold an unpaired surrogate"),
    ],
)
def test_bad_filters_name_where_and_what(raw: Any, message: str) -> None:
    with pytest.raises(FilterError, match=message):
        parse_filters(raw)


def test_depth_and_size_are_limited() -> None:
    deep: dict[str, Any] = {"type": "core"}
    for _ in range(MAX_DEPTH):
        deep = {"not": deep}
    with pytest.raises(FilterError, match=f"at most {MAX_DEPTH} levels"):
        parse_filters(deep)
    wide = {"or": [{"metadata.k": i} for i in range(MAX_CONDITIONS + 1)]}
    with pytest.raises(FilterError, match=f"at most {MAX_CONDITIONS} conditions") as refused:
        parse_filters(wide)
    assert refused.value.path == f"filters.or[{MAX_CONDITIONS}].metadata.k"


def _compile(raw: Any, memory_type: str = "episodic") -> tuple[str | bool, dict[str, Any]]:
    params: dict[str, Any] = {}
    compiled = filter_sql(parse_filters(raw), memory_type=memory_type, table="t", alias="e", param=NamedParams(params))
    return compiled, params


def test_type_and_missing_columns_fold_to_constants_per_store() -> None:
    assert _compile({"type": "semantic"}, "episodic")[0] is False
    assert _compile({"type": {"ne": "semantic"}}, "episodic")[0] is True
    assert _compile({"or": [{"type": "semantic"}, {"type": "episodic"}]}, "episodic")[0] is True
    assert _compile({"event_time": {"gte": "2024-01-01"}}, "semantic")[0] is False
    assert _compile({"not": {"event_time": {"exists": True}}}, "semantic")[0] is True
    # A constant drops out of a group it does not decide.
    compiled, _ = _compile({"and": [{"type": "episodic"}, {"session_id": "s1"}]}, "episodic")
    assert compiled == "(COALESCE((e.session_id = %(filter0)s::text), FALSE))"


def test_every_value_is_a_bound_parameter() -> None:
    hostile = "x'); DROP TABLE t; --"
    compiled, params = _compile(
        {"and": [{f"metadata.{hostile}": {"contains": hostile}}, {"session_id": {"in": [hostile]}}]}
    )
    assert isinstance(compiled, str) and hostile not in compiled and "DROP" not in compiled
    assert hostile in params.values() and [hostile] in params.values()
