"""``POST /v1/subjects/{external_id}/answer``: an answer from the subject's memories, citing them.

The answer loop (:mod:`apps.retrieval.answering`) runs the searches, the answering agent of the
organization's provider, the answer check and at most one rewrite. The audit entry lists the
rows the answer cites.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.memory.api.serializers import MetadataField
from apps.platform.deprecation import mark_deprecated
from apps.platform.errors import ValidationFailed
from apps.platform.parsers import StrictJSONParser
from apps.providers.registry import answer_llm_for, query_embedder
from apps.providers.selectors import provider_override
from apps.providers.services import request_metering
from apps.retrieval.answering import answer_question
from apps.retrieval.types import Plan
from apps.tenancy.api.base import SubjectApiView

MAX_QUESTION_CHARS = 2000
MAX_TOKEN_BUDGET = 100_000
ANSWER_OPERATION = "search_answer"


@extend_schema_field({"type": "string", "maxLength": MAX_QUESTION_CHARS, "deprecated": True})
class _DeprecatedCharField(serializers.CharField):
    """A field kept for one release under its old name; the schema marks it deprecated."""


class AnswerInputSerializer(serializers.Serializer[dict[str, Any]]):
    query = serializers.CharField(
        max_length=MAX_QUESTION_CHARS, required=False, help_text="The question to answer (as in search)."
    )
    question = _DeprecatedCharField(
        max_length=MAX_QUESTION_CHARS,
        required=False,
        help_text="Deprecated alias of `query`, accepted for one release (the answer then carries a "
        "`Deprecation` header); send one of the two, not both.",
    )
    mode = serializers.ChoiceField(
        choices=["graph", "flat"], default="graph", help_text="'flat' skips the graph (direct evidence retrieval)."
    )
    token_budget = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_TOKEN_BUDGET,
        help_text="The most evidence tokens each search may return.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "query" in attrs and "question" in attrs:
            raise ValidationFailed(
                "Send 'query' only: 'question' is its deprecated alias, and both were given.",
                details={"question": ["Deprecated alias of 'query'; remove it."]},
            )
        if "question" in attrs:
            attrs["query"] = attrs.pop("question")
            attrs["deprecated_alias"] = True
        elif "query" not in attrs:
            raise serializers.ValidationError({"query": ["This field is required."]})
        return attrs


class AnswerBudgetsSerializer(serializers.Serializer[Any]):
    base_rows = serializers.IntegerField()
    cited_rows = serializers.IntegerField()


class AnswerPlanSerializer(serializers.Serializer[Plan]):
    operator = serializers.CharField()
    relations = serializers.SerializerMethodField()
    answer_types = serializers.ListField(child=serializers.CharField())
    entities = serializers.ListField(child=serializers.CharField())
    objects = serializers.ListField(child=serializers.CharField())
    counted = serializers.CharField(allow_null=True)
    future = serializers.BooleanField()
    budgets = AnswerBudgetsSerializer()

    def get_relations(self, plan: Plan) -> list[str]:
        return [family.name for family in plan.relations]


class AnswerCheckSerializer(serializers.Serializer[Any]):
    fired = serializers.ListField(
        child=serializers.CharField(), source="check_rules", help_text="The answer check's rules that fired."
    )
    rewritten = serializers.BooleanField(help_text="A fired check added one search and one rewrite.")


class CitedRowSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    current = serializers.BooleanField(help_text="No later row supersedes this one.")
    superseded_by = serializers.CharField(allow_null=True, help_text="The row that replaced this one.")
    valid_from = serializers.DateTimeField(allow_null=True, help_text="Event time, else mention time.")
    valid_to = serializers.DateTimeField(allow_null=True, help_text="The valid_from of the row that replaced this one.")
    metadata = MetadataField(help_text="The tags of the write that produced the row.")


class AnswerSerializer(serializers.Serializer[Any]):
    answer = serializers.CharField()
    cited_row_ids = serializers.ListField(
        child=serializers.CharField(), help_text="Evidence rows the answer rests on; only rows it was shown."
    )
    cited_rows = CitedRowSerializer(many=True, help_text="The cited rows with their currency, in the same order.")
    searches = serializers.IntegerField()
    check = AnswerCheckSerializer(source="*")
    plan = AnswerPlanSerializer()
    fallback = serializers.BooleanField(help_text="A graph read failed and direct evidence retrieval answered.")


class AnswerApi(SubjectApiView):
    """An answer to a question from the subject's memories, citing the rows it rests on: at most
    five searches, a rule-based answer check, and at most one more search and rewrite."""

    parser_classes = [StrictJSONParser]
    required_scopes = {"POST": {"memories:read"}}
    audit_actions = {"POST": "memory.answer"}
    replica_reads = frozenset({"POST"})

    @extend_schema(request=AnswerInputSerializer, responses=AnswerSerializer, operation_id=ANSWER_OPERATION)
    def post(self, request: Request, external_id: str) -> Response:
        subject = self.subject(external_id)
        payload = AnswerInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        organization_id = self.organization_id
        result = answer_question(
            subject=subject,
            question=payload.validated_data["query"],
            mode=payload.validated_data["mode"],
            token_budget=payload.validated_data.get("token_budget"),
            embedder=query_embedder(organization_id),
            answerer=answer_llm_for(organization_id, override=provider_override(organization_id=organization_id)),
            metering=request_metering(organization_id=organization_id, api_key_id=self.principal.api_key_id),
        )
        self.audit_targets = list(result.cited_row_ids)
        response = Response(AnswerSerializer(result).data)
        if payload.validated_data.get("deprecated_alias"):
            mark_deprecated(response, operation_id=ANSWER_OPERATION)
        return response
