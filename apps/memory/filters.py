"""The filter language of memory reads: parsed and checked into a small typed tree.

A filter is a JSON value::

    {"and": [{"metadata.project": "apollo"},
             {"or": [{"type": "episodic"}, {"created_at": {"gte": "2024-07-01"}}]},
             {"not": {"metadata.tags": {"contains": "draft"}}}]}

A condition names a field — ``metadata.<key>`` or a row field (:data:`ROW_FIELDS`) — and
either a value (meaning ``eq``) or an object of operators, all of which must hold. Several
fields in one object must all hold too. ``and`` / ``or`` take a non-empty list, ``not`` one
filter. Logic is two-valued: a condition on something a row does not have (a missing key, an
event time on a fact) is false, and ``ne``, ``nin`` and ``not`` are its exact negation.

Framework-free: the tree is compiled to SQL by :mod:`apps.memory.filter_sql`; a bad filter is
a :class:`FilterError` naming where and what is wrong, which the API turns into a 400.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from apps.memory.metadata import MAX_KEY_CHARS, is_scalar, unstorable

MEMORY_TYPES = ("core", "episodic", "semantic", "procedural", "resource")
ROW_FIELDS = ("type", "session_id", "created_at", "event_time", "current")
OPERATORS = ("eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "contains", "exists")
MAX_DEPTH = 8  # nesting of and / or / not
MAX_CONDITIONS = 64
MAX_LIST_VALUES = 100  # values of one in / nin
MAX_STRING_CHARS = 1000

_FIELD_OPERATORS: dict[str, tuple[str, ...]] = {
    "type": ("eq", "ne", "in", "nin"),
    "session_id": ("eq", "ne", "in", "nin", "contains", "exists"),
    "created_at": ("eq", "ne", "gt", "gte", "lt", "lte"),
    "event_time": ("eq", "ne", "gt", "gte", "lt", "lte", "exists"),
    "current": ("eq", "ne"),
}


class FilterError(ValueError):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


@dataclass(frozen=True, slots=True)
class Condition:
    """``field`` is a row field, or ``metadata`` with ``key`` set."""

    field: str
    operator: str
    value: Any
    key: str | None = None


@dataclass(frozen=True, slots=True)
class And:
    children: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Or:
    children: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Not:
    child: Filter


Filter = Condition | And | Or | Not


def parse_filters(raw: Any) -> Filter:
    """The filter tree of ``raw`` (already decoded JSON), or :class:`FilterError`."""
    counter = [0]
    return _node(raw, "filters", 1, counter)


def _node(raw: Any, path: str, depth: int, counter: list[int]) -> Filter:
    if depth > MAX_DEPTH:
        raise FilterError(path, f"filters nest at most {MAX_DEPTH} levels deep.")
    if not isinstance(raw, dict) or not raw:
        raise FilterError(
            path, 'a filter is a non-empty JSON object, e.g. {"metadata.project": "apollo"} or {"and": [...]}.'
        )
    groups = [name for name in raw if name in ("and", "or", "not")]
    if groups:
        if len(raw) > 1:
            raise FilterError(path, f"'{groups[0]}' must be the only key of its object; wrap the rest in 'and'.")
        name = groups[0]
        inner = raw[name]
        if name == "not":
            return Not(_node(inner, f"{path}.not", depth + 1, counter))
        if not isinstance(inner, list) or not inner:
            raise FilterError(f"{path}.{name}", f"'{name}' takes a non-empty list of filters.")
        children = tuple(_node(child, f"{path}.{name}[{i}]", depth + 1, counter) for i, child in enumerate(inner))
        return And(children) if name == "and" else Or(children)
    conditions = [
        condition
        for field, spec in raw.items()
        for condition in _conditions(str(field), spec, f"{path}.{field}", counter)
    ]
    return conditions[0] if len(conditions) == 1 else And(tuple(conditions))


def _conditions(field: str, spec: Any, path: str, counter: list[int]) -> list[Condition]:
    key = None
    if field.startswith("metadata."):
        key = field.removeprefix("metadata.")
        if not key or len(key) > MAX_KEY_CHARS:
            raise FilterError(path, f"a metadata key is 1-{MAX_KEY_CHARS} characters after 'metadata.'.")
        if unstorable(key):
            raise FilterError(path, f"a metadata key cannot hold {unstorable(key)}.")
        name = "metadata"
    elif field in ROW_FIELDS:
        name = field
    else:
        raise FilterError(
            path,
            f"unknown field {field!r}; filter on metadata.<key> or one of {list(ROW_FIELDS)} "
            "(boolean groups are 'and', 'or', 'not').",
        )
    operators = spec if isinstance(spec, dict) else {"eq": spec}
    if not operators:
        raise FilterError(path, f"give a value or an object of operators ({list(OPERATORS)}).")
    allowed = _FIELD_OPERATORS.get(name, OPERATORS)
    found = []
    for operator, value in operators.items():
        if operator not in OPERATORS:
            raise FilterError(path, f"unknown operator {operator!r}; operators are {list(OPERATORS)}.")
        if operator not in allowed:
            raise FilterError(path, f"{field} takes the operators {list(allowed)}, not {operator!r}.")
        counter[0] += 1
        if counter[0] > MAX_CONDITIONS:
            raise FilterError(path, f"a filter holds at most {MAX_CONDITIONS} conditions.")
        found.append(Condition(name, operator, _value(name, operator, value, f"{path}.{operator}"), key))
    return found


def _value(field: str, operator: str, value: Any, path: str) -> Any:
    if operator == "exists":
        if not isinstance(value, bool):
            raise FilterError(path, "exists takes true or false.")
        return value
    if operator in ("in", "nin"):
        if not isinstance(value, list) or not value or len(value) > MAX_LIST_VALUES:
            raise FilterError(path, f"{operator} takes a list of 1-{MAX_LIST_VALUES} values.")
        return tuple(_one(field, operator, item, f"{path}[{i}]") for i, item in enumerate(value))
    return _one(field, operator, value, path)


def _one(field: str, operator: str, value: Any, path: str) -> Any:
    check = _CHECKS[field]
    return check(operator, value, path)


def _string(value: Any, path: str, what: str = "a string") -> str:
    if not isinstance(value, str):
        raise FilterError(path, f"expected {what}, got {_json_type(value)}.")
    if len(value) > MAX_STRING_CHARS:
        raise FilterError(path, f"a string value is at most {MAX_STRING_CHARS} characters.")
    if unstorable(value):
        raise FilterError(path, f"a string value cannot hold {unstorable(value)}.")
    return value


def _type(operator: str, value: Any, path: str) -> str:
    if value not in MEMORY_TYPES:
        raise FilterError(path, f"type is one of {list(MEMORY_TYPES)}, got {value!r}.")
    return str(value)


def _session(operator: str, value: Any, path: str) -> str:
    return _string(value, path)


def _moment(operator: str, value: Any, path: str) -> datetime:
    text = _string(value, path, "an ISO 8601 date or time, e.g. '2024-07-01' or '2024-07-01T09:30:00Z'")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise FilterError(path, f"{text!r} is not an ISO 8601 date or time, e.g. '2024-07-01T09:30:00Z'.") from exc
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _flag(operator: str, value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise FilterError(path, f"current is true or false, got {_json_type(value)}.")
    return value


def _metadata(operator: str, value: Any, path: str) -> Any:
    if operator in ("eq", "ne") and isinstance(value, list):
        for i, item in enumerate(value):
            if not is_scalar(item):
                raise FilterError(f"{path}[{i}]", "a list value holds strings, numbers, booleans or nulls.")
        return tuple(value)
    if not is_scalar(value):
        raise FilterError(path, f"expected a string, number, boolean or null, got {_json_type(value)}.")
    if isinstance(value, str):
        _string(value, path)
    if operator in ("gt", "gte", "lt", "lte") and (value is None or isinstance(value, bool)):
        raise FilterError(path, f"{operator} compares numbers or strings (e.g. ISO dates), not {_json_type(value)}.")
    return value


_CHECKS: dict[str, Callable[[str, Any, str], Any]] = {
    "type": _type,
    "session_id": _session,
    "created_at": _moment,
    "event_time": _moment,
    "current": _flag,
    "metadata": _metadata,
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
