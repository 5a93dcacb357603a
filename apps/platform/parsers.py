"""The JSON parser of every /v1 view: JSON whose strings Postgres and UTF-8 can hold.

JSON may escape characters that no Postgres text or jsonb value can store (``\\u0000``) and
unpaired UTF-16 surrogates (``\\ud800``) that no UTF-8 encoder accepts. Left in, they reach
the database or an encoder deep inside a service and become a 500; here they are a 400 that
names the offending place, before any view code runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_MAX_DEPTH = 64


def unstorable_path(value: Any, path: str = "$", depth: int = 0) -> str | None:
    """The JSON path of the first string (key or value) holding NUL or an unpaired surrogate."""
    if depth > _MAX_DEPTH:
        return path
    if isinstance(value, str):
        return path if _UNSTORABLE.search(value) else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if _UNSTORABLE.search(str(key)):
                return f"{path} (a key)"
            found = unstorable_path(item, f"{path}.{key}", depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = unstorable_path(item, f"{path}[{index}]", depth + 1)
            if found:
                return found
    return None


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        where = unstorable_path(data)
        if where is not None:
            raise ParseError(
                f"JSON parse error - {where} holds a NUL character (\\u0000) or an unpaired surrogate, "
                f"or nests deeper than {_MAX_DEPTH} levels; send valid Unicode text."
            )
        return data
