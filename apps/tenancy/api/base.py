"""The base class of every tenant API view.

The organization is resolved here, once, from the API key (never from the body or a header),
and the whole handler runs inside ``organization_scope``: one transaction with
``app.organization_id`` set, rolled back on any error. Subclasses cannot replace this.

Scopes and audit fail closed (ADR 0024): every handler declares its scopes (checked when the
class is defined, and again per request); HEAD is GET without a body, so it needs GET's
scopes and records GET's audit entry; OPTIONS reads nothing and answers the allowed methods
only; a method without a handler is a 405.
"""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from typing import Any, ClassVar

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from rest_framework.exceptions import MethodNotAllowed
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.audit.services import acting_as, audit_record
from apps.platform.exception_handler import database_unavailable
from apps.tenancy.authentication import ApiKeyPrincipal
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from apps.tenancy.selectors import subject_get
from apps.tenancy.services import api_key_touch
from apps.tenancy.throttling import ApiKeyRateThrottle, OrganizationQuotaThrottle, RateLimitState

_SEALED = ("dispatch", "initial", "get_queryset", "get_object", "finalize_response", "head", "options")
_HANDLERS = ("get", "post", "put", "patch", "delete")
_WRITE_METHODS = ("post", "put", "patch", "delete")


def _declared(method: str) -> str:
    """The method whose declarations apply: HEAD runs the GET handler, so it is GET."""
    return "GET" if method == "HEAD" else method


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
        unscoped = [m.upper() for m in _HANDLERS if hasattr(cls, m) and m.upper() not in cls.required_scopes]
        if unscoped:
            raise TypeError(f"{cls.__name__} must declare required_scopes for {unscoped}")
        unaudited = [m.upper() for m in _WRITE_METHODS if hasattr(cls, m) and m.upper() not in cls.audit_actions]
        if unaudited:
            raise TypeError(f"{cls.__name__} must declare audit_actions for {unaudited}")

    @classmethod
    def scopes_for(cls, method: str) -> frozenset[str] | None:
        """The scopes ``method`` needs; ``None`` when it has none declared, which refuses it.
        OPTIONS needs none: it reads nothing (see ``options``)."""
        if method == "OPTIONS":
            return frozenset()
        scopes = cls.required_scopes.get(_declared(method))
        return None if scopes is None else frozenset(scopes)

    @classmethod
    def audit_action_for(cls, method: str) -> str | None:
        return cls.audit_actions.get(_declared(method))

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
        self.rate_limit: RateLimitState | None = None
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
        if request.method not in self.allowed_methods:
            raise MethodNotAllowed(request.method or "")  # before anything runs in the scope
        principal = self.principal
        self._scope_stack.enter_context(organization_scope(principal.organization_id))
        self._scope_stack.enter_context(acting_as(f"api_key:{principal.api_key_id}"))
        self._scoped = True
        api_key_touch(api_key_id=principal.api_key_id)

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Response:
        if self.rate_limit is not None and isinstance(response, HttpResponseBase):
            for header, value in self.rate_limit.headers().items():
                response[header] = value
        action = self.audit_action_for(request.method or "")
        if self._scoped and action and isinstance(response, HttpResponse) and response.status_code < 400:
            # Same transaction as the change: the entry and what it records commit together.
            # A stream (not an HttpResponse) records its own entry before its first line.
            audit_record(
                organization_id=self.organization_id,
                action=action,
                subject_id=self.audit_subject_id,
                target_ids=self.audit_targets,
            )
        return super().finalize_response(request, response, *args, **kwargs)

    def options(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        """The allowed methods, and nothing else: no object is looked up, so the answer is
        the same for any id in any organization and needs no scope (ADR 0024)."""
        return Response({"methods": self.allowed_methods})


class SubjectApiView(OrganizationApiView):
    """Views under ``/v1/subjects/{external_id}/``: the subject is looked up in the
    organization's scope (another organization's subject is a 404) and becomes the subject
    of the request's audit entry."""

    def subject(self, external_id: str) -> Subject:
        cached: Subject | None = getattr(self, "_subject", None)
        if cached is None or cached.external_id != external_id:
            cached = subject_get(external_id=external_id)
            self._subject = cached
        self.audit_subject_id = cached.id
        return cached
