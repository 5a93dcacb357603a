from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.consent.purposes import PURPOSES


class ConsentStateSerializer(serializers.Serializer[Any]):
    purpose = serializers.CharField()
    granted = serializers.BooleanField()
    version = serializers.IntegerField(help_text="0: the default, never changed.")
    is_default = serializers.BooleanField(help_text="Never changed: the purpose's default applies.")
    changed_at = serializers.DateTimeField(allow_null=True)
    changed_by = serializers.CharField(allow_null=True)


class ConsentRecordSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    purpose = serializers.CharField()
    version = serializers.IntegerField()
    granted = serializers.BooleanField()
    actor = serializers.CharField()
    created_at = serializers.DateTimeField()


class ConsentOutputSerializer(serializers.Serializer[Any]):
    subject = serializers.CharField(help_text="The subject's external id.")
    purposes = ConsentStateSerializer(many=True)
    history = ConsentRecordSerializer(many=True, help_text="Every change, oldest first.")


class ConsentUpdateInputSerializer(serializers.Serializer[dict[str, Any]]):
    purposes = serializers.DictField(
        child=serializers.BooleanField(),
        allow_empty=False,
        help_text=f"Purposes to grant (true) or withdraw (false), of {sorted(PURPOSES)}; others stay as they are.",
    )


class ConsentUpdateOutputSerializer(ConsentOutputSerializer):
    erasure_request_id = serializers.UUIDField(
        allow_null=True,
        help_text="Erasing what the withdrawn purposes covered; follow it at /v1/erasure-requests/{id}.",
    )
    job_id = serializers.UUIDField(allow_null=True)
