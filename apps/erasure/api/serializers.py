from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.erasure.deletion import DELETABLE_TYPES, MAX_ROWS
from apps.jobs.api.serializers import JobOutputSerializer
from apps.memory.api.serializers import FiltersField
from apps.platform.serializers import StrictFieldsSerializer
from apps.tenancy.api.serializers import SubjectOutputSerializer


class ErasureAcceptedSerializer(serializers.Serializer[Any]):
    erasure_request_id = serializers.UUIDField(source="id")
    job_id = serializers.UUIDField(allow_null=True, help_text="Follow it at /v1/jobs/{id}.")
    status = serializers.CharField()


class ErasureRequestSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    kind = serializers.CharField()
    status = serializers.CharField()
    subject_id = serializers.UUIDField(allow_null=True)
    purposes = serializers.ListField(child=serializers.CharField())
    job_id = serializers.UUIDField(allow_null=True)
    requested_by = serializers.CharField()
    requested_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="Erased so far, per store.")
    receipt = serializers.DictField(
        allow_null=True, help_text="Once completed: ids, counts and times; its SHA-256 is receipt_sha256."
    )
    receipt_sha256 = serializers.SerializerMethodField()

    def get_receipt_sha256(self, request: Any) -> str | None:
        return request.receipt_sha256 or None


class RowRefSerializer(StrictFieldsSerializer):
    type = serializers.ChoiceField(
        choices=DELETABLE_TYPES, error_messages={"invalid_choice": f"type must be one of {list(DELETABLE_TYPES)}."}
    )
    id = serializers.UUIDField()


class MemoryDeleteSerializer(StrictFieldsSerializer):
    ids = serializers.ListField(
        child=RowRefSerializer(),
        allow_empty=False,
        required=False,
        help_text=f"The rows to delete, as {{type, id}}; at most {MAX_ROWS} per call (page beyond that).",
    )
    filters = FiltersField(
        required=False,
        help_text="Or: delete every row the listing with these filters shows (superseded rows included; add "
        f'{{"current": true}} for current rows only). Up to {MAX_ROWS} matches are deleted in the call; more, '
        "by a job (202).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("ids" in attrs) == ("filters" in attrs):
            raise serializers.ValidationError(
                "Give exactly one of ids (the rows, by {type, id}) or filters (the rows that match them)."
            )
        return attrs


class MemoryDeleteAcceptedSerializer(serializers.Serializer[Any]):
    job = JobOutputSerializer(help_text="Deletes the matching rows in batches; follow it at /v1/jobs/{id}.")


class RelinkSerializer(serializers.Serializer[Any]):
    type = serializers.CharField()
    id = serializers.UUIDField(help_text="A surviving row that superseded a deleted one.")
    supersedes = serializers.UUIDField(allow_null=True, help_text="What it supersedes now: the nearest older survivor.")


class DeletionReceiptSerializer(serializers.Serializer[Any]):
    subject_id = serializers.UUIDField()
    deleted = RowRefSerializer(many=True, help_text="Every row deleted (a document's passages included).")
    not_found = RowRefSerializer(many=True, help_text="Ids named that the subject has no row of; nothing done.")
    counts = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Removed per store, from the graph (graph_frames, graph_anchors, graph_edges), the index beside "
        "it (anchor_rows, anchor_frames, anchor_vectors) and object storage (objects).",
    )
    relinked = RelinkSerializer(many=True)
    deleted_at = serializers.DateTimeField()
    receipt_sha256 = serializers.CharField(help_text="SHA-256 of the receipt's canonical JSON (without this field).")


def _rows(help_text: str) -> serializers.ListField:
    return serializers.ListField(child=serializers.DictField(), help_text=help_text)


class ExportGraphSerializer(serializers.Serializer[Any]):
    vertices = _rows("The subject's anchors, frames and other vertices, with their properties.")
    edges = _rows("Every edge touching them.")


class SubjectExportSerializer(serializers.Serializer[Any]):
    """Everything stored about a subject. Rows are the stored columns by name (free-form
    objects: each table's own), so the export keeps every field, new ones included."""

    format = serializers.CharField(help_text="The export format's name and version.")
    exported_at = serializers.DateTimeField()
    includes_secrets = serializers.BooleanField(help_text="Vault values and document bytes are included.")
    subject = serializers.DictField(help_text="The subject's row.")
    memories = serializers.DictField(
        child=serializers.ListField(child=serializers.DictField()),
        help_text="Store name → its rows, superseded ones included, oldest first.",
    )
    vault = _rows("Vault entries: captions, and values when includes_secrets.")
    graph = ExportGraphSerializer()
    records = serializers.DictField(
        child=serializers.ListField(child=serializers.DictField()),
        help_text="Every other table's rows that reference the subject, by table.",
    )
    audit_entries = _rows("Audit entries about the subject.")
    erasure_requests = _rows("The subject's erasure requests.")


class SubjectUpdatedSerializer(SubjectOutputSerializer):
    graph_reindex_job_id = serializers.UUIDField(
        allow_null=True,
        help_text="The job re-indexing the subject's graph when the change renamed the subject (ADR 0096): "
        "until it finishes, searches of the subject are direct and say `fallback`. Null otherwise.",
    )
