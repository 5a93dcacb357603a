from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.platform.errors import ValidationFailed
from apps.tenancy.api.base import OrganizationApiView
from apps.usage.api.serializers import UsageQuerySerializer, UsageReportSerializer
from apps.usage.periods import PeriodError, period_resolve
from apps.usage.selectors import usage_report


class UsageApi(OrganizationApiView):
    """What the organization used, per UTC day and API key: requests by operation, rows
    written, model tokens; and now: storage and the monthly quota."""

    required_scopes = {"GET": {"admin"}}

    @extend_schema(
        parameters=[UsageQuerySerializer],
        responses=UsageReportSerializer,
        operation_id="usage_get",
    )
    def get(self, request: Request) -> Response:
        query = UsageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params: dict[str, Any] = query.validated_data
        try:
            period = period_resolve(first=params.get("from"), last=params.get("to"), today=timezone.now().date())
        except PeriodError as exc:
            raise ValidationFailed(str(exc)) from exc
        report = usage_report(organization_id=self.organization_id, period=period, api_key_id=params.get("key"))
        return Response(UsageReportSerializer(report).data)
