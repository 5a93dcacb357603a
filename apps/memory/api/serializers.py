from __future__ import annotations

import json
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.jobs.api.serializers import JobOutputSerializer
from apps.memory import filters, metadata
from apps.platform.serializers import StrictFieldsSerializer

MAX_MESSAGES = 200
MAX_TEXT_CHARS = 100_000
MAX_MESSAGE_CHARS = MAX_TEXT_CHARS  # a pasted document is a message too
MAX_CHUNKS = 500
ROLES = ("user", "assistant", "system", "tool")
# Fields clients bring from other memory APIs (mem0's add), and where they belong here.
WRITE_FIELD_HINTS = {
    "user_id": "the subject is in the path: POST /v1/subjects/{external_id}/memories (an unknown one is created)",
    "agent_id": "the subject is in the path: POST /v1/subjects/{external_id}/memories",
    "run_id": "use session_id to group the messages of one conversation",
    "filters": "filters apply to reads: GET /v1/subjects/{external_id}/memories and POST …/search",
    "infer": "every write is routed and written by the memory manager; there is no raw mode",
}


METADATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "maxProperties": metadata.MAX_KEYS,
    "additionalProperties": {
        "oneOf": [
            {"type": "string"},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}},
        ],
        "nullable": True,
    },
    "description": (
        f"Your tags for the rows this write produces: string keys, each a scalar or a list of scalars; "
        f"at most {metadata.MAX_KEYS} keys and {metadata.MAX_BYTES} bytes of JSON. Filter on them as metadata.<key>."
    ),
    "example": {"project": "apollo", "tags": ["travel", "2024"], "priority": 2},
}
FILTERS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": True,
    "description": (
        'A filter tree: {"and": [...]}, {"or": [...]}, {"not": {...}}, or conditions {field: value} / '
        "{field: {operator: value}} over metadata.<key> and the row fields "
        f"{list(filters.ROW_FIELDS)}; operators {list(filters.OPERATORS)}. "
        f"At most {filters.MAX_DEPTH} levels and {filters.MAX_CONDITIONS} conditions."
    ),
    "example": {"and": [{"metadata.project": "apollo"}, {"created_at": {"gte": "2024-07-01"}}]},
}


@extend_schema_field(METADATA_SCHEMA)
class MetadataField(serializers.Field):  # type: ignore[type-arg]
    """A write's ``metadata`` (apps.memory.metadata); ``json_text`` where it comes as the JSON
    text of a form field."""

    def __init__(self, *, json_text: bool = False, **kwargs: Any) -> None:
        self.json_text = json_text
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        try:
            return metadata.validate_metadata(_decoded(data, "metadata") if self.json_text else data)
        except metadata.MetadataError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field(FILTERS_SCHEMA)
class FiltersField(serializers.Field):  # type: ignore[type-arg]
    """A read's ``filters`` (apps.memory.filters) as a JSON object; ``json_text`` in a query
    string, as its JSON text."""

    def __init__(self, *, json_text: bool = False, **kwargs: Any) -> None:
        self.json_text = json_text
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> filters.Filter:
        try:
            return filters.parse_filters(_decoded(data, "filters") if self.json_text else data)
        except filters.FilterError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field(
    {
        "type": "string",
        "description": f"metadata as the JSON text of an object ({METADATA_SCHEMA['description']})",
        "example": json.dumps(METADATA_SCHEMA["example"]),
    }
)
class MetadataTextField(MetadataField):
    """``metadata`` in a multipart form: the JSON text of the object."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(json_text=True, **kwargs)


@extend_schema_field(
    {
        "type": "string",
        "description": f"filters as the JSON text of the tree ({FILTERS_SCHEMA['description']})",
        "example": json.dumps(FILTERS_SCHEMA["example"]),
    }
)
class FiltersTextField(FiltersField):
    """``filters`` in a query string: the JSON text of the tree."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(json_text=True, **kwargs)


def _decoded(data: Any, name: str) -> Any:
    if not isinstance(data, str):
        raise serializers.ValidationError(f"{name} is the JSON text of an object here.")
    try:
        return json.loads(data)
    except ValueError as exc:
        raise serializers.ValidationError(f"{name} is not valid JSON ({exc.args[0]}).") from exc


class MessageSerializer(StrictFieldsSerializer):
    unknown_field_hints = {"metadata": "metadata is a field of the write (beside messages), for all its rows"}

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


class ChunkSerializer(StrictFieldsSerializer):
    """Chat messages, or plain text (stored as one user message)."""

    unknown_field_hints = WRITE_FIELD_HINTS

    messages = serializers.ListField(child=MessageSerializer(), required=False, max_length=MAX_MESSAGES)
    text = serializers.CharField(max_length=MAX_TEXT_CHARS, required=False, trim_whitespace=True)
    timestamp = serializers.DateTimeField(required=False, help_text="For text: when it was written.")
    session_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    metadata = MetadataField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        has_messages, has_text = bool(attrs.get("messages")), bool(attrs.get("text"))
        if has_messages == has_text:
            raise serializers.ValidationError("Send exactly one of 'messages' (a non-empty list) or 'text'.")
        ids = [message["id"] for message in attrs.get("messages", []) if "id" in message]
        repeated = sorted({message_id for message_id in ids if ids.count(message_id) > 1})
        if repeated:
            raise serializers.ValidationError(
                {"messages": [f"Message ids must be unique within a write; repeated: {repeated}."]}
            )
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


def _subject_kind() -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=("user", "agent"),
        required=False,
        default="user",
        help_text="The subject's kind when this write creates it (an unknown external_id); ignored otherwise.",
    )


class ChunkWriteSerializer(ChunkSerializer):
    """A chunk written on its own: it may create its subject."""

    subject_kind = _subject_kind()


class DocumentSerializer(StrictFieldsSerializer):
    file = serializers.FileField()
    subject_kind = _subject_kind()
    title = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    session_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    metadata = MetadataTextField(required=False)


class BatchSerializer(StrictFieldsSerializer):
    unknown_field_hints = WRITE_FIELD_HINTS

    chunks = serializers.ListField(child=ChunkSerializer(), min_length=1, max_length=MAX_CHUNKS)
    session_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    metadata = MetadataField(required=False, help_text="For each chunk without its own metadata.")
    subject_kind = _subject_kind()


class WrittenRecordSerializer(serializers.Serializer[Any]):
    type = serializers.CharField(source="memory_type")
    id = serializers.UUIDField()


class AcceptedWriteSerializer(serializers.Serializer[Any]):
    """The answer of a write (ADR 0054). 202: ``records`` are the rows stored in the request
    (each message's episodic row, resources and passages, vault entries), ``routed_types``
    their types, and ``job`` the job that completes the write. 201 (``wait=true``, the job
    finished): ``records`` are every row of the write and ``routed_types`` the router's."""

    chunk_id = serializers.UUIDField()
    routed_types = serializers.ListField(child=serializers.CharField())
    records = WrittenRecordSerializer(many=True)
    job_id = serializers.UUIDField()
    job = JobOutputSerializer()


class BatchAcceptedSerializer(serializers.Serializer[Any]):
    batch_id = serializers.UUIDField(source="id")
    job_id = serializers.UUIDField()
    chunks_total = serializers.IntegerField()


class WaitedBatchSerializer(BatchAcceptedSerializer):
    """The answer of a batch; ``job`` and ``records`` (stored so far) only with ``?wait=true``."""

    job = JobOutputSerializer(required=False)
    records = WrittenRecordSerializer(many=True, required=False)


class MemoryListQuerySerializer(serializers.Serializer[dict[str, Any]]):
    type = serializers.ChoiceField(
        choices=("core", "episodic", "semantic", "procedural", "resource"),
        required=False,
        help_text="One store; without it, every store (each row says its type).",
    )
    session_id = serializers.CharField(max_length=200, required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)
    event_after = serializers.DateTimeField(required=False)
    event_before = serializers.DateTimeField(required=False)
    include_superseded = serializers.BooleanField(required=False, default=False)
    filters = FiltersTextField(required=False)
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    cursor = serializers.CharField(required=False, max_length=300)


class SearchInputSerializer(StrictFieldsSerializer):
    query = serializers.CharField(max_length=2000)
    limit = serializers.IntegerField(min_value=1, max_value=50, default=10)
    token_budget = serializers.IntegerField(
        min_value=1,
        max_value=100_000,
        required=False,
        help_text="At most this many tokens of content in all hits; for resources, of their passages "
        "(default: every hit, and the best passage of each resource).",
    )
    filters = FiltersField(required=False)


class _Provenance(serializers.Serializer[Any]):
    source_kind = serializers.CharField()
    session_id = serializers.CharField()
    chunk_id = serializers.UUIDField()
    source_message_ids = serializers.ListField(child=serializers.CharField())


class _PassagePosition(serializers.Serializer[Any]):
    id = serializers.UUIDField(help_text="The resource the row is a passage of.")
    start = serializers.IntegerField(allow_null=True, help_text="Character offset in the resource's text.")
    end = serializers.IntegerField(allow_null=True)


class _ProvenanceOutput(_Provenance):
    resource = _PassagePosition(allow_null=True, help_text="Where the row sits in a resource, if it is a passage.")


class MemoryRecordSerializer(serializers.Serializer[Any]):
    """Any store's row: common fields, provenance, and the type's own fields under ``content``."""

    id = serializers.UUIDField()
    type = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    supersedes = serializers.UUIDField(source="supersedes_id", allow_null=True)
    current = serializers.BooleanField(source="currency.current", help_text="No later row supersedes this one.")
    superseded_by = serializers.UUIDField(
        source="currency.superseded_by",
        allow_null=True,
        help_text="The row that replaced this one: a row of the same store, the turn that stated the new value "
        "(a turn whose facts were all replaced), or the resource of the document version that replaced this "
        "passage or the fact read from it (ADR 0101).",
    )
    valid_from = serializers.DateTimeField(
        source="currency.valid_from", allow_null=True, help_text="Event time, else mention time."
    )
    valid_to = serializers.DateTimeField(
        source="currency.valid_to", allow_null=True, help_text="The valid_from of the row that replaced this one."
    )
    provenance = serializers.SerializerMethodField()
    metadata = MetadataField(help_text="The tags of the write that produced the row.")
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

    @extend_schema_field(serializers.ChoiceField(choices=("core", "episodic", "semantic", "procedural", "resource")))
    def get_type(self, row: Any) -> str:
        return self.TYPES[type(row).__name__]

    # Left out of a resource found by search: its excerpts are the text it returns.
    EXCERPTED = frozenset({"summary", "extracted_text"})

    @extend_schema_field(_ProvenanceOutput)
    def get_provenance(self, row: Any) -> dict[str, Any]:
        provenance = dict(_Provenance(row).data)
        resource_id = getattr(row, "resource_id", None)  # a passage of a resource: which, and where
        provenance["resource"] = (
            {"id": str(resource_id), "start": row.resource_start, "end": row.resource_end} if resource_id else None
        )
        return provenance

    @extend_schema_field(
        serializers.DictField(help_text="The store's own fields (e.g. episodic: actor, summary, event_time, ...).")
    )
    def get_content(self, row: Any) -> dict[str, Any]:
        content: dict[str, Any] = {}
        excerpted = self.context.get("excerpted", False)
        for name in self.FIELDS[type(row).__name__]:
            if excerpted and name in self.EXCERPTED:
                continue
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


class ExcerptSerializer(serializers.Serializer[Any]):
    passage_id = serializers.UUIDField(allow_null=True, help_text="The passage row (episodic); null for a cut.")
    start = serializers.IntegerField(help_text="Character offset in the resource's text.")
    end = serializers.IntegerField()
    text = serializers.CharField()
    tokens = serializers.IntegerField()
    truncated = serializers.BooleanField(help_text="The passage was cut to fit the token budget.")


class ResourceSearchHitSerializer(SearchHitSerializer):
    """A resource hit: the record without its whole text, and the passages that answer."""

    excerpts = ExcerptSerializer(many=True, required=False, help_text="Resource hits only.")


class SearchHitPageSerializer(serializers.Serializer[Any]):
    """One store's hits, best first: one page, so ``next_cursor`` is always null."""

    results = ResourceSearchHitSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class VaultEntrySerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    entry_type = serializers.CharField()
    sensitivity = serializers.CharField()
    caption = serializers.CharField()
    source = serializers.CharField()  # type: ignore[assignment]  # the entry's field, not DRF's Field.source
    created_at = serializers.DateTimeField()
    metadata = MetadataField(help_text="The tags of the write that produced the entry.")


class VaultValueSerializer(VaultEntrySerializer):
    value = serializers.CharField()
