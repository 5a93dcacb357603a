from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from apps.platform.fields import BoundedDictField, JSONBooleanField
from apps.platform.serializers import StrictFieldsSerializer
from apps.tenancy import keys
from apps.tenancy.models import EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE, Subject

MAX_SUBJECT_METADATA_BYTES = 16 * 1024


class SubjectInputSerializer(serializers.Serializer[dict[str, object]]):
    external_id = serializers.RegexField(
        EXTERNAL_ID_PATTERN,
        error_messages={"invalid": EXTERNAL_ID_RULE},
    )
    kind = serializers.ChoiceField(choices=Subject.Kind.choices)
    display_name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    metadata = BoundedDictField(max_bytes=MAX_SUBJECT_METADATA_BYTES, required=False, default=dict)


class SubjectUpdateSerializer(StrictFieldsSerializer):
    display_name = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        help_text="What questions and the graph's facts call the subject; its unnamed user turns speak as "
        "it (ADR 0095). A change re-indexes the subject's graph.",
    )
    metadata = BoundedDictField(
        max_bytes=MAX_SUBJECT_METADATA_BYTES, required=False, help_text="Replaces the subject's metadata."
    )
    unknown_field_hints = {"external_id": "an external id never changes", "kind": "a kind never changes"}


class SubjectOutputSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    external_id = serializers.CharField()
    kind = serializers.CharField()
    display_name = serializers.CharField()
    metadata = serializers.DictField()
    created_at = serializers.DateTimeField()


class SubjectListQuerySerializer(serializers.Serializer[dict[str, object]]):
    kind = serializers.ChoiceField(choices=Subject.Kind.choices, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    cursor = serializers.CharField(required=False, max_length=200)


class SubjectListOutputSerializer(serializers.Serializer[dict[str, object]]):
    results = SubjectOutputSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class ApiKeyInputSerializer(serializers.Serializer[dict[str, object]]):
    name = serializers.CharField(max_length=200)
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=keys.SCOPES), min_length=1)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    rate_limit_per_minute = serializers.IntegerField(
        min_value=1, max_value=100_000, required=False, allow_null=True, default=None
    )


class ApiKeyRotateInputSerializer(serializers.Serializer[dict[str, object]]):
    overlap_seconds = serializers.IntegerField(
        min_value=0, max_value=30 * 24 * 3600, required=False, allow_null=True, default=None
    )


class ApiKeyOutputSerializer(serializers.Serializer[object]):
    id = serializers.UUIDField()
    name = serializers.CharField()
    prefix = serializers.SerializerMethodField()
    scopes = serializers.ListField(child=serializers.CharField())
    expires_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)
    rotated_from = serializers.UUIDField(source="rotated_from_id", allow_null=True)
    created_at = serializers.DateTimeField()

    def get_prefix(self, obj: object) -> str:
        return f"{settings.API_KEY_PREFIX}{obj.lookup_id}"  # type: ignore[attr-defined]


class IssuedApiKeyOutputSerializer(serializers.Serializer[object]):
    api_key = ApiKeyOutputSerializer()
    secret = serializers.CharField(help_text="The full key. Shown once; store it now.")


class OrganizationSettingsSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField(read_only=True)
    name = serializers.CharField(read_only=True)
    slug = serializers.CharField(read_only=True)
    subjects_created_on_write = serializers.BooleanField(
        help_text="A write to an unknown subject external_id creates the subject (default true); "
        "off, such a write is a 404 and subjects come only from POST /v1/subjects."
    )


class OrganizationSettingsInputSerializer(StrictFieldsSerializer):
    subjects_created_on_write = JSONBooleanField()
