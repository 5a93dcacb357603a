"""The base class of every tenant API view.

The organization is resolved here, once, from the API key (never from the body or a header),
and the whole handler runs inside ``organization_scope``: one transaction with
``app.organization_id`` set, rolled back on any error. Subclasses cannot replace this.
"""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from typing import Any, ClassVar

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponseBase
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.audit.services import acting_as, audit_record
from apps.platform.exception_handler import database_unavailable
from apps.tenancy.authentication import ApiKeyPrincipal
from apps.tenancy.scope import organization_scope
from apps.tenancy.services import api_key_touch
from apps.tenancy.throttling import ApiKeyRateThrottle, OrganizationQuotaThrottle

_SEALED = ("dispatch", "initial", "get_queryset", "get_object", "finalize_response")
_WRITE_METHODS = ("post", "put", "patch", "delete")


class OrganizationApiView(APIView):
    """``required_scopes`` per method; ``audit_actions`` per method names the audit entry a
    successful call appends (required for every write); a handler may fill ``audit_subject_id``
    and ``audit_targets`` with the ids it touched."""

    required_scopes: ClassVar[dict[str, set[str]]] = {}
    audit_actions: ClassVar[dict[str, str]] = {}
    throttle_classes = [ApiKeyRateThrottle, OrganizationQuotaThrottle]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        overridden = [name for name in _SEALED if name in vars(cls)]
        if overridden:
            raise TypeError(f"{cls.__name__} must not override {overridden}: tenant scoping lives in the base class")
        unaudited = [m.upper() for m in _WRITE_METHODS if hasattr(cls, m) and m.upper() not in cls.audit_actions]
        if unaudited:
            raise TypeError(f"{cls.__name__} must declare audit_actions for {unaudited}")

    @property
    def organization_id(self) -> uuid.UUID:
        principal = self.request.auth
        assert isinstance(principal, ApiKeyPrincipal)
        return principal.organization_id

    @property
    def principal(self) -> ApiKeyPrincipal:
        principal = self.request.auth
        assert isinstance(principal, ApiKeyPrincipal)
        return principal

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        self.audit_subject_id: uuid.UUID | None = None
        self.audit_targets: list[str] = []
        self._scoped = False
        try:
            with ExitStack() as scope_stack:
                self._scope_stack = scope_stack
                return super().dispatch(request, *args, **kwargs)
        except (OperationalError, InterfaceError) as exc:
            # Raised as the transaction ends, after the view answered: the commit failed (or
            # its outcome is unknown), so the answer is a 503, never the view's 2xx.
            return database_unavailable(exc)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authentication, scopes, throttles
        principal = self.principal
        self._scope_stack.enter_context(organization_scope(principal.organization_id))
        self._scope_stack.enter_context(acting_as(f"api_key:{principal.api_key_id}"))
        self._scoped = True
        api_key_touch(api_key_id=principal.api_key_id)

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Response:
        action = self.audit_actions.get(request.method or "")
        if self._scoped and action and isinstance(response, Response) and response.status_code < 400:
            # Same transaction as the change: the entry and what it records commit together.
            audit_record(
                organization_id=self.organization_id,
                action=action,
                subject_id=self.audit_subject_id,
                target_ids=self.audit_targets,
            )
        return super().finalize_response(request, response, *args, **kwargs)
