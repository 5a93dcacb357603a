from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.platform.fields import JSONBooleanField
from apps.webhooks.models import WebhookDelivery

MAX_FILTER_ITEMS = 50


def _event_type_list(*, required: bool) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=64),
        max_length=MAX_FILTER_ITEMS,
        required=required,
        help_text="Event types, or ['*'] for every type.",
    )


class EndpointInputSerializer(serializers.Serializer[dict[str, Any]]):
    url = serializers.CharField(max_length=2000)
    event_types = _event_type_list(required=True)
    include_content_for = _event_type_list(required=False)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    enabled = JSONBooleanField(required=False, default=True)


class EndpointUpdateSerializer(serializers.Serializer[dict[str, Any]]):
    url = serializers.CharField(max_length=2000, required=False)
    event_types = _event_type_list(required=False)
    include_content_for = _event_type_list(required=False)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True)
    enabled = JSONBooleanField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError(f"Give at least one of {sorted(self.fields)}.")
        return attrs


class RotateSecretInputSerializer(serializers.Serializer[dict[str, Any]]):
    overlap_seconds = serializers.IntegerField(
        min_value=0, max_value=7 * 24 * 3600, required=False, allow_null=True, default=None
    )


class EndpointOutputSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    url = serializers.CharField()
    description = serializers.CharField()
    event_types = serializers.ListField(child=serializers.CharField())
    include_content_for = serializers.ListField(child=serializers.CharField())
    enabled = serializers.BooleanField()
    disabled_reason = serializers.CharField()
    disabled_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class IssuedSecretOutputSerializer(serializers.Serializer[Any]):
    endpoint = EndpointOutputSerializer()
    secret = serializers.CharField(help_text="The signing secret (whsec_…). Shown once; store it now.")
    previous_secret_expires_at = serializers.DateTimeField(
        allow_null=True, help_text="Until then the previous secret signs too (rotation only)."
    )


class AttemptOutputSerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    latency_ms = serializers.IntegerField()
    status_code = serializers.IntegerField(allow_null=True)
    response_snippet = serializers.CharField()
    error = serializers.CharField()


class DeliveryOutputSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    endpoint_id = serializers.UUIDField()
    event_id = serializers.UUIDField(help_text="Sent as the webhook-id header.")
    event_type = serializers.CharField(source="event.event_type")
    status = serializers.CharField()
    attempt_count = serializers.IntegerField()
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    last_status_code = serializers.IntegerField(allow_null=True)
    failure_reason = serializers.CharField()
    delivered_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    attempts = AttemptOutputSerializer(many=True, source="attempts.all")


class DeliveryListQuerySerializer(serializers.Serializer[dict[str, Any]]):
    status = serializers.ChoiceField(choices=WebhookDelivery.Status.choices, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    cursor = serializers.CharField(required=False, max_length=200)


class DeliveryPageSerializer(serializers.Serializer[dict[str, Any]]):
    results = DeliveryOutputSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class EventTypeOutputSerializer(serializers.Serializer[Any]):
    type = serializers.CharField()
    description = serializers.CharField()
