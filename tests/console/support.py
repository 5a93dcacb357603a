"""A populated organization for the console tests: every kind of object a console URL names."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from apps.graph import store
from apps.jobs.models import Job
from apps.jobs.services import WRITE_JOB_KIND
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from apps.tenancy.selectors import api_key_list
from apps.webhooks import services as webhook_services
from tests.factories import Tenant
from tests.memory.conversation import SESSIONS


@dataclass
class World:
    tenant: Tenant
    subject: Subject
    api_key_id: uuid.UUID
    job_id: uuid.UUID
    frame: dict[str, Any]
    endpoint_id: uuid.UUID
    delivery_id: uuid.UUID
    erasure_request_id: uuid.UUID
    endpoint_secret: str
    # No dream has run in this world: an id no merge has (every merge page is 404 to outsiders
    # before any lookup; tests/console/test_learning.py undoes a real merge).
    merge_id: uuid.UUID = field(default_factory=uuid.uuid4)

    def url_kwargs(self) -> dict[str, Any]:
        """An object of this organization for every keyword a console URL takes."""
        return {
            "org_id": self.tenant.id,
            "api_key_id": self.api_key_id,
            "subject_id": self.subject.id,
            "frame_id": self.frame["frame_id"],
            "request_id": self.erasure_request_id,
            "job_id": self.job_id,
            "endpoint_id": self.endpoint_id,
            "delivery_id": self.delivery_id,
            "merge_id": self.merge_id,
        }


def write_memories(tenant: Tenant, external_id: str, sessions: list[list[dict[str, str]]] = SESSIONS) -> None:
    """Write through the API and index in this process (the graph then holds frames)."""
    for messages in sessions:
        tenant.write(external_id, {"messages": messages}, index=True)


def populate(tenant: Tenant, *, external_id: str = "maya", endpoint_url: str = "http://127.0.0.1:9/hook") -> World:
    subject = tenant.subject(external_id)
    write_memories(tenant, external_id)
    erased = tenant.subject(f"{external_id}-gone")
    erasure = tenant.client().delete(f"/v1/subjects/{erased.external_id}")
    assert erasure.status_code == 202, erasure.content
    issued = webhook_services.webhook_endpoint_create(organization_id=tenant.id, url=endpoint_url, event_types=["*"])
    delivery = webhook_services.webhook_endpoint_ping(organization_id=tenant.id, endpoint_id=issued.endpoint.id)
    with organization_scope(tenant.id):
        job = Job.objects.filter(kind=WRITE_JOB_KIND).order_by("created_at").first()  # the first write's
        assert job is not None
        frames = store.frame_page(organization_id=tenant.id, subject_id=subject.id, after="")
        assert frames, "indexing made no frames"
        api_key = api_key_list().first()
        assert api_key is not None
    return World(
        tenant=tenant,
        subject=subject,
        api_key_id=api_key.id,
        job_id=job.id,
        frame=frames[0],
        endpoint_id=issued.endpoint.id,
        delivery_id=delivery.id,
        erasure_request_id=uuid.UUID(erasure.json()["erasure_request_id"]),
        endpoint_secret=issued.secret,
    )
