"""A filter tree (:mod:`apps.memory.filters`) as a SQL condition on one store's rows.

Every value is a bound parameter: the caller's ``param`` callback takes it and returns its
placeholder (``%s`` for the ORM, ``%(name)s`` for the named statements of the retrieval reads),
so a filter joins any statement; ``param`` is called in the order the placeholders appear. Identifiers are the store's table and alias, from code.

A condition on a field the store does not have (``event_time`` of a fact) is false, and
``type`` is known per store: both fold to constants here, so a filter that no row of a store
can match reads nothing of it (:func:`filter_sql` returns ``False``). Every other condition is
``COALESCE(…, FALSE)``: a missing metadata key is false, never SQL's unknown, so ``not`` and
``ne`` are exact negations. ``current`` is the same test as the reads' currency (no row
supersedes this one), on the unique ``supersedes`` index.

Metadata equality and containment use ``@>`` and existence ``?``, which the GIN index on
``metadata`` answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from apps.memory.filters import And, Condition, Filter, Not

Param = Callable[[Any], str]
Compiled = str | bool  # a SQL condition, or a constant the store's rows all share

_COMPARE = {"eq": "=", "ne": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_HAS_EVENT_TIME = frozenset({"episodic"})


def filter_sql(node: Filter, *, memory_type: str, table: str, alias: str, param: Param) -> Compiled:
    """The condition ``node`` sets on a row of ``table`` (the ``memory_type`` store) named
    ``alias`` in the statement."""
    if isinstance(node, Condition):
        return _condition(node, memory_type=memory_type, table=table, alias=alias, param=param)
    if isinstance(node, Not):
        inner = filter_sql(node.child, memory_type=memory_type, table=table, alias=alias, param=param)
        return (not inner) if isinstance(inner, bool) else f"(NOT {inner})"
    parts = [
        filter_sql(child, memory_type=memory_type, table=table, alias=alias, param=param) for child in node.children
    ]
    absorbing = not isinstance(node, And)  # TRUE absorbs an OR, FALSE an AND
    if absorbing in parts:
        return absorbing
    sql = [part for part in parts if not isinstance(part, bool)]
    if not sql:
        return not absorbing
    return f"({(' OR ' if absorbing else ' AND ').join(sql)})"


def _negated(compiled: Compiled, negate: bool) -> Compiled:
    if not negate:
        return compiled
    return (not compiled) if isinstance(compiled, bool) else f"(NOT {compiled})"


def _condition(node: Condition, *, memory_type: str, table: str, alias: str, param: Param) -> Compiled:
    operator = node.operator
    negate = operator in ("ne", "nin")
    positive = {"ne": "eq", "nin": "in"}.get(operator, operator)
    if node.field == "type":
        wanted = node.value if positive == "in" else (node.value,)
        return (memory_type in wanted) != negate
    if node.field == "current":
        successor = f"SELECT 1 FROM {table} AS fs WHERE fs.organization_id = {alias}.organization_id AND fs.supersedes_id = {alias}.id"
        return f"(NOT EXISTS ({successor}))" if node.value != negate else f"(EXISTS ({successor}))"
    if node.field == "event_time" and memory_type not in _HAS_EVENT_TIME:
        return negate or (operator == "exists" and not node.value)
    if node.field == "metadata":
        assert node.key is not None
        sql = _metadata(positive, node.key, node.value, alias=alias, param=param)
    else:
        sql = _column(positive, f"{alias}.{node.field}", node.field, node.value, param=param)
    return _negated(f"COALESCE({sql}, FALSE)", negate)


def _column(operator: str, column: str, field: str, value: Any, *, param: Param) -> str:
    if field == "session_id":
        if operator == "exists":
            return f"({column} <> '')" if value else f"({column} = '')"
        if operator == "in":
            return f"({column} = ANY({param(list(value))}::text[]))"
        if operator == "contains":
            return f"(strpos({column}, {param(value)}::text) > 0)"
        return f"({column} = {param(value)}::text)"
    if operator == "exists":  # event_time
        return f"({column} IS {'NOT ' if value else ''}NULL)"
    return f"({column} {_COMPARE[operator]} {param(value)}::timestamptz)"


def _json(value: Any) -> str:
    return json.dumps(list(value) if isinstance(value, tuple) else value, separators=(",", ":"), ensure_ascii=False)


def _metadata(operator: str, key: str, value: Any, *, alias: str, param: Param) -> str:
    column = f"{alias}.metadata"
    if operator == "exists":
        return f"({column} ? {param(key)}::text)" if value else f"(NOT ({column} ? {param(key)}::text))"
    if operator == "eq":  # containment (the index) and then exact equality (a list is not its subset)
        return f"({column} @> {param(_json({key: value}))}::jsonb AND {column} -> {param(key)}::text = {param(_json(value))}::jsonb)"

    def entry() -> str:  # a fresh placeholder at each use: ``param`` is called in text order
        return f"({column} -> {param(key)}::text)"

    if operator == "in":  # the value is one of them, or a list value holds one of them
        values = param([_json(v) for v in value])
        return f"(EXISTS (SELECT 1 FROM unnest({values}::jsonb[]) AS fv(v) WHERE {entry()} @> fv.v))"
    if operator == "contains":
        held = f"{column} @> {param(_json({key: [value]}))}::jsonb"
        if isinstance(value, str):
            return (
                f"({held} OR (jsonb_typeof({entry()}) = 'string'"
                f" AND strpos({entry()} #>> '{{}}', {param(value)}::text) > 0))"
            )
        return f"({held})"
    symbol = _COMPARE[operator]
    if isinstance(value, str):  # by code point, as ISO dates and times sort
        return (
            f"(jsonb_typeof({entry()}) = 'string'"
            f" AND ({entry()} #>> '{{}}') COLLATE \"C\" {symbol} {param(value)}::text)"
        )
    return f"(jsonb_typeof({entry()}) = 'number' AND {entry()} {symbol} {param(_json(value))}::jsonb)"


class NamedParams:
    """A ``param`` callback for statements with named placeholders: each value goes into
    ``params`` under a fresh ``filter<n>`` name."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params

    def __call__(self, value: Any) -> str:
        name = f"filter{sum(1 for key in self.params if key.startswith('filter'))}"
        self.params[name] = value
        return f"%({name})s"
