"""The procedural memory API: task sessions, skills, skill search, feedback, reverting a change."""

from __future__ import annotations

import uuid

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.platform.errors import NotFound
from apps.platform.serializers import one_page, page_serializer
from apps.procedural import evolution_store, selectors, services
from apps.procedural.api.serializers import (
    FeedbackAcceptedSerializer,
    FeedbackInputSerializer,
    SessionInputSerializer,
    SessionWrittenSerializer,
    SkillDetailSerializer,
    SkillEventSerializer,
    SkillListQuerySerializer,
    SkillRetrievalSerializer,
    SkillSearchInputSerializer,
    SkillSerializer,
    SkillVersionSerializer,
)
from apps.providers.registry import query_embedder
from apps.tenancy.api.base import OrganizationApiView, SubjectApiView

READ = {"memories:read"}
WRITE = {"memories:write"}


class SessionCreateApi(SubjectApiView):
    """A task session (and optionally its SCEC) to learn skills from; needs ``learn_skills``."""

    required_scopes = {"POST": WRITE}
    audit_actions = {"POST": "procedural.session.write"}

    @extend_schema(
        request=SessionInputSerializer, responses={201: SessionWrittenSerializer}, operation_id="skills_sessions_create"
    )
    def post(self, request: Request, external_id: str) -> Response:
        subject = self.subject(external_id)
        payload = SessionInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        written = services.session_create(
            subject=subject,
            task=data["task"],
            domain=data["domain"],
            steps=data["steps"],
            final_output=data["final_output"],
            outcome=data["outcome"],
            scec=data["scec"],
        )
        self.audit_targets = [str(written.session.id)]
        scec = written.scec
        return Response(
            {
                "id": str(written.session.id),
                "status": written.session.status,
                "scec": None
                if scec is None
                else {
                    "id": str(scec.id),
                    "content_hash": scec.content_hash,
                    "stored": "object_storage" if scec.object_key else "inline",
                    "size_bytes": scec.size_bytes,
                },
                "pending_sessions": written.pending_sessions,
                "dream_job_id": str(written.dream_job.id) if written.dream_job else None,
            },
            status=201,
        )


class SkillListApi(SubjectApiView):
    required_scopes = {"GET": READ}
    audit_actions = {"GET": "procedural.skill.list"}

    @extend_schema(
        parameters=[SkillListQuerySerializer],
        responses=page_serializer("SkillPage", SkillSerializer),
        operation_id="skills_list",
        description="The subject's skills by weight, in one page.",
    )
    def get(self, request: Request, external_id: str) -> Response:
        query = SkillListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        include = query.validated_data["include_archived"]
        skills = selectors.skill_list(subject=self.subject(external_id), include_archived=include)
        self.audit_targets = [str(s.id) for s in skills]
        return Response(one_page(SkillSerializer(skills, many=True).data))


class SkillDetailApi(SubjectApiView):
    required_scopes = {"GET": READ}
    audit_actions = {"GET": "procedural.skill.get"}

    @extend_schema(responses=SkillDetailSerializer, operation_id="skills_get")
    def get(self, request: Request, external_id: str, skill_id: uuid.UUID) -> Response:
        skill = selectors.skill_get(subject=self.subject(external_id), skill_id=skill_id)
        if skill is None:
            raise NotFound("No such skill for this subject.")
        self.audit_targets = [str(skill.id)]
        return Response(
            {
                **SkillSerializer(skill).data,
                "versions": SkillVersionSerializer(selectors.skill_versions(skill=skill), many=True).data,
                "events": SkillEventSerializer(selectors.skill_events(skill=skill), many=True).data,
            }
        )


class SkillSearchApi(SubjectApiView):
    """Skills ranked by sim × weight; the retrieval id is what feedback names."""

    required_scopes = {"POST": READ}
    audit_actions = {"POST": "procedural.skill.search"}

    @extend_schema(
        request=SkillSearchInputSerializer, responses={200: SkillRetrievalSerializer}, operation_id="skills_search"
    )
    def post(self, request: Request, external_id: str) -> Response:
        payload = SkillSearchInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        found = selectors.skill_search(
            subject=self.subject(external_id),
            query=data["query"],
            embedder=query_embedder(self.organization_id),
            domain=data["domain"] or None,
            limit=data["limit"],
            token_budget=data.get("token_budget"),
        )
        self.audit_targets = [str(found.retrieval.id), *(str(i.skill.id) for i in found.items)]
        return Response(SkillRetrievalSerializer(found).data)


class FeedbackApi(OrganizationApiView):
    """The outcome of a task that used a retrieval's skills (``retrieval_id`` in the body, or
    as a query parameter); applied to the weights by the next evolution job."""

    required_scopes = {"POST": WRITE}
    audit_actions = {"POST": "procedural.feedback"}

    @extend_schema(
        request=FeedbackInputSerializer,
        parameters=[OpenApiParameter("retrieval_id", str, OpenApiParameter.QUERY, required=False)],
        responses={202: FeedbackAcceptedSerializer},
        operation_id="skills_feedback_create",
    )
    def post(self, request: Request) -> Response:
        body = dict(request.data)
        if "retrieval_id" not in body and "retrieval_id" in request.query_params:
            body["retrieval_id"] = request.query_params["retrieval_id"]
        payload = FeedbackInputSerializer(data=body)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        feedback = evolution_store.feedback_create(
            retrieval_id=data["retrieval_id"],
            items_used=data["items_used"],
            reward=data["reward"],
            success=data["success"],
            latency_ms=data["latency_ms"],
            tokens=data["tokens"],
        )
        self.audit_subject_id = feedback.subject_id
        self.audit_targets = [str(feedback.id)]
        return Response({"id": str(feedback.id), "applied": False}, status=202)


class SkillEventRevertApi(OrganizationApiView):
    required_scopes = {"POST": {"admin"}}
    audit_actions = {"POST": "procedural.skill_event.revert"}

    @extend_schema(request=None, responses={201: SkillEventSerializer}, operation_id="skills_events_revert")
    def post(self, request: Request, event_id: uuid.UUID) -> Response:
        revert = evolution_store.skill_event_revert(event_id=event_id)
        self.audit_targets = [str(event_id), str(revert.id)]
        return Response(SkillEventSerializer(revert).data, status=201)
