from __future__ import annotations

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.jobs.models import Job
from apps.jobs.selectors import job_get
from apps.tenancy.api.base import OrganizationApiView


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


class JobDetailApi(OrganizationApiView):
    required_scopes = {"GET": {"memories:read"}}

    @extend_schema(responses=JobOutputSerializer, operation_id="jobs_get")
    def get(self, request: Request, job_id: uuid.UUID) -> Response:
        return Response(JobOutputSerializer(job_get(job_id=job_id)).data)
