"""Request bodies that refuse fields they do not know.

DRF ignores unknown keys, so a client that sends a field under another product's name (mem0's
``user_id``, ``metadata``) gets a 2xx and finds nothing of it stored. A body with unknown
top-level fields is a 400 whose message names them, with the field to use instead where
there is one; unknown fields of a nested object are reported at their path in the details.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rest_framework import serializers

from apps.platform.errors import ValidationFailed


class StrictFieldsSerializer(serializers.Serializer[dict[str, Any]]):
    # Unknown field → what to do instead, shown with the error.
    unknown_field_hints: ClassVar[dict[str, str]] = {}

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if hasattr(data, "keys"):
            unknown = sorted(str(key) for key in data.keys() if key not in self.fields)
            if unknown:
                self._refuse(unknown)
        validated: dict[str, Any] = super().to_internal_value(data)
        return validated

    def _refuse(self, unknown: list[str]) -> None:
        hints = {name: self.unknown_field_hints.get(name, "not a field of this request") for name in unknown}
        if self.parent is not None:  # nested: DRF reports it at its path
            raise serializers.ValidationError({name: [hint] for name, hint in hints.items()})
        accepted = ", ".join(sorted(self.fields))
        advice = " ".join(f"{name}: {hint}." for name, hint in hints.items() if name in self.unknown_field_hints)
        raise ValidationFailed(
            f"Unknown field{'s' if len(unknown) > 1 else ''} {', '.join(repr(n) for n in unknown)}; "
            f"this request accepts {accepted}. {advice}".strip(),
            details={"unknown_fields": hints},
        )


def page_serializer(name: str, item: type[serializers.BaseSerializer[Any]]) -> type[serializers.Serializer[Any]]:
    """The one shape of every list response (ADR 0040): ``{"results": [...], "next_cursor": ...}``.
    A list that always fits one page still has ``next_cursor`` (null), so a client pages every
    list with the same loop."""
    fields = {
        "results": item(many=True),
        "next_cursor": serializers.CharField(
            allow_null=True, help_text="Pass it back as `cursor` for the next page; null on the last page."
        ),
        "__doc__": f"A page of {item.__name__.removesuffix('Serializer')} items.",
    }
    return type(name, (serializers.Serializer,), fields)


def one_page(items: Any) -> dict[str, Any]:
    """The body of a list that always fits one page."""
    return {"results": items, "next_cursor": None}
