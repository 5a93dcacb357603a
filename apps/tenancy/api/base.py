"""The base class of every tenant API view.

The organization is resolved here, once, from the API key (never from the body or a header),
and the whole handler runs inside ``organization_scope``: one transaction with
``app.organization_id`` set, rolled back on any error. Subclasses cannot replace this.

A POST may carry an ``Idempotency-Key`` (ADR 0038): the key is claimed in the same
transaction, a retry of the same request is answered from the stored answer (with
``Idempotent-Replayed: true``), and an answer that created something is stored with the write.

Scopes and audit fail closed (ADR 0024): every handler declares its scopes (checked when the
class is defined, and again per request); HEAD is GET without a body, so it needs GET's
scopes and records GET's audit entry; OPTIONS reads nothing and answers the allowed methods
only; a method without a handler is a 405.

A view whose handler only reads lists its methods in ``replica_reads`` (ADR 0051): while a
streaming replica keeps up and the organization has not just written, the handler runs in a
second scope on the ``replica`` alias and reads there; the request's own writes (the API
key's last use, the idempotency record, the audit entry, the usage counter) stay on the
primary and do not pin the organization to it.

A handler whose answer depends on work other processes do after its commit (a write with
``?wait=true``) sets ``after_commit``: it runs once the transaction committed, outside it,
and may change the answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from typing import Any, ClassVar

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import reverse
from django.utils import timezone
from rest_framework.exceptions import MethodNotAllowed
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.audit.services import acting_as, audit_record
from apps.platform.errors import ValidationFailed
from apps.platform.exception_handler import database_unavailable
from apps.platform.replica import REPLICA_ALIAS, replica_failed, replica_serves
from apps.platform.timing import phase
from apps.tenancy import idempotency
from apps.tenancy.authentication import ApiKeyPrincipal
from apps.tenancy.models import IdempotencyRecord, Subject
from apps.tenancy.scope import organization_scope
from apps.tenancy.selectors import subject_get
from apps.tenancy.services import api_key_touch, idempotency_claim, idempotency_store, subject_for_write
from apps.tenancy.throttling import ApiKeyRateThrottle, OrganizationQuotaThrottle, RateLimitState
from apps.usage.periods import operation_name
from apps.usage.services import usage_count

_SEALED = ("dispatch", "initial", "get_queryset", "get_object", "finalize_response", "head", "options")
_HANDLERS = ("get", "post", "put", "patch", "delete")
_WRITE_METHODS = ("post", "put", "patch", "delete")


def _declared(method: str) -> str:
    """The method whose declarations apply: HEAD runs the GET handler, so it is GET."""
    return "GET" if method == "HEAD" else method


class _Replay(Exception):
    """Raised from ``initial`` when the request is a retry of one already answered."""

    def __init__(self, record: IdempotencyRecord) -> None:
        super().__init__(record.key)
        self.record = record


class OrganizationApiView(APIView):
    """``required_scopes`` per method; ``audit_actions`` per method names the audit entry a
    successful call appends (required for every write); a handler may fill ``audit_subject_id``
    and ``audit_targets`` with the ids it touched, and ``usage_rows_written`` with the number
    of memory rows it wrote (``GET /v1/usage``)."""

    required_scopes: ClassVar[dict[str, set[str]]] = {}
    audit_actions: ClassVar[dict[str, str]] = {}
    # Methods whose answer carries a secret shown once (a new key): never stored, so they
    # refuse an Idempotency-Key rather than replay without it.
    secret_responses: ClassVar[frozenset[str]] = frozenset()
    # Methods whose handler writes nothing (apart from the bookkeeping above): they may read
    # from the replica.
    replica_reads: ClassVar[frozenset[str]] = frozenset()
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
        unhandled = sorted(m for m in cls.replica_reads if not hasattr(cls, m.lower()))
        if unhandled:
            raise TypeError(f"{cls.__name__} lists replica_reads without handlers: {unhandled}")

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
        self.after_commit: Callable[[Response], None] | None = None
        self.usage_rows_written = 0
        self._scoped = False
        self._subject_created: Subject | None = None
        self._idempotency: tuple[str, str] | None = None  # the claimed (key, request hash)
        self._replayed = False
        ending = ExitStack()  # the "commit" phase: from the handler's answer until the scope has ended
        try:
            with ending, ExitStack() as scope_stack:
                self._scope_stack = scope_stack
                self._read_stack = scope_stack.enter_context(ExitStack())
                response = super().dispatch(request, *args, **kwargs)
                ending.enter_context(phase("commit"))
        except (OperationalError, InterfaceError) as exc:
            # Raised as the transaction ends, after the view answered: the commit failed (or
            # its outcome is unknown), so the answer is a 503, never the view's 2xx.
            return database_unavailable(exc)
        if self.after_commit is not None and isinstance(response, Response) and response.status_code < 400:
            self.after_commit(response)  # committed: it must not fail the answer (apps.jobs.api.waiting)
        return response

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        with phase("auth"):
            super().initial(request, *args, **kwargs)  # authentication, scopes, throttles
        if request.method not in self.allowed_methods:
            raise MethodNotAllowed(request.method or "")  # before anything runs in the scope
        principal = self.principal
        reads_only = request.method in self.replica_reads
        self._scope_stack.enter_context(organization_scope(principal.organization_id, records_writes=not reads_only))
        self._scope_stack.enter_context(acting_as(f"api_key:{principal.api_key_id}"))
        self._scoped = True
        api_key_touch(api_key_id=principal.api_key_id)
        if request.method == "POST" and idempotency.HEADER in request.headers:
            self._idempotency_claim(request, request.headers[idempotency.HEADER])
        if reads_only and replica_serves(principal.organization_id):
            self._read_from_replica(principal.organization_id)

    def _read_from_replica(self, organization_id: uuid.UUID) -> None:
        """The handler's reads go to the replica, in a scope of their own there; a replica
        that cannot open it is skipped (the reads stay on the primary) until it is checked again."""
        try:
            self._read_stack.enter_context(organization_scope(organization_id, using=REPLICA_ALIAS))
        except (OperationalError, InterfaceError):
            replica_failed()

    def _idempotency_claim(self, request: Request, key: str) -> None:
        if request.method in self.secret_responses:
            raise ValidationFailed(
                f"{request.method} {request.path} does not take an {idempotency.HEADER}: its answer carries a "
                "secret, which is never stored. Retry without the header and check what exists first.",
                details={"header": idempotency.HEADER},
            )
        request_hash = idempotency.request_fingerprint(
            method=request.method or "",
            path=request.get_full_path(),
            content_type=request.content_type or "",
            body=request._request.body,
        )
        record = idempotency_claim(organization_id=self.organization_id, key=key, request_hash=request_hash)
        if record is not None:
            raise _Replay(record)
        self._idempotency = (key, request_hash)

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, _Replay):
            # The first answer, as it was; nothing ran, so nothing is audited again.
            self._replayed = True
            response = Response(exc.record.response, status=exc.record.status_code)
            response[idempotency.REPLAYED_HEADER] = "true"
            job_id = exc.record.response.get("job_id") if isinstance(exc.record.response, dict) else None
            if exc.record.status_code == 202 and job_id:
                response["Location"] = reverse("job-detail", kwargs={"job_id": job_id})
            self.replayed(self.request, response)
            return response
        return super().handle_exception(exc)

    def replayed(self, request: Request, response: Response) -> None:
        """A replayed answer, before it is sent. What a handler does after its commit is not in
        the stored answer (it is stored as the handler answered); a view with such a step (a
        write's ``wait=true``) sets ``after_commit`` again here, so the retry ends as the first
        request did."""

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Response:
        if self._scoped:
            self._read_stack.close()  # the handler's reads are over; what follows writes on the primary
        if self.rate_limit is not None and isinstance(response, HttpResponseBase):
            for header, value in self.rate_limit.headers().items():
                response[header] = value
        if (
            self._idempotency is not None
            and isinstance(response, Response)
            and response.status_code in idempotency.STORED_STATUSES
        ):
            key, request_hash = self._idempotency
            idempotency_store(
                organization_id=self.organization_id,
                key=key,
                request_hash=request_hash,
                status_code=response.status_code,
                response=response.data,
                subject_id=self.audit_subject_id,
            )
        action = self.audit_action_for(request.method or "")
        if (
            self._scoped
            and action
            and not self._replayed
            and isinstance(response, HttpResponse)
            and response.status_code < 400
        ):
            # Same transaction as the change: the entry and what it records commit together.
            # A stream (not an HttpResponse) records its own entry before its first line.
            self._audit(action)
        finalized: Response = super().finalize_response(request, response, *args, **kwargs)
        if self._scoped:
            self._count_usage(request, finalized)
        return finalized

    def _audit(self, action: str) -> None:
        with phase("audit"):
            if self._subject_created is not None:
                audit_record(
                    organization_id=self.organization_id,
                    action="subject.create",
                    subject_id=self._subject_created.id,
                    target_ids=[f"first_write:{action}"],
                )
            audit_record(
                organization_id=self.organization_id,
                action=action,
                subject_id=self.audit_subject_id,
                target_ids=self.audit_targets,
            )

    def _count_usage(self, request: Request, response: HttpResponseBase) -> None:
        """Count the request once it has been answered: the closer runs when the server has
        sent the response (a stream: its last line), after the request's transaction, so the
        counter's upsert is a statement of its own that holds no lock while the view runs.
        Refused calls (401, 403, 405, 429) never reach the scope and are not counted."""
        match = request.resolver_match
        failed = response.status_code >= 400
        closers: list[Callable[[], None]] = response._resource_closers  # type: ignore[attr-defined]
        closers.append(
            partial(
                usage_count,
                organization_id=self.organization_id,
                api_key_id=self.principal.api_key_id,
                day=timezone.now().date(),
                operation=operation_name(method=request.method or "", route=match.route if match else request.path),
                failed=failed,
                rows_written=0 if failed else self.usage_rows_written,
            )
        )

    def options(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        """The allowed methods, and nothing else: no object is looked up, so the answer is
        the same for any id in any organization and needs no scope (ADR 0024)."""
        return Response({"methods": self.allowed_methods})


class SubjectApiView(OrganizationApiView):
    """Views under ``/v1/subjects/{external_id}/``: the subject is looked up in the
    organization's scope (another organization's subject is a 404) and becomes the subject
    of the request's audit entry. The methods in ``subject_created_on`` are writes that
    create an unknown subject (``subject_for_write``)."""

    subject_created_on: ClassVar[frozenset[str]] = frozenset()

    def subject(self, external_id: str) -> Subject:
        cached: Subject | None = getattr(self, "_subject", None)
        if cached is None or cached.external_id != external_id:
            cached = subject_get(external_id=external_id)
            self._subject = cached
        self.audit_subject_id = cached.id
        return cached

    def subject_for_write(self, external_id: str, *, kind: str) -> Subject:
        """The subject a write goes to: created (of ``kind``) when the external id is unknown,
        unless the organization turned that off (ADR 0039). Reads use ``subject``: an unknown
        subject stays a 404 there."""
        if self.request.method not in self.subject_created_on:
            raise TypeError(f"{type(self).__name__} must list {self.request.method} in subject_created_on")
        subject, created = subject_for_write(organization_id=self.organization_id, external_id=external_id, kind=kind)
        if created:
            self._subject_created = subject
        self._subject = subject
        self.audit_subject_id = subject.id
        return subject
