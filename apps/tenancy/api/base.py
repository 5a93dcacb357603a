"""The base class of every tenant API view.

The organization is resolved here, once, from the API key (never from the body or a header),
and the whole handler runs inside ``organization_scope``: one transaction with
``app.organization_id`` set, rolled back on any error. Subclasses cannot replace this.
"""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from typing import Any, ClassVar

from django.http import HttpRequest, HttpResponseBase
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.tenancy.authentication import ApiKeyPrincipal
from apps.tenancy.scope import organization_scope
from apps.tenancy.services import api_key_touch
from apps.tenancy.throttling import ApiKeyRateThrottle, OrganizationQuotaThrottle

_SEALED = ("dispatch", "initial", "get_queryset", "get_object", "finalize_response")


class OrganizationApiView(APIView):
    required_scopes: ClassVar[dict[str, set[str]]] = {}
    throttle_classes = [ApiKeyRateThrottle, OrganizationQuotaThrottle]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        overridden = [name for name in _SEALED if name in vars(cls)]
        if overridden:
            raise TypeError(f"{cls.__name__} must not override {overridden}: tenant scoping lives in the base class")

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
        with ExitStack() as scope_stack:
            self._scope_stack = scope_stack
            return super().dispatch(request, *args, **kwargs)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authentication, scopes, throttles
        principal = self.principal
        self._scope_stack.enter_context(organization_scope(principal.organization_id))
        api_key_touch(api_key_id=principal.api_key_id)
