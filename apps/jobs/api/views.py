from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.jobs.models import Job
from apps.jobs.selectors import JobFilter, job_get, job_list
from apps.tenancy.api.base import OrganizationApiView
from apps.tenancy.api.cursors import decode_cursor, encode_cursor
from apps.tenancy.selectors import subject_get

READ = {"memories:read"}


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


class JobListApi(OrganizationApiView):
    required_scopes = {"GET": READ}

    @extend_schema(
        parameters=[JobListQuerySerializer],
        responses=JobPageSerializer,
        operation_id="jobs_list",
        description="The organization's jobs, newest first; pass `next_cursor` back as `cursor` for the next page.",
    )
    def get(self, request: Request) -> Response:
        query = JobListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params: dict[str, Any] = query.validated_data
        limit = params["limit"]
        subject_id = subject_get(external_id=params["subject"]).id if params.get("subject") else None
        filters = JobFilter(
            status=params.get("status"),
            kind=params.get("kind"),
            subject_id=subject_id,
            created_after=params.get("created_after"),
            created_before=params.get("created_before"),
        )
        before = decode_cursor(params["cursor"]) if params.get("cursor") else None
        page = list(job_list(filters=filters, before=before)[: limit + 1])
        last = page[limit - 1] if len(page) > limit else None
        return Response(
            {
                "results": JobOutputSerializer(page[:limit], many=True).data,
                "next_cursor": encode_cursor(last.created_at, last.id) if last else None,
            }
        )


class JobDetailApi(OrganizationApiView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=JobOutputSerializer, operation_id="jobs_get")
    def get(self, request: Request, job_id: uuid.UUID) -> Response:
        return Response(JobOutputSerializer(job_get(job_id=job_id)).data)
