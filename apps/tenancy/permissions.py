from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from apps.tenancy.authentication import ApiKeyPrincipal


class HasRequiredScopes(BasePermission):
    """The view declares ``required_scopes = {"GET": {...}, "POST": {...}}``; missing → 403."""

    message = "The API key lacks a required scope."

    def has_permission(self, request: Request, view: Any) -> bool:
        principal = request.auth
        if not isinstance(principal, ApiKeyPrincipal):
            return False
        required: set[str] = set(getattr(view, "required_scopes", {}).get(request.method, set()))
        missing = sorted(required - principal.scopes)
        if missing:
            self.message = f"The API key lacks the scope(s) {missing} needed for {request.method}."
            return False
        return True
