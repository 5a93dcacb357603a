"""A rehearsal of a write, before an API process serves its first request (ADR 0093).

A fresh process pays once, in its first write, for what warming the parts one by one does not
reach: the first pass through the write's Python (the view, its serializers, the compilation
of each query, caches Django and DRF build on first use) and its database session's first
execution of each statement (the key lookup function, the triggers, the row-level policies).

The rehearsal sends one write through the process's own middleware and views, for a
throwaway organization whose key is the only thing committed besides the organization row,
inside a transaction that is rolled back: no memory row, job, audit entry or usage count is
kept, and the job is never published (it is published on commit). The organization is then
offboarded. An organization left behind by a process killed during its rehearsal is
offboarded by a later one.
"""

from __future__ import annotations

import io
import json
import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
from django.db import connections, transaction
from django.urls import reverse
from django.utils import timezone

from apps.tenancy import services as tenancy
from apps.tenancy.keys import SCOPES
from apps.tenancy.models import Organization

logger = logging.getLogger(__name__)

SLUG_PREFIX = "write-rehearsal-"
ABANDONED_AFTER = timedelta(minutes=10)  # longer than any rehearsal; a younger one may be running
_TEXT = "I moved to Lisbon last spring and I still walk to the river every morning before work."


def write_rehearse(application: WSGIHandler) -> int:
    """Send one write through ``application`` and roll it back; the status it answered."""
    _abandoned_offboard()
    organization = tenancy.organization_create(name="Write rehearsal", slug=f"{SLUG_PREFIX}{uuid.uuid4().hex[:16]}")
    try:
        issued = tenancy.api_key_create(organization_id=organization.id, name="write rehearsal", scopes=list(SCOPES))
        request = WSGIRequest(_environ(reverse("memories", kwargs={"external_id": "rehearsal"}), issued.secret))
        with transaction.atomic():
            # The middleware chain without the request signals, which would close the
            # database connection held by this transaction.
            response = application.get_response(request)
            transaction.set_rollback(True)
        return response.status_code
    finally:
        tenancy.organization_offboard(organization_id=organization.id)
        connections["owner"].close()  # the API process serves on the app role only


def _abandoned_offboard() -> None:
    stale = (
        Organization.objects.dangerously_across_organizations()
        .filter(slug__startswith=SLUG_PREFIX, created_at__lt=timezone.now() - ABANDONED_AFTER)
        .values_list("id", flat=True)
    )
    for organization_id in list(stale):
        logger.warning("offboarding an abandoned write rehearsal", extra={"organization_id": str(organization_id)})
        tenancy.organization_offboard(organization_id=organization_id)


def _environ(path: str, secret: str) -> dict[str, object]:
    body = json.dumps({"messages": [{"role": "user", "content": _TEXT}]}).encode()
    host = next((h.lstrip(".") for h in settings.ALLOWED_HOSTS if h not in ("*", ".")), "localhost")
    scheme = "https" if settings.SECURE_SSL_REDIRECT else "http"
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_HOST": host,
        "HTTP_AUTHORIZATION": f"Bearer {secret}",
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_NAME": host,
        "SERVER_PORT": "443" if scheme == "https" else "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": scheme,
    }
