"""API keys: list, create (the key is shown once), revoke, rotate — through the tenancy services."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from apps.console.forms import ApiKeyCreateForm, ApiKeyRotateForm
from apps.console.views.base import OrganizationView
from apps.tenancy import selectors, services


class ApiKeyListView(OrganizationView):
    template_name = "console/api_keys.html"
    section = "keys"
    audit_actions = {"POST": "console.api_key.create"}

    def _page(
        self, request: HttpRequest, form: ApiKeyCreateForm, *, status: int = 200, **extra: object
    ) -> HttpResponse:
        return self.page(request, {"keys": list(selectors.api_key_list()), "form": form, **extra}, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._page(request, ApiKeyCreateForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = ApiKeyCreateForm(request.POST)
        if not form.is_valid():
            return self._page(request, form, status=400)
        issued = services.api_key_create(organization_id=self.organization_id, **form.cleaned_data)
        self.audit_targets = [str(issued.api_key.id)]
        # Rendered, not redirected: the key is shown in this response only and stored nowhere.
        return self._page(request, ApiKeyCreateForm(), issued=issued)


class ApiKeyRevokeView(OrganizationView):
    audit_actions = {"POST": "console.api_key.revoke"}

    def post(self, request: HttpRequest, api_key_id: uuid.UUID) -> HttpResponse:
        api_key = services.api_key_revoke(organization_id=self.organization_id, api_key_id=api_key_id)
        self.audit_targets = [str(api_key.id)]
        messages.success(request, f"Key {api_key.name} ({api_key.lookup_id}) is revoked.")
        return redirect("console:api-keys", org_id=self.organization_id)


class ApiKeyRotateView(OrganizationView):
    template_name = "console/api_keys.html"
    section = "keys"
    audit_actions = {"POST": "console.api_key.rotate"}

    def post(self, request: HttpRequest, api_key_id: uuid.UUID) -> HttpResponse:
        form = ApiKeyRotateForm(request.POST)
        if not form.is_valid():
            return self.error_page(request, status=400, message="overlap_seconds must be 0 to 2592000.")
        seconds = form.cleaned_data["overlap_seconds"]
        issued = services.api_key_rotate(
            organization_id=self.organization_id,
            api_key_id=api_key_id,
            overlap=timedelta(seconds=seconds) if seconds is not None else None,
        )
        self.audit_targets = [str(api_key_id), str(issued.api_key.id)]
        context = {"keys": list(selectors.api_key_list()), "form": ApiKeyCreateForm(), "issued": issued}
        return self.page(request, context)
