from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.providers import selectors, services
from apps.tenancy.api.base import OrganizationApiView


class ProviderConfigInputSerializer(serializers.Serializer[dict[str, Any]]):
    # Sent as an HTTP header (Authorization: Bearer …), so printable ASCII without spaces only.
    api_key = serializers.RegexField(
        r"^[\x21-\x7e]+$",
        max_length=500,
        help_text="Stored encrypted; never returned.",
        error_messages={"invalid": "An API key is printable ASCII without spaces (it is sent as an HTTP header)."},
    )
    base_url = serializers.URLField(max_length=500, required=False, allow_blank=True, default="")
    model = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class ProviderConfigOutputSerializer(serializers.Serializer[Any]):
    configured = serializers.BooleanField()
    base_url = serializers.CharField(allow_blank=True)
    model = serializers.CharField(allow_blank=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class ProviderConfigApi(OrganizationApiView):
    """The organization's own OpenAI-compatible endpoint for its model calls (optional)."""

    required_scopes = {"GET": {"admin"}, "PUT": {"admin"}, "DELETE": {"admin"}}
    audit_actions = {"PUT": "provider_config.set", "DELETE": "provider_config.clear"}

    def _state(self) -> dict[str, Any]:
        config = selectors.provider_config_get(organization_id=self.organization_id)
        return {
            "configured": config is not None,
            "base_url": config.base_url if config else "",
            "model": config.model if config else "",
            "updated_at": config.updated_at if config else None,
        }

    @extend_schema(responses=ProviderConfigOutputSerializer, operation_id="providers_config_get")
    def get(self, request: Request) -> Response:
        return Response(ProviderConfigOutputSerializer(self._state()).data)

    @extend_schema(
        request=ProviderConfigInputSerializer,
        responses=ProviderConfigOutputSerializer,
        operation_id="providers_config_set",
    )
    def put(self, request: Request) -> Response:
        payload = ProviderConfigInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        services.provider_config_set(organization_id=self.organization_id, **payload.validated_data)
        return Response(ProviderConfigOutputSerializer(self._state()).data)

    @extend_schema(responses={204: None}, operation_id="providers_config_clear")
    def delete(self, request: Request) -> Response:
        services.provider_config_clear(organization_id=self.organization_id)
        return Response(status=204)
