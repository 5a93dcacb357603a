from __future__ import annotations

from typing import Any

from rest_framework import serializers


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
