from __future__ import annotations

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.jobs.api.serializers import JobOutputSerializer
from apps.jobs.selectors import job_get
from apps.tenancy.api.base import OrganizationApiView


class JobDetailApi(OrganizationApiView):
    required_scopes = {"GET": {"memories:read"}}

    @extend_schema(responses=JobOutputSerializer, operation_id="jobs_get")
    def get(self, request: Request, job_id: uuid.UUID) -> Response:
        return Response(JobOutputSerializer(job_get(job_id=job_id)).data)
