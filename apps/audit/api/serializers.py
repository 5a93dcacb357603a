from __future__ import annotations

from typing import Any

from rest_framework import serializers

MAX_PAGE = 1000


class AuditLogQuerySerializer(serializers.Serializer[dict[str, Any]]):
    since = serializers.DateTimeField(required=False, help_text="Entries created at or after (ISO 8601).")
    until = serializers.DateTimeField(required=False, help_text="Entries created before (ISO 8601).")
    limit = serializers.IntegerField(
        min_value=1,
        max_value=MAX_PAGE,
        required=False,
        help_text="With a limit: one JSON page. Without: the whole range as JSON lines, streamed.",
    )
    after_sequence = serializers.IntegerField(
        min_value=0, required=False, default=0, help_text="Entries after this sequence number (resume a stream)."
    )
    cursor = serializers.CharField(
        required=False, max_length=300, help_text="`next_cursor` of the previous page (with `limit`)."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("since") and attrs.get("until") and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError("since must be earlier than until.")
        return attrs


class AuditEntrySerializer(serializers.Serializer[Any]):
    """Every field the hash chain covers, so a copy can be verified away from the service."""

    sequence = serializers.IntegerField()
    organization_id = serializers.UUIDField()
    created_at = serializers.DateTimeField()
    actor = serializers.CharField()
    action = serializers.CharField()
    subject_id = serializers.UUIDField(allow_null=True)
    target_ids = serializers.ListField(child=serializers.CharField())
    request_id = serializers.CharField()
    previous_hash = serializers.CharField()
    entry_hash = serializers.CharField()


class AuditLogPageSerializer(serializers.Serializer[Any]):
    results = AuditEntrySerializer(many=True)
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Pass it back as `cursor` for the next page; null on the last page."
    )


class BrokenEntrySerializer(serializers.Serializer[Any]):
    sequence = serializers.IntegerField()
    id = serializers.IntegerField(allow_null=True)
    action = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField(allow_null=True)


class AuditChainStatusSerializer(serializers.Serializer[Any]):
    status = serializers.ChoiceField(choices=("intact", "broken"))
    entries = serializers.IntegerField()
    head_sequence = serializers.IntegerField(allow_null=True)
    head_hash = serializers.CharField(allow_null=True)
    first_broken = BrokenEntrySerializer(allow_null=True)
