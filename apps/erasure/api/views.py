from __future__ import annotations

import uuid

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.erasure import selectors, services
from apps.erasure.api.serializers import (
    DeletionReceiptSerializer,
    ErasureAcceptedSerializer,
    ErasureRequestSerializer,
    MemoryDeleteAcceptedSerializer,
    MemoryDeleteSerializer,
    SubjectExportSerializer,
    SubjectUpdatedSerializer,
)
from apps.erasure.deletion import DELETABLE_TYPES, RowRef, memory_filter_delete, memory_rows_delete
from apps.erasure.models import ErasureRequest
from apps.graph.indexing import subject_speaker_of
from apps.graph.services import subject_reindex_queue
from apps.jobs.models import Job
from apps.memory.api import views as memory_views
from apps.tenancy import services as tenancy_services
from apps.tenancy.api.base import OrganizationApiView, SubjectApiView
from apps.tenancy.api.serializers import SubjectOutputSerializer, SubjectUpdateSerializer

READ = {"memories:read"}
WRITE = {"memories:write"}
DELETE = {"memories:delete"}
ADMIN = {"admin"}
DELETABLE_TYPE_PARAMETER = OpenApiParameter("memory_type", str, OpenApiParameter.PATH, enum=list(DELETABLE_TYPES))


class SubjectDetailApi(SubjectApiView):
    """A subject: read it, or erase it. Served by erasure (the layer above tenancy) because
    deleting a subject is an erasure; the subject itself is tenancy's."""

    required_scopes = {"GET": READ, "PATCH": WRITE, "DELETE": ADMIN}
    audit_actions = {"PATCH": "subject.update", "DELETE": "subject.erase"}

    @extend_schema(responses=SubjectOutputSerializer, operation_id="subjects_get")
    def get(self, request: Request, external_id: str) -> Response:
        return Response(SubjectOutputSerializer(self.subject(external_id)).data)

    @extend_schema(
        request=SubjectUpdateSerializer,
        responses=SubjectUpdatedSerializer,
        operation_id="subjects_update",
        description="Change the subject's display name or replace its metadata. A new display name that "
        "changes what the subject is called queues a re-index of its graph (ADR 0095, ADR 0096).",
    )
    def patch(self, request: Request, external_id: str) -> Response:
        payload = SubjectUpdateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        subject = self.subject(external_id)
        called = subject_speaker_of(subject)
        subject = tenancy_services.subject_update(subject=subject, **payload.validated_data)
        job = subject_reindex_queue(subject=subject) if subject_speaker_of(subject) != called else None
        self.audit_subject_id = subject.id
        self.audit_targets = [str(job.id)] if job else []
        return Response({**SubjectOutputSerializer(subject).data, "graph_reindex_job_id": job and str(job.id)})

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


def _audit_deletion(view: OrganizationApiView, receipt: dict[str, object]) -> None:
    deleted = receipt["deleted"]
    assert isinstance(deleted, list)
    view.audit_targets = [*(str(r["id"]) for r in deleted), f"receipt:sha256:{receipt['receipt_sha256']}"]


class MemoryRowApi(memory_views.MemoryDetailApi):
    """One row: read and update it (apps.memory), or delete it. Served here because deleting
    rows is erasure's machinery (ADR 0037); the route is the memory row's."""

    required_scopes = {**memory_views.MemoryDetailApi.required_scopes, "DELETE": DELETE}
    audit_actions = {**memory_views.MemoryDetailApi.audit_actions, "DELETE": "memory.delete"}

    @extend_schema(
        parameters=[DELETABLE_TYPE_PARAMETER],
        responses={200: DeletionReceiptSerializer},
        operation_id="memories_delete",
        description="Delete the row from its store, the graph, the index beside it and (a document) object "
        "storage; answers the receipt. A row it superseded becomes current again (ADR 0037). Needs memories:delete.",
    )
    def delete(self, request: Request, external_id: str, memory_type: str, record_id: uuid.UUID) -> Response:
        receipt = memory_rows_delete(
            subject=self.subject(external_id), rows=[RowRef(memory_type, record_id)], missing_ok=False
        )
        _audit_deletion(self, receipt)
        return Response(DeletionReceiptSerializer(receipt).data)


class MemoryDeleteApi(SubjectApiView):
    """Delete many rows of a subject: by id, up to 1,000 per call, or by filter (a job beyond 1,000)."""

    required_scopes = {"POST": DELETE}
    audit_actions = {"POST": "memory.delete"}

    @extend_schema(
        request=MemoryDeleteSerializer,
        responses={200: DeletionReceiptSerializer, 202: MemoryDeleteAcceptedSerializer},
        operation_id="memories_delete_many",
        description="Delete rows, as DELETE does each (ADR 0037), in one transaction: all or none. By `ids` (at "
        "most 1,000; ids the subject has no row of are listed in not_found), or by `filters`: the rows the "
        "listing with them shows, superseded ones included (no match: a receipt of nothing). More than 1,000 "
        "matches: 202 with a job (Location) that deletes them in batches of 1,000, its result the summed "
        "counts. Needs memories:delete.",
    )
    def post(self, request: Request, external_id: str) -> Response:
        payload = MemoryDeleteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        subject = self.subject(external_id)
        if "filters" in payload.validated_data:
            outcome = memory_filter_delete(subject=subject, filters=payload.initial_data["filters"])
            if isinstance(outcome, Job):
                self.audit_targets = [str(outcome.id)]
                response = Response(MemoryDeleteAcceptedSerializer({"job": outcome}).data, status=202)
                response["Location"] = reverse("job-detail", kwargs={"job_id": outcome.id})
                return response
            receipt = outcome
        else:
            rows = [RowRef(r["type"], r["id"]) for r in payload.validated_data["ids"]]
            receipt = memory_rows_delete(subject=subject, rows=rows)
        _audit_deletion(self, receipt)
        return Response(DeletionReceiptSerializer(receipt).data)
