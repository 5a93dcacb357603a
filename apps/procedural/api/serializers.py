from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.platform.fields import JSONBooleanField
from apps.procedural.models import Skill, SkillVersion

STEP_KINDS = ("thought", "action", "tool_call", "tool_result", "message")
MAX_STEPS = 200
MAX_STEP_CHARS = 16_000


class StepSerializer(serializers.Serializer[dict[str, Any]]):
    kind = serializers.ChoiceField(
        choices=STEP_KINDS, error_messages={"invalid_choice": f"step kind must be one of {list(STEP_KINDS)}."}
    )
    content = serializers.CharField(max_length=MAX_STEP_CHARS)
    tool = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)


class ScecSerializer(serializers.Serializer[dict[str, Any]]):
    """A self-contained execution context of the session (SEDM): enough to replay it."""

    reward_spec = serializers.DictField(
        help_text="kind: exact|contains|regex|json_schema|numeric, with expected / pattern / schema / tolerance."
    )
    inputs = serializers.DictField(required=False, default=dict)
    output = serializers.CharField(required=False, max_length=MAX_STEP_CHARS)
    tool_summaries = serializers.ListField(
        child=serializers.CharField(max_length=4000), required=False, default=list, max_length=200
    )
    seeds = serializers.ListField(child=serializers.IntegerField(), required=False, default=list, max_length=64)
    model_hash = serializers.CharField(max_length=128, required=False, allow_blank=True, default="")
    config_hash = serializers.CharField(max_length=128, required=False, allow_blank=True, default="")
    config = serializers.DictField(required=False, default=dict)
    executor = serializers.CharField(max_length=100, required=False, allow_null=True, default=None)
    content_hash = serializers.RegexField(r"^[0-9a-f]{64}$", required=False)


class SessionInputSerializer(serializers.Serializer[dict[str, Any]]):
    task = serializers.CharField(max_length=4000)
    domain = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$", default="general")
    steps = serializers.ListField(child=StepSerializer(), min_length=1, max_length=MAX_STEPS)
    final_output = serializers.CharField(max_length=MAX_STEP_CHARS, allow_blank=True)
    outcome = serializers.ChoiceField(choices=("success", "failure"), required=False, allow_null=True, default=None)
    scec = ScecSerializer(required=False, allow_null=True, default=None)


class SkillListQuerySerializer(serializers.Serializer[dict[str, Any]]):
    include_archived = serializers.BooleanField(default=False, help_text="Also archived, merged and deleted skills.")


class SkillSearchInputSerializer(serializers.Serializer[dict[str, Any]]):
    query = serializers.CharField(max_length=2000)
    domain = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    limit = serializers.IntegerField(min_value=1, max_value=20, default=5)
    token_budget = serializers.IntegerField(
        min_value=1, max_value=100_000, required=False, help_text="At most this many tokens of skill text in all."
    )


class FeedbackInputSerializer(serializers.Serializer[dict[str, Any]]):
    retrieval_id = serializers.UUIDField()
    items_used = serializers.ListField(child=serializers.UUIDField(), max_length=20)
    reward = serializers.FloatField(min_value=0.0, max_value=1.0, required=False, allow_null=True, default=None)
    success = JSONBooleanField(required=False, allow_null=True, default=None)
    latency_ms = serializers.IntegerField(min_value=0, max_value=86_400_000, default=0)
    tokens = serializers.IntegerField(min_value=0, max_value=10_000_000, default=0)


class SkillSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    name = serializers.CharField()
    domain = serializers.CharField()
    text = serializers.CharField()
    version = serializers.IntegerField()
    form = serializers.CharField()
    general_of = serializers.UUIDField(source="general_of_id", allow_null=True)
    merged_into = serializers.UUIDField(source="merged_into_id", allow_null=True)
    status = serializers.CharField()
    verified = serializers.BooleanField()
    verification = serializers.SerializerMethodField()
    weight = serializers.FloatField()
    uses = serializers.IntegerField()
    created_at = serializers.DateTimeField()

    def get_verification(self, skill: Skill) -> str:
        if skill.verified:
            return "A/B-verified by SEDM replay; the weight started at the admission score"
        return "unverified: no replayable SCEC; the weight started at the neutral prior"


class ScoredSkillSerializer(serializers.Serializer[Any]):
    skill = SkillSerializer()
    similarity = serializers.FloatField()
    score = serializers.FloatField()
    source_domain = serializers.CharField(source="skill.domain")


class SkillRetrievalSerializer(serializers.Serializer[Any]):
    retrieval_id = serializers.UUIDField(source="retrieval.id", help_text="Name it in feedback on these skills.")
    results = ScoredSkillSerializer(source="items", many=True)


class ScecReceiptSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    content_hash = serializers.CharField()
    stored = serializers.ChoiceField(choices=("inline", "object_storage"))
    size_bytes = serializers.IntegerField()


class SessionWrittenSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField(help_text="The task session.")
    status = serializers.CharField()
    scec = ScecReceiptSerializer(allow_null=True, help_text="The SCEC stored with the session, if one was sent.")
    pending_sessions = serializers.IntegerField(help_text="Sessions of the subject waiting for the next dream.")
    dream_job_id = serializers.UUIDField(allow_null=True, help_text="The dream this session started, if any.")


class FeedbackAcceptedSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    applied = serializers.BooleanField(help_text="Always false: the next evolution job applies it to the weights.")


class CitationSerializer(serializers.Serializer[Any]):
    experience_id = serializers.CharField()
    quote = serializers.CharField()


class SkillVersionSerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField()
    name = serializers.CharField()
    text = serializers.CharField()
    change = serializers.CharField()
    verification = serializers.CharField(
        help_text="A curator's edit: unverified (no SCEC; neutral prior), verifying, admitted (A/B replay, "
        "w0 = S) or rejected (never the skill's text). Empty for other versions."
    )
    created_at = serializers.DateTimeField()
    citations = serializers.SerializerMethodField()

    @extend_schema_field(CitationSerializer(many=True))
    def get_citations(self, version: SkillVersion) -> list[dict[str, str]]:
        return [
            {"experience_id": str(c.experience_id), "quote": c.quote}
            for c in sorted(version.citations.all(), key=lambda c: str(c.experience_id))
        ]


class SkillEventSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    sequence = serializers.IntegerField()
    kind = serializers.CharField()
    previous_weight = serializers.FloatField()
    weight = serializers.FloatField()
    previous_status = serializers.CharField()
    status = serializers.CharField()
    details = serializers.DictField()
    reverted_by = serializers.UUIDField(source="reverted_by_id", allow_null=True)
    created_at = serializers.DateTimeField()


class SkillDetailSerializer(SkillSerializer):
    """A skill with its version history and its weight and status events."""

    versions = SkillVersionSerializer(many=True)
    events = SkillEventSerializer(many=True)
