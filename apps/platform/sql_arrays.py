"""Array parameters as one literal each. Pure.

With client-side binding (Django's psycopg cursor) a list parameter is dumped element by
element in Python: for the few hundred ids and keys of one search, more CPU than the rest of
the statement's client side. A string is quoted in one piece, and the ``::uuid[]`` /
``::text[]`` / ``::int[]`` cast in the statement parses it in the database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_UUIDS = re.compile(r"[0-9A-Fa-f-]+(?:,[0-9A-Fa-f-]+)*")


def uuid_array(ids: Iterable[str]) -> str:
    """Ids, first occurrences in order, for a ``::uuid[]`` parameter. Only hex digits and
    hyphens pass, and the cast checks each id."""
    joined = ",".join(dict.fromkeys(ids))
    if joined and not _UUIDS.fullmatch(joined):
        raise ValueError("ids are UUIDs")
    return f"{{{joined}}}"


def text_array(values: Iterable[str]) -> str:
    """Strings, as they are and in order, for a ``::text[]`` parameter: each element quoted,
    with its backslashes and double quotes escaped."""
    quoted = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values)
    return "{" + ",".join(quoted) + "}"


def int_array(values: Iterable[int]) -> str:
    """Integers, in order, for an ``::int[]`` parameter."""
    return "{" + ",".join(str(int(value)) for value in values) + "}"
