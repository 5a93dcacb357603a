from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.audit import selectors
from apps.audit.api.serializers import (
    MAX_PAGE,
    AuditChainStatusSerializer,
    AuditEntrySerializer,
    AuditLogPageSerializer,
    AuditLogQuerySerializer,
)
from apps.audit.services import audit_record
from apps.tenancy.api.base import OrganizationApiView
from apps.tenancy.api.cursors import decode_sequence_cursor, encode_sequence_cursor
from apps.tenancy.scope import organization_scope

ADMIN = {"admin"}
JSON_LINES = "application/x-ndjson"


def _json_lines(
    organization_id: uuid.UUID, since: datetime | None, until: datetime | None, after_sequence: int
) -> Iterator[str]:
    """The range page by page, each read in a short transaction of its own, so that an export
    of any size holds no transaction open while the client reads."""
    while True:
        with organization_scope(organization_id):
            page = selectors.audit_entries(
                organization_id=organization_id, since=since, until=until, after_sequence=after_sequence, limit=MAX_PAGE
            )
        for entry in page:
            yield json.dumps(AuditEntrySerializer(entry).data, separators=(",", ":")) + "\n"
        if len(page) < MAX_PAGE:
            return
        after_sequence = page[-1].sequence


class AuditLogApi(OrganizationApiView):
    """The organization's audit log (ids, never content) for ``[since, until)``: streamed as
    JSON lines, one entry per line in chain order; or, with ``limit``, one JSON page."""

    required_scopes = {"GET": ADMIN}
    audit_actions = {"GET": "audit.export"}

    @extend_schema(
        parameters=[AuditLogQuerySerializer],
        responses={
            (200, "application/json"): OpenApiResponse(AuditLogPageSerializer, description="With `limit`: one page."),
            (200, JSON_LINES): OpenApiResponse(
                OpenApiTypes.STR, description="Without `limit`: one JSON audit entry per line, in chain order."
            ),
        },
        operation_id="audit_log_export",
    )
    def get(self, request: Request) -> Response | StreamingHttpResponse:
        query = AuditLogQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params: dict[str, Any] = query.validated_data
        since, until, after = params.get("since"), params.get("until"), params["after_sequence"]
        if params.get("cursor"):
            after = max(after, decode_sequence_cursor(params["cursor"]))
        limit = params.get("limit")
        if limit is not None:
            page = selectors.audit_entries(
                organization_id=self.organization_id, since=since, until=until, after_sequence=after, limit=limit + 1
            )
            last = page[limit - 1] if len(page) > limit else None
            return Response(
                {
                    "results": AuditEntrySerializer(page[:limit], many=True).data,
                    "next_cursor": encode_sequence_cursor(last.sequence) if last else None,
                }
            )
        # The base class audits DRF responses only; a stream is recorded here, in the request's
        # transaction, before the first line is read.
        audit_record(organization_id=self.organization_id, action="audit.export")
        response = StreamingHttpResponse(
            _json_lines(self.organization_id, since, until, after), content_type=JSON_LINES
        )
        response["Content-Disposition"] = 'attachment; filename="audit-log.jsonl"'
        return response


class AuditLogVerifyApi(OrganizationApiView):
    """Verify the organization's hash chain: intact, or the first entry that breaks it."""

    required_scopes = {"GET": ADMIN}
    audit_actions = {"GET": "audit.verify"}

    @extend_schema(responses=AuditChainStatusSerializer, operation_id="audit_log_verify")
    def get(self, request: Request) -> Response:
        status = selectors.audit_chain_status(organization_id=self.organization_id)
        broken = None
        if status.broken_sequence is not None:
            entry = status.broken_entry
            broken = {
                "sequence": status.broken_sequence,
                "id": entry.id if entry else None,
                "action": entry.action if entry else None,
                "created_at": entry.created_at if entry else None,
            }
        data = {
            "status": "intact" if status.intact else "broken",
            "entries": status.entries,
            "head_sequence": status.head_sequence,
            "head_hash": status.head_hash,
            "first_broken": broken,
        }
        return Response(AuditChainStatusSerializer(data).data)
