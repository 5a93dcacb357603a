from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.dream import selectors, services
from apps.platform.fields import JSONBooleanField
from apps.platform.serializers import page_serializer
from apps.tenancy.api.base import SubjectApiView
from apps.tenancy.api.cursors import decode_cursor, encode_cursor

READ = {"memories:read"}
WRITE = {"memories:write"}


class DreamRequestSerializer(serializers.Serializer[dict[str, Any]]):
    chunk_ids = serializers.ListField(
        child=serializers.UUIDField(),
        max_length=services.MAX_CHUNK_IDS,
        default=list,
        help_text="The chunk ids of the batch just written (the frontier).",
    )
    final = JSONBooleanField(
        default=False, help_text="The last round of an ingestion: also sweeps anchors never used as a source."
    )


class DreamAcceptedSerializer(serializers.Serializer[Any]):
    job_id = serializers.UUIDField()


class DreamMergeSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    anchor_type = serializers.CharField()
    source_key = serializers.CharField()
    source_name = serializers.CharField()
    target_key = serializers.CharField()
    target_name = serializers.CharField()
    cosine = serializers.FloatField()
    decided_by = serializers.CharField()
    frames_rekeyed = serializers.IntegerField()
    frames_united = serializers.IntegerField()
    job_id = serializers.UUIDField(allow_null=True)
    created_at = serializers.DateTimeField()
    undone_at = serializers.DateTimeField(allow_null=True)


class MergeQuerySerializer(serializers.Serializer[dict[str, Any]]):
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    cursor = serializers.CharField(required=False, max_length=300)


class DreamApi(SubjectApiView):
    """Queue a semantic AutoDream round over chunks just written; follow it at ``/v1/jobs/{id}``
    (its result: pairs considered, verified, merged, rejected, cached, skipped by cap)."""

    required_scopes = {"POST": WRITE}
    audit_actions = {"POST": "dream.request"}

    @extend_schema(
        request=DreamRequestSerializer, responses={202: DreamAcceptedSerializer}, operation_id="dream_round_create"
    )
    def post(self, request: Request, external_id: str) -> Response:
        subject = self.subject(external_id)
        payload = DreamRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        job = services.dream_request(
            subject=subject, chunk_ids=payload.validated_data["chunk_ids"], final=payload.validated_data["final"]
        )
        self.audit_targets = [str(job.id)]
        return Response({"job_id": str(job.id)}, status=202)


class DreamMergeListApi(SubjectApiView):
    required_scopes = {"GET": READ}
    audit_actions = {"GET": "dream.merges.list"}

    @extend_schema(
        parameters=[MergeQuerySerializer],
        responses=page_serializer("DreamMergePage", DreamMergeSerializer),
        operation_id="dream_merges_list",
        description="The subject's merges, newest first; pass `next_cursor` back as `cursor` for the next page.",
    )
    def get(self, request: Request, external_id: str) -> Response:
        query = MergeQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        limit = params["limit"]
        before = decode_cursor(params["cursor"]) if params.get("cursor") else None
        merges = list(selectors.dream_merges_list(subject=self.subject(external_id), limit=limit + 1, before=before))
        last = merges[limit - 1] if len(merges) > limit else None
        self.audit_targets = [str(m.id) for m in merges[:limit]]
        return Response(
            {
                "results": DreamMergeSerializer(merges[:limit], many=True).data,
                "next_cursor": encode_cursor(last.created_at, last.id) if last else None,
            }
        )
