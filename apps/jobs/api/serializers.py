from __future__ import annotations

from rest_framework import serializers

from apps.jobs.models import Job


class JobOutputSerializer(serializers.Serializer[Job]):
    id = serializers.UUIDField()
    kind = serializers.CharField()
    status = serializers.CharField()
    subject_id = serializers.UUIDField(allow_null=True)
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    error = serializers.SerializerMethodField()
    result = serializers.DictField()

    def get_error(self, job: Job) -> dict[str, str] | None:
        return {"code": job.error_code, "message": job.error_message} if job.error_code else None
