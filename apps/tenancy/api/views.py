from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.platform.serializers import one_page, page_serializer
from apps.tenancy import selectors, services
from apps.tenancy.api.base import OrganizationApiView
from apps.tenancy.api.cursors import decode_cursor, encode_cursor
from apps.tenancy.api.serializers import (
    ApiKeyInputSerializer,
    ApiKeyOutputSerializer,
    ApiKeyRotateInputSerializer,
    IssuedApiKeyOutputSerializer,
    OrganizationSettingsInputSerializer,
    OrganizationSettingsSerializer,
    SubjectInputSerializer,
    SubjectListOutputSerializer,
    SubjectListQuerySerializer,
    SubjectOutputSerializer,
)
from apps.tenancy.models import ApiKey

READ = {"memories:read"}
WRITE = {"memories:write"}
ADMIN = {"admin"}


class SubjectListCreateApi(OrganizationApiView):
    required_scopes = {"GET": READ, "POST": WRITE}
    audit_actions = {"POST": "subject.create"}

    @extend_schema(
        parameters=[SubjectListQuerySerializer],
        responses=SubjectListOutputSerializer,
        operation_id="subjects_list",
    )
    def get(self, request: Request) -> Response:
        query = SubjectListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params: dict[str, Any] = query.validated_data
        after = decode_cursor(params["cursor"]) if params.get("cursor") else None
        limit = params["limit"]
        page = list(selectors.subject_list(kind=params.get("kind"), after=after)[: limit + 1])
        next_cursor = encode_cursor(page[limit - 1].created_at, page[limit - 1].id) if len(page) > limit else None
        return Response({"results": SubjectOutputSerializer(page[:limit], many=True).data, "next_cursor": next_cursor})

    @extend_schema(
        request=SubjectInputSerializer, responses={201: SubjectOutputSerializer}, operation_id="subjects_create"
    )
    def post(self, request: Request) -> Response:
        payload = SubjectInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        subject = services.subject_create(organization_id=self.organization_id, **payload.validated_data)
        self.audit_subject_id = subject.id
        return Response(SubjectOutputSerializer(subject).data, status=201)


class ApiKeyListCreateApi(OrganizationApiView):
    required_scopes = {"GET": ADMIN, "POST": ADMIN}
    audit_actions = {"POST": "api_key.create"}
    secret_responses = frozenset({"POST"})

    @extend_schema(
        responses=page_serializer("ApiKeyPage", ApiKeyOutputSerializer),
        operation_id="keys_list",
        description="Every key of the organization, oldest first, in one page.",
    )
    def get(self, request: Request) -> Response:
        return Response(one_page(ApiKeyOutputSerializer(selectors.api_key_list(), many=True).data))

    @extend_schema(
        request=ApiKeyInputSerializer, responses={201: IssuedApiKeyOutputSerializer}, operation_id="keys_create"
    )
    def post(self, request: Request) -> Response:
        payload = ApiKeyInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        issued = services.api_key_create(organization_id=self.organization_id, **payload.validated_data)
        self.audit_targets = [str(issued.api_key.id)]
        return Response(IssuedApiKeyOutputSerializer(issued).data, status=201)


class ApiKeyRevokeApi(OrganizationApiView):
    required_scopes = {"POST": ADMIN}
    audit_actions = {"POST": "api_key.revoke"}

    @extend_schema(request=None, responses=ApiKeyOutputSerializer, operation_id="keys_revoke")
    def post(self, request: Request, api_key_id: uuid.UUID) -> Response:
        api_key: ApiKey = services.api_key_revoke(organization_id=self.organization_id, api_key_id=api_key_id)
        self.audit_targets = [str(api_key.id)]
        return Response(ApiKeyOutputSerializer(api_key).data)


class ApiKeyRotateApi(OrganizationApiView):
    required_scopes = {"POST": ADMIN}
    audit_actions = {"POST": "api_key.rotate"}
    secret_responses = frozenset({"POST"})

    @extend_schema(
        request=ApiKeyRotateInputSerializer,
        responses={201: IssuedApiKeyOutputSerializer},
        operation_id="keys_rotate",
        parameters=[OpenApiParameter("api_key_id", str, OpenApiParameter.PATH)],
    )
    def post(self, request: Request, api_key_id: uuid.UUID) -> Response:
        payload = ApiKeyRotateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        seconds = payload.validated_data["overlap_seconds"]
        issued = services.api_key_rotate(
            organization_id=self.organization_id,
            api_key_id=api_key_id,
            overlap=timedelta(seconds=seconds) if seconds is not None else None,
        )
        self.audit_targets = [str(api_key_id), str(issued.api_key.id)]
        return Response(IssuedApiKeyOutputSerializer(issued).data, status=201)


class OrganizationSettingsApi(OrganizationApiView):
    """The calling key's organization and the settings it may change."""

    required_scopes = {"GET": ADMIN, "PATCH": ADMIN}
    audit_actions = {"PATCH": "organization.settings.update"}

    @extend_schema(responses=OrganizationSettingsSerializer, operation_id="organization_get")
    def get(self, request: Request) -> Response:
        return Response(
            OrganizationSettingsSerializer(selectors.organization_get(organization_id=self.organization_id)).data
        )

    @extend_schema(
        request=OrganizationSettingsInputSerializer,
        responses=OrganizationSettingsSerializer,
        operation_id="organization_update",
    )
    def patch(self, request: Request) -> Response:
        payload = OrganizationSettingsInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        organization = services.organization_settings_update(
            organization_id=self.organization_id, **payload.validated_data
        )
        self.audit_targets = [f"subjects_created_on_write:{organization.subjects_created_on_write}"]
        return Response(OrganizationSettingsSerializer(organization).data)
