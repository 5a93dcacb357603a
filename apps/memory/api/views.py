from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.jobs.api.waiting import WaitRequest, answer_when_finished, wait_request
from apps.memory import selectors, services
from apps.memory.api.serializers import (
    AcceptedWriteSerializer,
    BatchAcceptedSerializer,
    BatchSerializer,
    ChunkWriteSerializer,
    DocumentSerializer,
    MemoryListQuerySerializer,
    MemoryPageSerializer,
    MemoryRecordSerializer,
    MemoryUpdateSerializer,
    VaultEntrySerializer,
    VaultValueSerializer,
    WaitedBatchSerializer,
)
from apps.memory.currency import with_currency
from apps.memory.selectors import MemoryFilter
from apps.platform.parsers import StrictJSONParser, StrictMultiPartParser
from apps.platform.serializers import one_page, page_serializer
from apps.resources.storage import storage
from apps.tenancy.api.base import SubjectApiView
from apps.tenancy.api.cursors import decode_typed_cursor, encode_typed_cursor

READ = {"memories:read"}
WRITE = {"memories:write"}
VAULT = {"vault:read"}
MemoryChainSerializer = page_serializer("MemoryRecordList", MemoryRecordSerializer)
TYPE_PARAMETER = OpenApiParameter("memory_type", str, OpenApiParameter.PATH, enum=list(selectors.READABLE_TYPES))
WAIT_PARAMETERS = [
    OpenApiParameter(
        "wait",
        bool,
        OpenApiParameter.QUERY,
        description="Answer only once the written rows are searchable (their job finished), or 202 with "
        "the job's link when the wait runs out.",
    ),
    OpenApiParameter(
        "wait_timeout",
        float,
        OpenApiParameter.QUERY,
        description="Seconds to wait with wait=true: default 10, above 0 and at most 50 (and never past the "
        "request budget).",
    ),
]


class _WaitingWrite(SubjectApiView):
    """A write whose answer, with ``wait=true``, comes once its job finished (ADR 0031): 201
    with the job and every row of the write, or the 202 when the wait runs out. A retry with
    the write's ``Idempotency-Key`` waits for the same job, as the first request did (the
    stored answer is the 202 of the acceptance)."""

    def write_records(self, answer: dict[str, Any]) -> Callable[[], list[dict[str, str]]]:
        """What the write stored so far, read once its job finished; ``answer`` is the 202's body."""
        raise NotImplementedError

    def wait_for_job(self, wait: WaitRequest, answer: dict[str, Any]) -> None:
        organization_id, job_id = self.organization_id, uuid.UUID(str(answer["job_id"]))
        records = self.write_records(answer)
        self.after_commit = lambda response: answer_when_finished(
            response, organization_id=organization_id, job_id=job_id, timeout=wait.timeout, records=records
        )

    def replayed(self, request: Request, response: Response) -> None:
        wait = wait_request(request.query_params)
        if wait is not None and response.status_code == 202:
            self.wait_for_job(wait, response.data)


class MemoryCollectionApi(_WaitingWrite):
    """POST writes one chunk (messages, text or a document); GET lists one store's rows, or
    every store's (without ``type``), each row with its ``type``."""

    required_scopes = {"GET": READ, "POST": WRITE}
    audit_actions = {"GET": "memory.list", "POST": "memory.write"}
    subject_created_on = frozenset({"POST"})
    parser_classes = [StrictJSONParser, StrictMultiPartParser]

    @extend_schema(
        request={"application/json": ChunkWriteSerializer, "multipart/form-data": DocumentSerializer},
        parameters=WAIT_PARAMETERS,
        responses={201: AcceptedWriteSerializer, 202: AcceptedWriteSerializer},
        operation_id="memories_write",
        description="Accept a write: each message is stored as its episodic row (a long text or document "
        "as a resource and its passages, sensitive values in the vault) before the answer, a 202 with those "
        "rows and the write's job (`Location`). The job routes the messages, writes the other typed rows, "
        "embeds and indexes them, and is `succeeded` once every row is searchable. With `wait=true`, the "
        "answer comes once the job finished: 201 with every row of the write.",
    )
    def post(self, request: Request, external_id: str) -> Response:
        wait = wait_request(request.query_params)
        if request.content_type.startswith("multipart/"):
            document = DocumentSerializer(data=request.data)
            document.is_valid(raise_exception=True)
            subject = self.subject_for_write(external_id, kind=document.validated_data["subject_kind"])
            upload = document.validated_data["file"]
            result = services.memory_write_document(
                subject=subject,
                filename=upload.name or "document",
                content_type=(upload.content_type or "").split(";")[0].strip(),
                data=upload.read(),
                title=document.validated_data["title"],
                session_id=document.validated_data["session_id"],
                metadata=document.validated_data.get("metadata"),
                api_key_id=self.principal.api_key_id,
            )
        else:
            chunk = ChunkWriteSerializer(data=request.data)
            chunk.is_valid(raise_exception=True)
            subject = self.subject_for_write(external_id, kind=chunk.validated_data["subject_kind"])
            result = services.memory_accept_messages(
                subject=subject,
                messages=services.incoming_messages(chunk.validated_data["messages"]),
                source_kind=chunk.validated_data["source_kind"],
                session_id=chunk.validated_data["session_id"],
                metadata=chunk.validated_data.get("metadata"),
                api_key_id=self.principal.api_key_id,
            )
        self.audit_targets = [str(r.id) for r in result.records]
        self.usage_rows_written = len(result.records)
        # Accepted: the rows above are stored; the write's job completes and indexes it (ADR 0054).
        assert result.job_id is not None
        response = Response(AcceptedWriteSerializer(result).data, status=202)
        response["Location"] = reverse("job-detail", kwargs={"job_id": result.job_id})
        if wait is not None:
            self.wait_for_job(wait, response.data)
        return response

    def write_records(self, answer: dict[str, Any]) -> Callable[[], list[dict[str, str]]]:
        chunk_id = uuid.UUID(str(answer["chunk_id"]))
        return lambda: [
            {"type": memory_type, "id": str(row_id)}
            for memory_type, row_id in selectors.chunk_records(chunk_ids=[chunk_id])
        ]

    @extend_schema(
        parameters=[MemoryListQuerySerializer],
        responses=MemoryPageSerializer,
        operation_id="memories_list",
        description="The subject's rows oldest first, in (created_at, type, id) order: of one store with "
        "`type`, else of every store (the vault excepted). Pass `next_cursor` back as `cursor` for the next page.",
    )
    def get(self, request: Request, external_id: str) -> Response:
        subject = self.subject(external_id)
        query = MemoryListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params: dict[str, Any] = query.validated_data
        limit = params.pop("limit")
        cursor = params.pop("cursor", None)
        filters = MemoryFilter(memory_type=params.pop("type", None), where=params.pop("filters", None), **params)
        rows = selectors.memory_list(
            subject=subject, filters=filters, after=decode_typed_cursor(cursor) if cursor else None, limit=limit + 1
        )
        last = rows[limit - 1] if len(rows) > limit else None
        next_cursor = (
            encode_typed_cursor(last.created_at, selectors.memory_type_of(last), last.id) if last is not None else None
        )
        self.audit_targets = [str(r.id) for r in rows[:limit]]
        return Response({"results": MemoryRecordSerializer(rows[:limit], many=True).data, "next_cursor": next_cursor})


class MemoryBatchApi(_WaitingWrite):
    required_scopes = {"POST": WRITE}
    audit_actions = {"POST": "memory.batch"}
    subject_created_on = frozenset({"POST"})

    @extend_schema(
        request=BatchSerializer,
        parameters=WAIT_PARAMETERS,
        responses={201: WaitedBatchSerializer, 202: WaitedBatchSerializer},
        operation_id="memories_batch",
    )
    def post(self, request: Request, external_id: str) -> Response:
        wait = wait_request(request.query_params)
        payload = BatchSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        subject = self.subject_for_write(external_id, kind=payload.validated_data["subject_kind"])
        chunks = [
            {
                "messages": [{**m, "timestamp": m["timestamp"].isoformat()} for m in chunk["messages"]],
                "source_kind": chunk["source_kind"],
                "session_id": chunk["session_id"],
                **({"metadata": chunk["metadata"]} if "metadata" in chunk else {}),
            }
            for chunk in payload.validated_data["chunks"]
        ]
        batch = services.memory_batch_create(
            subject=subject,
            chunks=chunks,
            session_id=payload.validated_data["session_id"],
            metadata=payload.validated_data.get("metadata"),
            api_key_id=self.principal.api_key_id,
        )
        self.audit_targets = [str(batch.id), str(batch.job_id)]
        response = Response(BatchAcceptedSerializer(batch).data, status=202)
        if wait is not None:
            self.wait_for_job(wait, response.data)
        return response

    def write_records(self, answer: dict[str, Any]) -> Callable[[], list[dict[str, str]]]:
        batch_id = uuid.UUID(str(answer["batch_id"]))
        return lambda: [
            {"type": memory_type, "id": str(row_id)}
            for memory_type, row_id in selectors.batch_records(batch_id=batch_id)
        ]


class MemoryDetailApi(SubjectApiView):
    required_scopes = {"GET": READ, "PATCH": WRITE}
    audit_actions = {"GET": "memory.read", "PATCH": "memory.update"}

    @extend_schema(parameters=[TYPE_PARAMETER], responses=MemoryRecordSerializer, operation_id="memories_get")
    def get(self, request: Request, external_id: str, memory_type: str, record_id: uuid.UUID) -> Response:
        row = selectors.memory_get(subject=self.subject(external_id), memory_type=memory_type, record_id=record_id)
        self.audit_targets = [str(row.id)]
        return Response(MemoryRecordSerializer(row).data)

    @extend_schema(
        parameters=[TYPE_PARAMETER],
        request=MemoryUpdateSerializer,
        responses={200: MemoryRecordSerializer},
        operation_id="memories_update",
        description="Append a new version of the row with the changes; the old row stays, superseded by it. "
        "Answers the new row.",
    )
    def patch(self, request: Request, external_id: str, memory_type: str, record_id: uuid.UUID) -> Response:
        payload = MemoryUpdateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        new = services.memory_supersede(
            subject=self.subject(external_id),
            memory_type=memory_type,
            record_id=record_id,
            changes=payload.validated_data["changes"],
            api_key_id=self.principal.api_key_id,
        )
        self.audit_targets = [str(record_id), str(new.id)]
        self.usage_rows_written = 1
        return Response(MemoryRecordSerializer(with_currency([new])[0]).data)


class MemoryHistoryApi(SubjectApiView):
    required_scopes = {"GET": READ}
    audit_actions = {"GET": "memory.read"}

    @extend_schema(
        parameters=[TYPE_PARAMETER],
        responses=MemoryChainSerializer,
        operation_id="memories_history",
        description="The supersession chain through the row, newest first, in one page.",
    )
    def get(self, request: Request, external_id: str, memory_type: str, record_id: uuid.UUID) -> Response:
        rows = selectors.memory_history(subject=self.subject(external_id), memory_type=memory_type, record_id=record_id)
        self.audit_targets = [str(r.id) for r in rows]
        return Response(one_page(MemoryRecordSerializer(rows, many=True).data))


class CoreBlocksApi(SubjectApiView):
    required_scopes = {"GET": READ}
    audit_actions = {"GET": "memory.read"}

    @extend_schema(
        responses=MemoryChainSerializer,
        operation_id="memories_core_list",
        description="The subject's current core blocks, by label, in one page.",
    )
    def get(self, request: Request, external_id: str) -> Response:
        rows = selectors.core_blocks(subject=self.subject(external_id))
        self.audit_targets = [str(r.id) for r in rows]
        return Response(one_page(MemoryRecordSerializer(rows, many=True).data))


class ResourceContentApi(SubjectApiView):
    required_scopes = {"GET": READ}
    audit_actions = {"GET": "resource.read"}

    @extend_schema(
        # The blob comes back with the media type it was stored with (text/plain, application/pdf, …).
        responses={(200, "*/*"): OpenApiResponse(bytes, description="The stored bytes, in their own media type.")},
        operation_id="memories_resource_content",
    )
    def get(self, request: Request, external_id: str, record_id: uuid.UUID) -> HttpResponse:
        resource = selectors.resource_get(subject=self.subject(external_id), resource_id=record_id)
        self.audit_targets = [str(resource.id)]
        response = HttpResponse(storage().get(resource.object_key), content_type=resource.content_type)
        response["Content-Disposition"] = "attachment"
        return response


class VaultListApi(SubjectApiView):
    required_scopes = {"GET": VAULT}
    audit_actions = {"GET": "vault.list"}

    @extend_schema(
        responses=page_serializer("VaultEntryPage", VaultEntrySerializer),
        operation_id="memories_vault_list",
        description="The subject's vault entries (captions, never values), in one page.",
    )
    def get(self, request: Request, external_id: str) -> Response:
        entries = selectors.vault_entries(subject=self.subject(external_id))
        self.audit_targets = [str(e.id) for e in entries]
        return Response(one_page(VaultEntrySerializer(entries, many=True).data))


class VaultEntryApi(SubjectApiView):
    required_scopes = {"GET": VAULT}
    audit_actions = {"GET": "vault.read"}

    @extend_schema(responses=VaultValueSerializer, operation_id="memories_vault_get")
    def get(self, request: Request, external_id: str, entry_id: uuid.UUID) -> Response:
        entry, value = selectors.vault_value(subject=self.subject(external_id), entry_id=entry_id)
        self.audit_targets = [str(entry.id)]
        data = dict(VaultEntrySerializer(entry).data)
        data["value"] = value
        return Response(data)
