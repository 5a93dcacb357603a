from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import serializers

MAX_MESSAGES = 200
MAX_MESSAGE_CHARS = 32_000
MAX_TEXT_CHARS = 100_000
MAX_CHUNKS = 500
ROLES = ("user", "assistant", "system", "tool")


class MessageSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.CharField(max_length=200, required=False, help_text="Your id for the message (provenance).")
    role = serializers.ChoiceField(
        choices=ROLES, error_messages={"invalid_choice": f"role must be one of {list(ROLES)}."}
    )
    content = serializers.CharField(max_length=MAX_MESSAGE_CHARS, trim_whitespace=True)
    name = serializers.CharField(max_length=200, required=False, help_text="The speaker's display name.")
    timestamp = serializers.DateTimeField(required=False, help_text="When it was said (ISO 8601); default now.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs.setdefault("timestamp", timezone.now())
        return attrs


class ChunkSerializer(serializers.Serializer[dict[str, Any]]):
    """Chat messages, or plain text (stored as one user message)."""

    messages = serializers.ListField(child=MessageSerializer(), required=False, max_length=MAX_MESSAGES)
    text = serializers.CharField(max_length=MAX_TEXT_CHARS, required=False, trim_whitespace=True)
    timestamp = serializers.DateTimeField(required=False, help_text="For text: when it was written.")
    session_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        has_messages, has_text = bool(attrs.get("messages")), bool(attrs.get("text"))
        if has_messages == has_text:
            raise serializers.ValidationError("Send exactly one of 'messages' (a non-empty list) or 'text'.")
        if has_text:
            attrs["messages"] = [
                {
                    "role": "user",
                    "content": attrs.pop("text"),
                    "timestamp": attrs.pop("timestamp", None) or timezone.now(),
                }
            ]
            attrs["source_kind"] = "text"
        else:
            attrs["source_kind"] = "chat"
        return attrs


class DocumentSerializer(serializers.Serializer[dict[str, Any]]):
    file = serializers.FileField()
    title = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    session_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class BatchSerializer(serializers.Serializer[dict[str, Any]]):
    chunks = serializers.ListField(child=ChunkSerializer(), min_length=1, max_length=MAX_CHUNKS)
    session_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class WrittenRecordSerializer(serializers.Serializer[Any]):
    type = serializers.CharField(source="memory_type")
    id = serializers.UUIDField()


class WriteResultSerializer(serializers.Serializer[Any]):
    chunk_id = serializers.UUIDField()
    routed_types = serializers.ListField(child=serializers.CharField())
    records = WrittenRecordSerializer(many=True)
    job_id = serializers.UUIDField(allow_null=True)


class BatchAcceptedSerializer(serializers.Serializer[Any]):
    batch_id = serializers.UUIDField(source="id")
    job_id = serializers.UUIDField()
    chunks_total = serializers.IntegerField()


class MemoryListQuerySerializer(serializers.Serializer[dict[str, Any]]):
    type = serializers.ChoiceField(choices=("core", "episodic", "semantic", "procedural", "resource"))
    session_id = serializers.CharField(max_length=200, required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)
    event_after = serializers.DateTimeField(required=False)
    event_before = serializers.DateTimeField(required=False)
    include_superseded = serializers.BooleanField(required=False, default=False)
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    cursor = serializers.CharField(required=False, max_length=200)


class SearchInputSerializer(serializers.Serializer[dict[str, Any]]):
    query = serializers.CharField(max_length=2000)
    limit = serializers.IntegerField(min_value=1, max_value=50, default=10)


class _Provenance(serializers.Serializer[Any]):
    source_kind = serializers.CharField()
    session_id = serializers.CharField()
    chunk_id = serializers.UUIDField()
    source_message_ids = serializers.ListField(child=serializers.CharField())


class MemoryRecordSerializer(serializers.Serializer[Any]):
    """Any store's row: common fields, provenance, and the type's own fields under ``content``."""

    id = serializers.UUIDField()
    type = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    supersedes = serializers.UUIDField(source="supersedes_id", allow_null=True)
    provenance = serializers.SerializerMethodField()
    content = serializers.SerializerMethodField()
    index_status = serializers.CharField(required=False)

    FIELDS: dict[str, tuple[str, ...]] = {
        "CoreBlock": ("label", "value", "char_limit"),
        "EpisodicEvent": (
            "actor",
            "event_type",
            "summary",
            "details",
            "event_time",
            "event_time_precision",
            "mention_time",
            "status",
        ),
        "SemanticItem": ("name", "attribute", "summary", "details", "source"),
        "ProceduralItem": ("title", "summary", "steps", "domain"),
        "ResourceItem": ("title", "summary", "resource_type", "content_type", "size_bytes", "sha256", "extracted_text"),
    }
    TYPES = {
        "CoreBlock": "core",
        "EpisodicEvent": "episodic",
        "SemanticItem": "semantic",
        "ProceduralItem": "procedural",
        "ResourceItem": "resource",
    }

    def get_type(self, row: Any) -> str:
        return self.TYPES[type(row).__name__]

    def get_provenance(self, row: Any) -> dict[str, Any]:
        return dict(_Provenance(row).data)

    def get_content(self, row: Any) -> dict[str, Any]:
        content: dict[str, Any] = {}
        for name in self.FIELDS[type(row).__name__]:
            value = getattr(row, name)
            content[name] = value.isoformat() if hasattr(value, "isoformat") else value
        return content

    def to_representation(self, row: Any) -> dict[str, Any]:
        data = dict(super().to_representation(row))
        if not hasattr(row, "index_status"):
            data.pop("index_status", None)
        return data


class MemoryPageSerializer(serializers.Serializer[Any]):
    results = MemoryRecordSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class MemoryUpdateSerializer(serializers.Serializer[dict[str, Any]]):
    changes = serializers.DictField(help_text="Field → new value; the old row stays, superseded.")


class SearchHitSerializer(serializers.Serializer[Any]):
    record = MemoryRecordSerializer(source="row")
    score = serializers.FloatField()
    vector_rank = serializers.IntegerField(allow_null=True)
    keyword_rank = serializers.IntegerField(allow_null=True)


class VaultEntrySerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    entry_type = serializers.CharField()
    sensitivity = serializers.CharField()
    caption = serializers.CharField()
    source = serializers.CharField()  # type: ignore[assignment]  # the entry's field, not DRF's Field.source
    created_at = serializers.DateTimeField()


class VaultValueSerializer(VaultEntrySerializer):
    value = serializers.CharField()
