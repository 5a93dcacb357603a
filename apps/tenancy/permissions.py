from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from apps.tenancy.authentication import ApiKeyPrincipal


class HasRequiredScopes(BasePermission):
    """The view declares ``required_scopes = {"GET": {...}, "POST": {...}}``; missing → 403.

    Fails closed: a method the view answers but declares no scopes for is refused (HEAD is
    checked as GET, see ``OrganizationApiView.scopes_for``); a method the view does not answer
    passes on to DRF's 405."""

    message = "The API key lacks a required scope."

    def has_permission(self, request: Request, view: Any) -> bool:
        principal = request.auth
        if not isinstance(principal, ApiKeyPrincipal):
            return False
        method = request.method or ""
        if method not in view.allowed_methods:
            return True  # no handler runs: the view answers 405
        scopes_for = getattr(view, "scopes_for", None)  # a view without declarations gets nothing
        required = scopes_for(method) if scopes_for is not None else None
        if required is None:
            self.message = f"{method} is not available with an API key on this endpoint."
            return False
        missing = sorted(required - principal.scopes)
        if missing:
            self.message = f"The API key lacks the scope(s) {missing} needed for {method}."
            return False
        return True
