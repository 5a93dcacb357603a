"""The console's base views. Every page goes through one of them; handlers stay thin.

``OrganizationView`` resolves the organization once, from the URL, through ``access`` (404
for an organization that is not the user's), and runs the whole handler in the organization's
scope (the application role under RLS, one transaction) acting as the staff user. A POST
needs an acting role and names its audit action in ``audit_actions``: the entry is appended
in the same transaction as the change. Pages render inside the scope (never lazily after it),
and an application error rolls the transaction back and renders as a page with its status.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from django.contrib.auth.views import redirect_to_login
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.views import View

from apps.audit.services import acting_as, audit_record
from apps.console.access import OrganizationAccess, is_console_user, organization_access, require_action
from apps.console.access import require_superuser as access_require_superuser
from apps.console.extensions import SECTIONS, SUBJECT_TABS
from apps.platform.errors import ApplicationError
from apps.tenancy.scope import organization_scope


def staff_actor(user_id: Any) -> str:
    return f"staff:{user_id}"


class ConsoleView(View):
    template_name: ClassVar[str] = ""
    audit_actions: ClassVar[dict[str, str]] = {}
    section: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "dispatch" in vars(cls):
            raise TypeError(f"{cls.__name__} must not override dispatch: access checks live in the base class")
        if hasattr(cls, "post") and "POST" not in cls.audit_actions:
            raise TypeError(f"{cls.__name__} must declare audit_actions for POST")

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not is_console_user(request.user):
            return redirect_to_login(request.get_full_path())
        try:
            return self.guarded(request, **kwargs)
        except ApplicationError as exc:
            return self.error_page(request, status=exc.status_code, message=exc.message)

    def guarded(self, request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        return super().dispatch(request, **kwargs)

    def context(self) -> dict[str, Any]:
        return {}

    def page(self, request: HttpRequest, context: dict[str, Any] | None = None, *, status: int = 200) -> HttpResponse:
        return render(
            request, self.template_name, {**self.context(), "section": self.section, **(context or {})}, status=status
        )

    def error_page(self, request: HttpRequest, *, status: int, message: str) -> HttpResponse:
        return render(
            request, "console/error.html", {**self.context(), "status": status, "message": message}, status=status
        )


class PlatformView(ConsoleView):
    """A page about no single organization. ``superuser_only`` pages are 404 to everyone else."""

    superuser_only: ClassVar[bool] = True

    def guarded(self, request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        if self.superuser_only:
            access_require_superuser(request.user)
        return super().guarded(request, **kwargs)


class OrganizationView(ConsoleView):
    access: OrganizationAccess
    audit_subject_id: uuid.UUID | None
    audit_targets: list[str]

    @property
    def organization_id(self) -> uuid.UUID:
        return self.access.organization.id

    def context(self) -> dict[str, Any]:
        access = getattr(self, "access", None)
        organization = access.organization if access else None
        return {"access": access, "organization": organization, "sections": SECTIONS, "subject_tabs": SUBJECT_TABS}

    def guarded(self, request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        organization_id = kwargs.pop("org_id")
        self.access = organization_access(request.user, organization_id)
        if request.method == "POST":
            require_action(self.access)
        self.audit_subject_id, self.audit_targets = None, []
        with organization_scope(organization_id), acting_as(staff_actor(request.user.pk)):
            response = super().guarded(request, **kwargs)
            action = self.audit_actions.get(request.method or "")
            if response.status_code >= 400:
                transaction.set_rollback(True)  # a refused form writes nothing
            elif action:
                audit_record(
                    organization_id=organization_id,
                    action=action,
                    subject_id=self.audit_subject_id,
                    target_ids=self.audit_targets,
                )
        return response
