from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.jobs.api.serializers import JobListQuerySerializer, JobOutputSerializer, JobPageSerializer
from apps.jobs.selectors import JobFilter, job_get, job_list
from apps.tenancy.api.base import OrganizationApiView
from apps.tenancy.api.cursors import decode_cursor, encode_cursor
from apps.tenancy.selectors import subject_get

READ = {"memories:read"}


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
