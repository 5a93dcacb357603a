from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.tenancy.api.base import OrganizationApiView


class JobAcceptedSerializer(serializers.Serializer[dict[str, str]]):
    job_id = serializers.UUIDField()


class GraphCheckApi(OrganizationApiView):
    """Queue a check that the organization's graph answers; follow it at ``/v1/jobs/{id}``."""

    required_scopes = {"POST": {"admin"}}
    audit_actions = {"POST": "graph.check"}

    @extend_schema(request=None, responses={202: JobAcceptedSerializer}, operation_id="graph_check")
    def post(self, request: Request) -> Response:
        job = job_create(organization_id=self.organization_id, kind="graph.check")
        job_enqueue_on_commit(job=job, task_name="maintenance.graph.check")
        self.audit_targets = [str(job.id)]
        return Response({"job_id": str(job.id)}, status=202)
