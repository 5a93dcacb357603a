from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.memory.api.serializers import ExcerptSerializer, MemoryRecordSerializer
from apps.memory.api.views import SubjectMemoryApi
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.platform.serializers import StrictFieldsSerializer
from apps.procedural.api.hooks import procedural_skills
from apps.providers.registry import embedder
from apps.retrieval.services import SearchResult, search

SEARCHABLE = ("episodic", "semantic", "core", "procedural", "resource")


class SubjectSearchInputSerializer(StrictFieldsSerializer):
    query = serializers.CharField(max_length=2000)
    mode = serializers.ChoiceField(choices=("graph", "flat"), default="graph")
    memory_types = serializers.ListField(
        child=serializers.ChoiceField(
            choices=SEARCHABLE,
            error_messages={"invalid_choice": f"memory types are {list(SEARCHABLE)}; the vault is never searched."},
        ),
        default=["episodic", "semantic"],
        min_length=1,
    )
    token_budget = serializers.IntegerField(
        min_value=1,
        max_value=100_000,
        required=False,
        help_text="At most this many tokens of rows and resource passages in all.",
    )
    since = serializers.DateTimeField(
        required=False, help_text="Only rows whose event (else mention) time is at or after."
    )
    until = serializers.DateTimeField(required=False, help_text="Only rows whose event (else mention) time is before.")


def _plan(result: SearchResult) -> dict[str, Any]:
    plan = result.plan
    return {
        "operator": plan.operator,
        "relations": [family.name for family in plan.relations],
        "answer_types": list(plan.answer_types),
        "entities": list(plan.entities),
        "budgets": {"base_rows": plan.budgets.base_rows, "cited_rows": plan.budgets.cited_rows},
    }


def _facts(result: SearchResult) -> list[dict[str, Any]]:
    return [
        {
            "frame_id": scored.fact.frame_id,
            "predicate": scored.fact.predicate,
            "roles": [{"role": role, "anchor": key, "name": name} for role, key, name in scored.fact.roles],
            "literals": scored.fact.literals,
            "event_time": scored.fact.event_time.isoformat() if scored.fact.event_time else None,
            "event_time_precision": scored.fact.event_time_precision,
            "status": scored.fact.status,
            "citations": scored.fact.citations,
            "score": scored.score.total,
        }
        for scored in result.facts
    ]


def _rows(result: SearchResult) -> list[dict[str, Any]]:
    ids = [uuid.UUID(fused.row.row_id) for fused in result.rows]
    provenance: dict[str, tuple[str, list[str]]] = {}
    for model in (EpisodicEvent, SemanticItem):
        for row_id, chunk_id, message_ids in model.objects.filter(id__in=ids).values_list(
            "id", "chunk_id", "source_message_ids"
        ):
            provenance[str(row_id)] = (str(chunk_id), list(message_ids))
    attributes = {
        str(row_id): attribute
        for row_id, attribute in SemanticItem.objects.filter(id__in=ids).values_list("id", "attribute")
    }
    passages = {
        str(row_id): {"id": str(resource_id), "start": start, "end": end}
        for row_id, resource_id, start, end in EpisodicEvent.objects.filter(
            id__in=ids, resource_id__isnull=False
        ).values_list("id", "resource_id", "resource_start", "resource_end")
    }
    rows = []
    for fused in result.rows:
        row = fused.row
        chunk, message_ids = provenance.get(row.row_id, (row.chunk_id or "", []))
        rows.append(
            {
                "id": row.row_id,
                "type": row.memory_type,
                "text": row.text,
                **({"attribute": attributes.get(row.row_id, "")} if row.memory_type == "semantic" else {}),
                "event_time": row.event_time.isoformat() if row.event_time else None,
                "mention_time": row.mention_time.isoformat() if row.mention_time else None,
                "provenance": {
                    "session_id": row.session_id,
                    "chunk_id": chunk,
                    "source_message_ids": message_ids,
                    "resource": passages.get(row.row_id),
                },
                "selected_as": fused.source,
            }
        )
    return rows


def _typed(result: SearchResult) -> dict[str, Any]:
    typed: dict[str, Any] = {}
    for name, items in result.typed.items():
        if name == "resource":
            records = MemoryRecordSerializer(
                [hit.resource for hit in items], many=True, context={"excerpted": True}
            ).data
            typed[name] = [
                {**record, "excerpts": ExcerptSerializer(hit.excerpts, many=True).data}
                for record, hit in zip(records, items, strict=True)
            ]
        else:
            typed[name] = MemoryRecordSerializer(items, many=True).data
    return typed


class SearchApi(SubjectMemoryApi):
    """Bounded, cited evidence for a question: graph facts with their citations, and the rows."""

    required_scopes = {"POST": {"memories:read"}}
    audit_actions = {"POST": "memory.search"}

    @extend_schema(request=SubjectSearchInputSerializer, responses={200: dict}, operation_id="subjects_search")
    def post(self, request: Request, external_id: str) -> Response:
        payload = SubjectSearchInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        params = payload.validated_data
        result = search(
            subject=self.subject(external_id),
            question=params["query"],
            embedder=embedder(),
            mode=params["mode"],
            memory_types=params["memory_types"],
            token_budget=params.get("token_budget"),
            since=params.get("since"),
            until=params.get("until"),
        )
        rows = _rows(result)
        self.audit_targets = [row["id"] for row in rows]
        typed = _typed(result)
        if "procedural" in params["memory_types"]:
            typed["skills"] = procedural_skills(subject=self.subject(external_id), query=params["query"])
        return Response(
            {
                "mode": result.mode,
                "fallback": result.fallback,
                "plan": _plan(result),
                "facts": _facts(result),
                "rows": rows,
                "typed": typed,
                "budget": vars(result.budget),
            }
        )
