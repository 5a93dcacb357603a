"""Webhook endpoints (the secret is shown once), enable/disable, rotation, ping; deliveries
with their attempts, and manual replay — through the webhook services."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from apps.console.forms import WebhookEndpointCreateForm
from apps.console.views.base import OrganizationView
from apps.webhooks import selectors, services

DELIVERY_PAGE = 50


class WebhookEndpointListView(OrganizationView):
    template_name = "console/webhooks.html"
    section = "webhooks"
    audit_actions = {"POST": "console.webhook_endpoint.create"}

    def _page(
        self, request: HttpRequest, form: WebhookEndpointCreateForm, *, status: int = 200, **extra: object
    ) -> HttpResponse:
        context = {"endpoints": list(selectors.webhook_endpoint_list()), "form": form, **extra}
        return self.page(request, context, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._page(request, WebhookEndpointCreateForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = WebhookEndpointCreateForm(request.POST)
        if not form.is_valid():
            return self._page(request, form, status=400)
        issued = services.webhook_endpoint_create(organization_id=self.organization_id, **form.cleaned_data)
        self.audit_targets = [str(issued.endpoint.id)]
        return self._page(request, WebhookEndpointCreateForm(), issued=issued)


class WebhookEndpointDetailView(OrganizationView):
    template_name = "console/webhook_endpoint.html"
    section = "webhooks"

    def get(self, request: HttpRequest, endpoint_id: uuid.UUID) -> HttpResponse:
        endpoint = selectors.webhook_endpoint_get(endpoint_id=endpoint_id)
        deliveries = list(selectors.webhook_delivery_list(endpoint_id=endpoint.id)[:DELIVERY_PAGE])
        return self.page(request, {"endpoint": endpoint, "deliveries": deliveries})


class WebhookEndpointEnableView(OrganizationView):
    audit_actions = {"POST": "console.webhook_endpoint.update"}

    def post(self, request: HttpRequest, endpoint_id: uuid.UUID) -> HttpResponse:
        enabled = request.POST.get("enabled") == "true"
        endpoint = services.webhook_endpoint_update(
            organization_id=self.organization_id, endpoint_id=endpoint_id, enabled=enabled
        )
        self.audit_targets = [str(endpoint.id)]
        messages.success(request, f"Endpoint {'enabled' if enabled else 'disabled'}.")
        return redirect("console:webhook-endpoint", org_id=self.organization_id, endpoint_id=endpoint.id)


class WebhookEndpointRotateView(OrganizationView):
    template_name = "console/webhook_endpoint.html"
    section = "webhooks"
    audit_actions = {"POST": "console.webhook_endpoint.rotate_secret"}

    def post(self, request: HttpRequest, endpoint_id: uuid.UUID) -> HttpResponse:
        issued = services.webhook_endpoint_rotate_secret(organization_id=self.organization_id, endpoint_id=endpoint_id)
        self.audit_targets = [str(endpoint_id)]
        deliveries = list(selectors.webhook_delivery_list(endpoint_id=endpoint_id)[:DELIVERY_PAGE])
        return self.page(request, {"endpoint": issued.endpoint, "deliveries": deliveries, "issued": issued})


class WebhookEndpointPingView(OrganizationView):
    audit_actions = {"POST": "console.webhook_endpoint.ping"}

    def post(self, request: HttpRequest, endpoint_id: uuid.UUID) -> HttpResponse:
        delivery = services.webhook_endpoint_ping(organization_id=self.organization_id, endpoint_id=endpoint_id)
        self.audit_targets = [str(endpoint_id), str(delivery.id)]
        messages.success(request, "Ping queued.")
        return redirect("console:webhook-endpoint", org_id=self.organization_id, endpoint_id=endpoint_id)


class WebhookDeliveryReplayView(OrganizationView):
    audit_actions = {"POST": "console.webhook_delivery.replay"}

    def post(self, request: HttpRequest, delivery_id: uuid.UUID) -> HttpResponse:
        delivery = services.webhook_delivery_replay(organization_id=self.organization_id, delivery_id=delivery_id)
        self.audit_targets = [str(delivery.id)]
        messages.success(request, "Delivery queued again.")
        return redirect("console:webhook-endpoint", org_id=self.organization_id, endpoint_id=delivery.endpoint_id)
