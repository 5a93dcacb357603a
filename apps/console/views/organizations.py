"""Organizations: the list a user may see, an overview, and offboarding (superusers)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import redirect
from django.utils import timezone

from apps.audit.services import acting_as, audit_record
from apps.console.access import organization_access, organizations_visible, require_superuser
from apps.console.forms import OrganizationOffboardForm
from apps.console.selectors import organization_overview
from apps.console.views.base import ConsoleView, OrganizationView, PlatformView, staff_actor
from apps.erasure import services as erasure_services
from apps.erasure.models import ErasureRequest
from apps.erasure.receipt import key_id, receipt_sha256
from apps.erasure.selectors import erasure_receipt_signed, receipt_public_key
from apps.platform.errors import NotFound
from apps.tenancy.scope import organization_scope
from apps.usage.chart import bar_chart
from apps.usage.periods import period_resolve
from apps.usage.selectors import usage_report


class OrganizationListView(PlatformView):
    superuser_only = False
    template_name = "console/organizations.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(request, {"organizations": organizations_visible(request.user)})


class OrganizationDetailView(OrganizationView):
    template_name = "console/organization.html"
    section = "overview"

    def get(self, request: HttpRequest) -> HttpResponse:
        overview = organization_overview(organization_id=self.organization_id)
        period = period_resolve(first=None, last=None, today=timezone.now().date())  # the last 30 days
        usage = usage_report(organization_id=self.organization_id, period=period)
        context = {
            "overview": overview,
            "usage": usage,
            "requests_chart": bar_chart([(day.date.isoformat(), day.requests) for day in usage.days]),
            "offboard_form": OrganizationOffboardForm(slug=""),
        }
        return self.page(request, context)


class OrganizationOffboardView(ConsoleView):
    """Erase an organization and everything it owns (a platform operation on the owner
    connection, run outside any organization transaction). The receipt outlives it."""

    template_name = "console/organization.html"
    audit_actions = {"POST": "console.organization.offboard"}

    def guarded(self, request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        self.target = organization_access(request.user, kwargs.pop("org_id")).organization
        require_superuser(request.user)
        return super().guarded(request, **kwargs)

    def post(self, request: HttpRequest) -> HttpResponse:
        organization_id, slug = self.target.id, self.target.slug
        form = OrganizationOffboardForm(request.POST, slug=slug)
        if not form.is_valid():
            return self.error_page(
                request, status=400, message=" ".join(str(e) for e in form.errors.get("confirm", []))
            )
        with acting_as(staff_actor(request.user.pk)):
            erasure = erasure_services.organization_erase(organization_id=organization_id)
            with organization_scope(organization_id):
                audit_record(
                    organization_id=organization_id, action=self.audit_actions["POST"], target_ids=[str(erasure.id)]
                )
        messages.success(request, f"Organization {slug} was offboarded.")
        return redirect("console:offboarded-detail", request_id=erasure.id)


class OffboardedListView(PlatformView):
    template_name = "console/offboarded.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        requests = (
            ErasureRequest.objects.dangerously_across_organizations()
            .filter(kind=ErasureRequest.Kind.ORGANIZATION)
            .order_by("-requested_at")[:100]
        )
        return self.page(request, {"requests": list(requests)})


def _offboarding(request_id: uuid.UUID) -> ErasureRequest:
    erasure = (
        ErasureRequest.objects.dangerously_across_organizations()
        .filter(id=request_id, kind=ErasureRequest.Kind.ORGANIZATION)
        .first()
    )
    if erasure is None:
        raise NotFound("No such offboarding.")
    return erasure


class OffboardedDetailView(PlatformView):
    template_name = "console/receipt.html"

    def get(self, request: HttpRequest, request_id: uuid.UUID) -> HttpResponse:
        require_superuser(request.user)
        context = receipt_context(_offboarding(request_id))
        return self.page(request, {**context, "download_url_name": "console:offboarded-receipt"})


class OffboardedReceiptView(PlatformView):
    def get(self, request: HttpRequest, request_id: uuid.UUID) -> HttpResponse:
        require_superuser(request.user)
        return receipt_download(_offboarding(request_id))


def receipt_context(erasure: ErasureRequest) -> dict[str, Any]:
    receipt = erasure.receipt
    verifies = isinstance(receipt, dict) and receipt_sha256(receipt) == erasure.receipt_sha256
    public_key = receipt_public_key()
    return {
        "erasure": erasure,
        "receipt_verifies": verifies,
        "receipt_json": json.dumps(receipt, indent=2, sort_keys=True) if isinstance(receipt, dict) else "",
        "receipt_public_key": public_key,
        "receipt_key_id": key_id(public_key),
        "counts": sorted(erasure.counts.items()),
    }


def receipt_download(erasure: ErasureRequest) -> JsonResponse:
    """The signed receipt as a JSON file (docs/erasure-receipts.md says how to verify it)."""
    response = JsonResponse(erasure_receipt_signed(erasure=erasure), json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="erasure-receipt-{erasure.id}.json"'
    return response
