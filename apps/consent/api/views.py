from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.consent import selectors, services
from apps.consent.api.serializers import (
    ConsentOutputSerializer,
    ConsentUpdateInputSerializer,
    ConsentUpdateOutputSerializer,
)
from apps.tenancy.api.base import SubjectApiView
from apps.tenancy.models import Subject


def _consent(subject: Subject) -> dict[str, Any]:
    return {
        "subject": subject.external_id,
        "purposes": list(selectors.consent_state(subject=subject).values()),
        "history": selectors.consent_history(subject=subject),
    }


class SubjectConsentApi(SubjectApiView):
    """GET: each purpose's current consent and the full history. PUT: grant or withdraw
    purposes; a withdrawal erases what the purpose covered (ADR 0008)."""

    required_scopes = {"GET": {"memories:read"}, "PUT": {"memories:write"}}
    audit_actions = {"GET": "consent.read", "PUT": "consent.update"}

    @extend_schema(responses=ConsentOutputSerializer, operation_id="consent_get")
    def get(self, request: Request, external_id: str) -> Response:
        return Response(ConsentOutputSerializer(_consent(self.subject(external_id))).data)

    @extend_schema(
        request=ConsentUpdateInputSerializer, responses=ConsentUpdateOutputSerializer, operation_id="consent_update"
    )
    def put(self, request: Request, external_id: str) -> Response:
        payload = ConsentUpdateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        subject = self.subject(external_id)
        change = services.consent_update(subject=subject, changes=payload.validated_data["purposes"])
        erasure = change.erasure_request
        self.audit_targets = [str(r.id) for r in change.records] + ([str(erasure.id)] if erasure else [])
        data = {
            **_consent(subject),
            "erasure_request_id": erasure.id if erasure else None,
            "job_id": erasure.job_id if erasure else None,
        }
        return Response(ConsentUpdateOutputSerializer(data).data)
