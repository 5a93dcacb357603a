"""The request parsers of every /v1 view: JSON (and form fields) that Postgres and UTF-8 can hold.

JSON may escape characters that no Postgres text or jsonb value can store (``\\u0000``) and
unpaired UTF-16 surrogates (``\\ud800``) that no UTF-8 encoder accepts; it may nest deeper
than Python's decoder recurses, and write numbers (``1e999999``) no float holds, which Python
reads as infinity and a text field would then store as ``"inf"``. Left in, they reach the
database or an encoder deep inside a service and become a 500 (or a wrong value); here they
are a 400 that names the offending place, before any view code runs. The memory write view's
multipart form fields get the same check.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, JSONParser, MultiPartParser

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
MAX_JSON_DEPTH = 64


def unstorable_path(value: Any, path: str = "$", depth: int = 0) -> str | None:
    """The JSON path of the first string (key or value) holding NUL or an unpaired surrogate."""
    if depth > MAX_JSON_DEPTH:
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


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large for a 64-bit float; send a smaller number or a string")
    return value


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is not valid JSON; send a number or null")


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        try:
            encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
            data = json.loads(stream.read().decode(encoding), parse_constant=_no_constant, parse_float=_finite_float)
        except RecursionError:
            raise ParseError(
                f"JSON parse error - the body nests deeper than {MAX_JSON_DEPTH} levels; send a flatter document."
            ) from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        where = unstorable_path(data)
        if where is not None:
            raise ParseError(
                f"JSON parse error - {where} holds a NUL character (\\u0000) or an unpaired surrogate, "
                f"or nests deeper than {MAX_JSON_DEPTH} levels; send valid Unicode text."
            )
        return data


class StrictMultiPartParser(MultiPartParser):
    """Multipart forms whose text fields hold no NUL character (files are the view's to check)."""

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> DataAndFiles[Any, Any]:
        parsed = super().parse(stream, media_type, parser_context)
        for name, values in parsed.data.lists():
            if _UNSTORABLE.search(str(name)) or any(_UNSTORABLE.search(str(v)) for v in values):
                raise ParseError(
                    f"Multipart parse error - the form field {name!r} holds a NUL character; send text without it."
                )
        return parsed
