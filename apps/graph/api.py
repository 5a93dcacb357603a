from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.graph import selectors
from apps.jobs import task_names
from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.memory.api.serializers import MemoryRecordSerializer
from apps.tenancy.api.base import OrganizationApiView, SubjectApiView

READ = {"memories:read"}


class JobAcceptedSerializer(serializers.Serializer[dict[str, str]]):
    job_id = serializers.UUIDField()


class GraphCheckApi(OrganizationApiView):
    """Queue a check that the organization's graph answers; follow it at ``/v1/jobs/{id}``."""

    required_scopes = {"POST": {"admin"}}
    audit_actions = {"POST": "graph.check"}

    @extend_schema(request=None, responses={202: JobAcceptedSerializer}, operation_id="graph_check")
    def post(self, request: Request) -> Response:
        job = job_create(organization_id=self.organization_id, kind="graph.check")
        job_enqueue_on_commit(job=job, task_name=task_names.GRAPH_CHECK)
        self.audit_targets = [str(job.id)]
        return Response({"job_id": str(job.id)}, status=202)


class PageQuerySerializer(serializers.Serializer[dict[str, Any]]):
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    cursor = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")
    anchor = serializers.CharField(
        required=False, max_length=300, help_text="Only frames with an arm to this anchor key."
    )


class AnchorSerializer(serializers.Serializer[Any]):
    key = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    aliases = serializers.ListField(child=serializers.CharField())
    mention_count = serializers.IntegerField()
    admission_score = serializers.FloatField()
    episodic_ids = serializers.ListField(child=serializers.CharField())
    semantic_ids = serializers.ListField(child=serializers.CharField())


class FrameSerializer(serializers.Serializer[Any]):
    frame_id = serializers.CharField()
    kind = serializers.CharField()
    predicate = serializers.CharField()
    arms = serializers.SerializerMethodField()
    literals = serializers.DictField(child=serializers.CharField())
    event_time = serializers.CharField(allow_null=True)
    event_time_precision = serializers.CharField(allow_blank=True)
    mention_time = serializers.CharField(allow_null=True)
    status = serializers.CharField()
    citations = serializers.ListField(child=serializers.CharField())

    def get_arms(self, frame: dict[str, Any]) -> list[dict[str, str]]:
        return [{"role": role, "anchor": key} for role, key in frame["arms"]]


class AnchorPageSerializer(serializers.Serializer[Any]):
    results = AnchorSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class FramePageSerializer(serializers.Serializer[Any]):
    results = FrameSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class FrameWithRowsSerializer(serializers.Serializer[Any]):
    frame = FrameSerializer()
    cited_rows = MemoryRecordSerializer(many=True)


class AnchorListApi(SubjectApiView):
    required_scopes = {"GET": READ}
    audit_actions = {"GET": "graph.read"}

    @extend_schema(parameters=[PageQuerySerializer], responses=AnchorPageSerializer, operation_id="graph_anchors_list")
    def get(self, request: Request, external_id: str) -> Response:
        query = PageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        anchors, cursor = selectors.anchors_list(
            subject=self.subject(external_id), after=query.validated_data["cursor"], limit=query.validated_data["limit"]
        )
        return Response({"results": AnchorSerializer(anchors, many=True).data, "next_cursor": cursor})


class FrameListApi(SubjectApiView):
    required_scopes = {"GET": READ}
    audit_actions = {"GET": "graph.read"}

    @extend_schema(parameters=[PageQuerySerializer], responses=FramePageSerializer, operation_id="graph_frames_list")
    def get(self, request: Request, external_id: str) -> Response:
        query = PageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        frames, cursor = selectors.frames_list(
            subject=self.subject(external_id),
            after=params["cursor"],
            limit=params["limit"],
            anchor_key=params.get("anchor"),
        )
        return Response({"results": FrameSerializer(frames, many=True).data, "next_cursor": cursor})


class FrameDetailApi(SubjectApiView):
    required_scopes = {"GET": READ}
    audit_actions = {"GET": "graph.read"}

    @extend_schema(responses=FrameWithRowsSerializer, operation_id="graph_frames_get")
    def get(self, request: Request, external_id: str, frame_id: str) -> Response:
        frame, rows = selectors.frame_get(subject=self.subject(external_id), frame_id=frame_id)
        self.audit_targets = [str(row.id) for row in rows]
        return Response(
            {"frame": FrameSerializer(frame).data, "cited_rows": MemoryRecordSerializer(rows, many=True).data}
        )
