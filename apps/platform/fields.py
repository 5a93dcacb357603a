"""Serializer fields shared by the API's request bodies."""

from __future__ import annotations

import json
from typing import Any

from rest_framework import serializers


class BoundedDictField(serializers.DictField):
    """A JSON object of at most ``max_bytes`` bytes (compact UTF-8 JSON): a free-form field is
    a note on an object, not a store; a larger one is refused naming the limit."""

    def __init__(self, *, max_bytes: int, **kwargs: Any) -> None:
        self.max_bytes = max_bytes
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> dict[Any, Any]:
        value = super().to_internal_value(data)
        size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
        if size > self.max_bytes:
            raise serializers.ValidationError(
                f"This object is {size} bytes of JSON; at most {self.max_bytes} are accepted. "
                "Keep it to short attributes and write larger content as a memory or a document."
            )
        return value


class JSONBooleanField(serializers.BooleanField):
    """A JSON ``true`` or ``false`` in a request body: 0, 1, "yes" or 0.0 are refused, naming
    what was sent, so a typed client and a hand-written body mean the same thing."""

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        raise serializers.ValidationError(f"Must be true or false (a JSON boolean); got {json.dumps(data)}.")
