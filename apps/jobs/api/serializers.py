from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.jobs.models import Job


class JobOutputSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    kind = serializers.CharField()
    status = serializers.ChoiceField(choices=Job.Status.choices)
    subject_id = serializers.UUIDField(allow_null=True)
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    error = serializers.SerializerMethodField()
    result = serializers.DictField()

    def get_error(self, job: Job) -> dict[str, str] | None:
        return {"code": job.error_code, "message": job.error_message} if job.error_code else None


class JobListQuerySerializer(serializers.Serializer[dict[str, Any]]):
    status = serializers.ChoiceField(choices=Job.Status.choices, required=False)
    kind = serializers.CharField(max_length=64, required=False, help_text="e.g. memory.batch_ingest, erasure.subject.")
    subject = serializers.CharField(max_length=255, required=False, help_text="The subject's external_id.")
    created_after = serializers.DateTimeField(required=False, help_text="Jobs created at or after (ISO 8601).")
    created_before = serializers.DateTimeField(required=False, help_text="Jobs created before (ISO 8601).")
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    cursor = serializers.CharField(required=False, max_length=300)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        after, before = attrs.get("created_after"), attrs.get("created_before")
        if after and before and after >= before:
            raise serializers.ValidationError("created_after must be earlier than created_before.")
        return attrs


class JobPageSerializer(serializers.Serializer[Any]):
    results = JobOutputSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)
