from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.platform.serializers import one_page, page_serializer
from apps.tenancy.api.base import OrganizationApiView
from apps.tenancy.api.cursors import decode_cursor, encode_cursor
from apps.webhooks import events, selectors, services
from apps.webhooks.api.serializers import (
    DeliveryListQuerySerializer,
    DeliveryOutputSerializer,
    DeliveryPageSerializer,
    EndpointInputSerializer,
    EndpointOutputSerializer,
    EndpointUpdateSerializer,
    EventTypeOutputSerializer,
    IssuedSecretOutputSerializer,
    RotateSecretInputSerializer,
)

ADMIN = {"admin"}


class WebhookEventTypesApi(OrganizationApiView):
    required_scopes = {"GET": ADMIN}

    @extend_schema(
        responses=page_serializer("EventTypePage", EventTypeOutputSerializer), operation_id="webhooks_event_types_list"
    )
    def get(self, request: Request) -> Response:
        types = [{"type": name, "description": text} for name, text in events.EVENT_TYPES.items()]
        return Response(one_page(EventTypeOutputSerializer(types, many=True).data))


class WebhookEndpointListCreateApi(OrganizationApiView):
    required_scopes = {"GET": ADMIN, "POST": ADMIN}
    audit_actions = {"POST": "webhook_endpoint.create"}
    secret_responses = frozenset({"POST"})

    @extend_schema(
        responses=page_serializer("EndpointPage", EndpointOutputSerializer),
        operation_id="webhooks_endpoints_list",
        description="Every endpoint of the organization, in one page.",
    )
    def get(self, request: Request) -> Response:
        return Response(one_page(EndpointOutputSerializer(selectors.webhook_endpoint_list(), many=True).data))

    @extend_schema(
        request=EndpointInputSerializer,
        responses={201: IssuedSecretOutputSerializer},
        operation_id="webhooks_endpoints_create",
    )
    def post(self, request: Request) -> Response:
        payload = EndpointInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        issued = services.webhook_endpoint_create(organization_id=self.organization_id, **payload.validated_data)
        self.audit_targets = [str(issued.endpoint.id)]
        return Response(IssuedSecretOutputSerializer(issued).data, status=201)


class WebhookEndpointDetailApi(OrganizationApiView):
    required_scopes = {"GET": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN}
    audit_actions = {"PATCH": "webhook_endpoint.update", "DELETE": "webhook_endpoint.delete"}

    @extend_schema(responses=EndpointOutputSerializer, operation_id="webhooks_endpoints_get")
    def get(self, request: Request, endpoint_id: uuid.UUID) -> Response:
        return Response(EndpointOutputSerializer(selectors.webhook_endpoint_get(endpoint_id=endpoint_id)).data)

    @extend_schema(
        request=EndpointUpdateSerializer, responses=EndpointOutputSerializer, operation_id="webhooks_endpoints_update"
    )
    def patch(self, request: Request, endpoint_id: uuid.UUID) -> Response:
        payload = EndpointUpdateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        endpoint = services.webhook_endpoint_update(
            organization_id=self.organization_id, endpoint_id=endpoint_id, **payload.validated_data
        )
        self.audit_targets = [str(endpoint.id)]
        return Response(EndpointOutputSerializer(endpoint).data)

    @extend_schema(request=None, responses={204: None}, operation_id="webhooks_endpoints_delete")
    def delete(self, request: Request, endpoint_id: uuid.UUID) -> Response:
        services.webhook_endpoint_delete(organization_id=self.organization_id, endpoint_id=endpoint_id)
        self.audit_targets = [str(endpoint_id)]
        return Response(status=204)


class WebhookEndpointRotateSecretApi(OrganizationApiView):
    required_scopes = {"POST": ADMIN}
    audit_actions = {"POST": "webhook_endpoint.rotate_secret"}
    secret_responses = frozenset({"POST"})

    @extend_schema(
        request=RotateSecretInputSerializer,
        responses={201: IssuedSecretOutputSerializer},
        operation_id="webhooks_endpoints_rotate_secret",
    )
    def post(self, request: Request, endpoint_id: uuid.UUID) -> Response:
        payload = RotateSecretInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        seconds = payload.validated_data["overlap_seconds"]
        issued = services.webhook_endpoint_rotate_secret(
            organization_id=self.organization_id,
            endpoint_id=endpoint_id,
            overlap=timedelta(seconds=seconds) if seconds is not None else None,
        )
        self.audit_targets = [str(endpoint_id)]
        return Response(IssuedSecretOutputSerializer(issued).data, status=201)


class WebhookEndpointPingApi(OrganizationApiView):
    required_scopes = {"POST": ADMIN}
    audit_actions = {"POST": "webhook_endpoint.ping"}

    @extend_schema(request=None, responses={202: DeliveryOutputSerializer}, operation_id="webhooks_endpoints_ping")
    def post(self, request: Request, endpoint_id: uuid.UUID) -> Response:
        delivery = services.webhook_endpoint_ping(organization_id=self.organization_id, endpoint_id=endpoint_id)
        self.audit_targets = [str(endpoint_id), str(delivery.id)]
        return Response(
            DeliveryOutputSerializer(selectors.webhook_delivery_get(delivery_id=delivery.id)).data, status=202
        )


class WebhookEndpointDeliveriesApi(OrganizationApiView):
    required_scopes = {"GET": ADMIN}

    @extend_schema(
        parameters=[DeliveryListQuerySerializer],
        responses=DeliveryPageSerializer,
        operation_id="webhooks_endpoints_deliveries_list",
    )
    def get(self, request: Request, endpoint_id: uuid.UUID) -> Response:
        query = DeliveryListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params: dict[str, Any] = query.validated_data
        limit = params["limit"]
        deliveries = selectors.webhook_delivery_list(
            endpoint_id=endpoint_id,
            status=params.get("status"),
            before=decode_cursor(params["cursor"]) if params.get("cursor") else None,
        )
        page = list(deliveries[: limit + 1])
        last = page[limit - 1] if len(page) > limit else None
        return Response(
            {
                "results": DeliveryOutputSerializer(page[:limit], many=True).data,
                "next_cursor": encode_cursor(last.created_at, last.id) if last else None,
            }
        )


class WebhookDeliveryDetailApi(OrganizationApiView):
    required_scopes = {"GET": ADMIN}

    @extend_schema(responses=DeliveryOutputSerializer, operation_id="webhooks_deliveries_get")
    def get(self, request: Request, delivery_id: uuid.UUID) -> Response:
        return Response(DeliveryOutputSerializer(selectors.webhook_delivery_get(delivery_id=delivery_id)).data)


class WebhookDeliveryReplayApi(OrganizationApiView):
    required_scopes = {"POST": ADMIN}
    audit_actions = {"POST": "webhook_delivery.replay"}

    @extend_schema(request=None, responses={202: DeliveryOutputSerializer}, operation_id="webhooks_deliveries_replay")
    def post(self, request: Request, delivery_id: uuid.UUID) -> Response:
        services.webhook_delivery_replay(organization_id=self.organization_id, delivery_id=delivery_id)
        self.audit_targets = [str(delivery_id)]
        return Response(
            DeliveryOutputSerializer(selectors.webhook_delivery_get(delivery_id=delivery_id)).data, status=202
        )
