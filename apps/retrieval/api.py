from __future__ import annotations

import dataclasses
from typing import Any, get_args

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.memory import selectors as memory_selectors
from apps.memory.api.serializers import (
    ExcerptSerializer,
    FiltersField,
    MemoryRecordSerializer,
    MetadataField,
    ResourceSearchHitSerializer,
    SearchHitPageSerializer,
    SearchHitSerializer,
    SearchInputSerializer,
)
from apps.memory.resource_search import ResourceHit, resource_hits
from apps.platform.serializers import StrictFieldsSerializer
from apps.platform.timing import phase
from apps.providers.registry import query_embedder
from apps.providers.services import request_metering
from apps.retrieval.extensions import search_extensions, search_extensions_run
from apps.retrieval.fusion import trim_to_token_budget
from apps.retrieval.selectors import search_evidence
from apps.retrieval.services import TOKEN_BUDGET_ROW_LIMIT
from apps.retrieval.types import AnswerType, FrameStatus, FusedSource, Operator, Plan, ScoredFact
from apps.tenancy.api.base import SubjectApiView

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
    limit = serializers.IntegerField(
        min_value=1,
        max_value=TOKEN_BUDGET_ROW_LIMIT,
        required=False,
        help_text="At most this many evidence rows (default: the plan's row budgets).",
    )
    since = serializers.DateTimeField(
        required=False, help_text="Only rows whose event (else mention) time is at or after."
    )
    until = serializers.DateTimeField(required=False, help_text="Only rows whose event (else mention) time is before.")
    filters = FiltersField(
        required=False, help_text="Only rows that match, applied in the database before every cap and budget."
    )


class PlanBudgetsSerializer(serializers.Serializer[Any]):
    base_rows = serializers.IntegerField(help_text="Rows of the anchors' own evidence the answer may use.")
    cited_rows = serializers.IntegerField(help_text="Rows cited by graph facts; also caps the facts returned.")


class PlanSerializer(serializers.Serializer[Plan]):
    """How the question was read."""

    operator = serializers.ChoiceField(choices=get_args(Operator))
    relations = serializers.SerializerMethodField(help_text="The relation families the question asks about.")
    answer_types = serializers.ListField(child=serializers.ChoiceField(choices=get_args(AnswerType)))
    entities = serializers.ListField(child=serializers.CharField())
    budgets = PlanBudgetsSerializer()

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_relations(self, plan: Plan) -> list[str]:
        return [family.name for family in plan.relations]


class FactRoleSerializer(serializers.Serializer[Any]):
    role = serializers.CharField()
    anchor = serializers.CharField(help_text="The anchor key of the role's participant ('' for none).")
    name = serializers.CharField()


class FactSerializer(serializers.Serializer[ScoredFact]):
    """A graph fact, with the ids of the rows it cites."""

    frame_id = serializers.CharField(source="fact.frame_id")
    predicate = serializers.CharField(source="fact.predicate")
    roles = serializers.SerializerMethodField()
    literals = serializers.DictField(source="fact.literals", child=serializers.CharField())
    event_time = serializers.DateTimeField(source="fact.event_time", allow_null=True)
    event_time_precision = serializers.CharField(source="fact.event_time_precision")
    status = serializers.ChoiceField(source="fact.status", choices=get_args(FrameStatus))
    citations = serializers.ListField(source="fact.citations", child=serializers.CharField())
    score = serializers.FloatField(source="score.total")
    current = serializers.BooleanField(source="fact.current", help_text="One of the cited rows is current.")
    superseded_by = serializers.CharField(
        source="fact.superseded_by",
        allow_null=True,
        help_text="Not current: the row that replaced its newest citation.",
    )
    valid_from = serializers.DateTimeField(
        source="fact.valid_from", allow_null=True, help_text="Event time, else mention time."
    )
    valid_to = serializers.DateTimeField(
        source="fact.valid_to", allow_null=True, help_text="Not current: when its newest citation was replaced."
    )

    @extend_schema_field(FactRoleSerializer(many=True))
    def get_roles(self, scored: ScoredFact) -> list[dict[str, str]]:
        return [{"role": role, "anchor": key, "name": name} for role, key, name in scored.fact.roles]


class PassageSerializer(serializers.Serializer[Any]):
    id = serializers.CharField(help_text="The resource the row is a passage of.")
    start = serializers.IntegerField(allow_null=True, help_text="Character offset in the resource's text.")
    end = serializers.IntegerField(allow_null=True)


class RowProvenanceSerializer(serializers.Serializer[Any]):
    session_id = serializers.CharField(allow_null=True)
    chunk_id = serializers.CharField()
    source_message_ids = serializers.ListField(child=serializers.CharField())
    resource = PassageSerializer(allow_null=True, help_text="Where the row sits in a resource, if it is a passage.")


class EvidenceRowSerializer(serializers.Serializer[Any]):
    id = serializers.CharField(source="fused.row.row_id")
    type = serializers.ChoiceField(source="fused.row.memory_type", choices=("episodic", "semantic"))
    text = serializers.CharField(source="fused.row.text")
    event_time = serializers.DateTimeField(source="fused.row.event_time", allow_null=True)
    mention_time = serializers.DateTimeField(source="fused.row.mention_time", allow_null=True)
    attribute = serializers.CharField(
        allow_null=True, help_text="A semantic row's fact attribute (its key is the entity and this); null otherwise."
    )
    provenance = RowProvenanceSerializer()
    metadata = MetadataField(help_text="The tags of the write that produced the row.")
    selected_as = serializers.ChoiceField(
        source="fused.source", choices=get_args(FusedSource), help_text="The fusion phase that took the row."
    )
    current = serializers.BooleanField(source="fused.row.current", help_text="No later row supersedes this one.")
    superseded_by = serializers.CharField(
        source="fused.row.superseded_by", allow_null=True, help_text="The row that replaced this one."
    )
    valid_from = serializers.DateTimeField(
        source="fused.row.valid_from", allow_null=True, help_text="Event time, else mention time."
    )
    valid_to = serializers.DateTimeField(
        source="fused.row.valid_to", allow_null=True, help_text="The valid_from of the row that replaced this one."
    )


class BudgetReportSerializer(serializers.Serializer[Any]):
    anchors_inspected = serializers.IntegerField()
    frames_inspected = serializers.IntegerField()
    rows_inspected = serializers.IntegerField()
    rows_returned = serializers.IntegerField()
    facts_returned = serializers.IntegerField()
    tokens_returned = serializers.IntegerField()


class ResourceHitSerializer(MemoryRecordSerializer):
    """A matched resource: its record without the whole text, and the passages that answer."""

    excerpts = ExcerptSerializer(many=True)

    def to_representation(self, hit: ResourceHit) -> dict[str, Any]:
        record = MemoryRecordSerializer(hit.resource, context={"excerpted": True}).data
        return {**record, "excerpts": ExcerptSerializer(hit.excerpts, many=True).data}


class TypedResultsSerializer(serializers.Serializer[Any]):
    """The other requested stores, and the registered search extensions' results
    (``apps/retrieval/extensions.py``): each present only when requested."""

    core = MemoryRecordSerializer(many=True, required=False)
    procedural = MemoryRecordSerializer(many=True, required=False)
    resource = ResourceHitSerializer(many=True, required=False)

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        for extension in search_extensions():
            fields[extension.name] = extension.serializer(required=False, help_text=extension.help_text)
        return fields


class SearchOutputSerializer(serializers.Serializer[Any]):
    mode = serializers.ChoiceField(choices=("graph", "flat"))
    fallback = serializers.BooleanField(
        help_text="True when the rows came from flat search: a graph read failed, or the graph is being rebuilt."
    )
    plan = PlanSerializer()
    facts = FactSerializer(many=True)
    rows = EvidenceRowSerializer(many=True)
    typed = TypedResultsSerializer()
    budget = BudgetReportSerializer()


class SearchApi(SubjectApiView):
    """Bounded, cited evidence for a question: graph facts with their citations, and the rows."""

    required_scopes = {"POST": {"memories:read"}}
    audit_actions = {"POST": "memory.search"}
    replica_reads = frozenset({"POST"})

    @extend_schema(
        request=SubjectSearchInputSerializer, responses={200: SearchOutputSerializer}, operation_id="search_evidence"
    )
    def post(self, request: Request, external_id: str) -> Response:
        payload = SubjectSearchInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        params = payload.validated_data
        subject = self.subject(external_id)
        with phase("retrieval"):
            evidence = search_evidence(
                subject=subject,
                question=params["query"],
                mode=params["mode"],
                memory_types=params["memory_types"],
                token_budget=params.get("token_budget"),
                limit=params.get("limit"),
                since=params.get("since"),
                until=params.get("until"),
                where=params.get("filters"),
                metering=request_metering(organization_id=self.organization_id, api_key_id=self.principal.api_key_id),
            )
            extended = search_extensions_run(
                subject=subject, query=params["query"], memory_types=params["memory_types"]
            )
        self.audit_targets = [row.fused.row.row_id for row in evidence.rows]
        if extended:
            evidence = dataclasses.replace(evidence, typed={**evidence.typed, **extended})
        with phase("serialization"):
            body = SearchOutputSerializer(evidence).data
        return Response(body)


class MemoryTypeSearchApi(SubjectApiView):
    """Search one memory store; resource hits carry excerpts chosen by retrieval (this view is
    retrieval's because the excerpts are)."""

    required_scopes = {"POST": {"memories:read"}}
    audit_actions = {"POST": "memory.search"}
    replica_reads = frozenset({"POST"})

    @extend_schema(
        parameters=[
            OpenApiParameter("memory_type", str, OpenApiParameter.PATH, enum=list(memory_selectors.SEARCHABLE_TYPES))
        ],
        request=SearchInputSerializer,
        responses=SearchHitPageSerializer,
        description="The store's rows ranked by meaning and words, at most `limit`, within `token_budget` "
        "tokens of their content; resource hits also carry `excerpts`: passages of the resource within "
        "`token_budget`. One page (`next_cursor` is null).",
        operation_id="search_store",
    )
    def post(self, request: Request, external_id: str, memory_type: str) -> Response:
        subject = self.subject(external_id)
        payload = SearchInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        params = payload.validated_data
        token_budget = params.get("token_budget")
        model = query_embedder(self.organization_id)
        metering = request_metering(organization_id=self.organization_id, api_key_id=self.principal.api_key_id)
        vector = model.embed([params["query"]], metering=metering)[0]
        hits = memory_selectors.memory_search(
            subject=subject,
            memory_type=memory_type,
            query=params["query"],
            limit=params["limit"],
            vector=vector,
            model=model.model_name,
            where=params.get("filters"),
        )
        if memory_type != "resource":
            if token_budget is not None:
                hits = trim_to_token_budget(hits, token_budget, text=lambda hit: _content_text(hit.row))
            self.audit_targets = [str(hit.row.id) for hit in hits]
            return Response({"results": SearchHitSerializer(hits, many=True).data, "next_cursor": None})
        excerpted = resource_hits(
            subject=subject,
            resources=[hit.row for hit in hits],
            question=params["query"],
            vector=vector,
            model=model.model_name,
            token_budget=token_budget,
        )
        found = {hit.resource.id: hit for hit in excerpted}
        body = [{**vars(hit), "excerpts": found[hit.row.id].excerpts} for hit in hits if hit.row.id in found]
        self.audit_targets = [str(hit["row"].id) for hit in body]
        serializer = ResourceSearchHitSerializer(body, many=True, context={"excerpted": True})
        return Response({"results": serializer.data, "next_cursor": None})


def _content_text(row: Any) -> str:
    """The text a hit returns (its record's content), which a token budget counts."""
    content = MemoryRecordSerializer(row).data["content"]
    return "\n".join(str(v) for value in content.values() for v in (value if isinstance(value, list) else [value]))
