from __future__ import annotations

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.erasure import selectors, services
from apps.erasure.api.serializers import ErasureAcceptedSerializer, ErasureRequestSerializer, SubjectExportSerializer
from apps.erasure.models import ErasureRequest
from apps.tenancy.api.base import OrganizationApiView, SubjectApiView
from apps.tenancy.api.serializers import SubjectOutputSerializer

READ = {"memories:read"}
ADMIN = {"admin"}


class SubjectDetailApi(SubjectApiView):
    """A subject: read it, or erase it. Served by erasure (the layer above tenancy) because
    deleting a subject is an erasure; the subject itself is tenancy's."""

    required_scopes = {"GET": READ, "DELETE": ADMIN}
    audit_actions = {"DELETE": "subject.erase"}

    @extend_schema(responses=SubjectOutputSerializer, operation_id="subjects_get")
    def get(self, request: Request, external_id: str) -> Response:
        return Response(SubjectOutputSerializer(self.subject(external_id)).data)

    @extend_schema(
        responses={202: ErasureAcceptedSerializer, 200: ErasureAcceptedSerializer},
        operation_id="erasure_subject_erase",
        description="Erase every trace of the subject (ADR 0008): 202 with the erasure request and its job "
        "while it runs (a repeated DELETE returns the same request), 200 once it has completed.",
    )
    def delete(self, request: Request, external_id: str) -> Response:
        erasure = services.subject_erase_request(organization_id=self.organization_id, external_id=external_id)
        self.audit_subject_id = erasure.request.subject_id
        self.audit_targets = [str(erasure.request.id)]
        done = erasure.request.status == ErasureRequest.Status.COMPLETED
        return Response(ErasureAcceptedSerializer(erasure.request).data, status=200 if done else 202)


class ErasureRequestDetailApi(OrganizationApiView):
    """An erasure request: its progress, and once completed its receipt."""

    required_scopes = {"GET": ADMIN}
    audit_actions = {"GET": "erasure.read"}

    @extend_schema(responses=ErasureRequestSerializer, operation_id="erasure_requests_get")
    def get(self, request: Request, erasure_request_id: uuid.UUID) -> Response:
        erasure = selectors.erasure_request_get(erasure_request_id=erasure_request_id)
        self.audit_subject_id = erasure.subject_id
        self.audit_targets = [str(erasure.id)]
        return Response(ErasureRequestSerializer(erasure).data)


class SubjectExportApi(SubjectApiView):
    """Everything stored about a subject, as JSON. Vault values and uploaded documents'
    bytes only for a key that also holds ``vault:read``; each value read is audited."""

    required_scopes = {"GET": ADMIN}
    audit_actions = {"GET": "subject.export"}

    @extend_schema(responses=SubjectExportSerializer, operation_id="erasure_subject_export")
    def get(self, request: Request, external_id: str) -> Response:
        subject = self.subject(external_id)
        export = selectors.subject_export(subject=subject, include_secrets="vault:read" in self.principal.scopes)
        self.audit_targets = [str(entry_id) for entry_id in export.vault_entries_read]
        response = Response(export.data)
        response["Content-Disposition"] = f'attachment; filename="subject-{subject.id}.json"'
        return response
