"""Plant a unique canary in every store and path of one subject, through the API and the
services production uses (the graph through its adapter, as the indexer writes it)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections

from apps.graph import adapter as graph
from apps.graph.models import AnchorVector
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from tests.factories import Tenant

_ANCHOR = "CREATE (a:Anchor {subject_id: $subject_id, key: $key, name: $name, type: $type}) RETURN a"
_FRAME = "CREATE (f:Frame {subject_id: $subject_id, frame_id: $frame_id, predicate: $predicate, text: $text}) RETURN f"
_ARM = (
    "MATCH (f:Frame), (a:Anchor) WHERE f.subject_id = $subject_id AND f.frame_id = $frame_id "
    "AND a.subject_id = $subject_id CREATE (f)-[e:ARM {role: $role}]->(a) RETURN e"
)


def new_canary() -> str:
    return f"qzx{uuid.uuid4().hex[:12]}"


@dataclass
class Planted:
    external_id: str
    subject_id: uuid.UUID
    canary: str
    password: str
    batch_job_ids: list[str] = field(default_factory=list)


def _post(tenant: Tenant, external_id: str, payload: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    response = tenant.client().post(f"/v1/subjects/{external_id}/memories", payload, **kwargs)
    assert response.status_code == 201, response.content
    return response.json()  # type: ignore[no-any-return]


def plant(tenant: Tenant, external_id: str, *, canary: str | None = None) -> Planted:
    canary = canary or new_canary()
    title = canary.capitalize()
    password = f"{title}-Pw-991!"
    subject = tenant.subject(external_id)
    planted = Planted(external_id=external_id, subject_id=subject.id, canary=canary, password=password)
    client = tenant.client()

    # Chat → core, episodic and semantic rows (a second write supersedes the semantic fact),
    # a vault entry for the password, webhook events with the text.
    chat = [
        {
            "role": "user",
            "name": "Ana",
            "timestamp": "2024-03-02T10:00:00Z",
            "content": f"Yesterday I visited the {title} Museum with my sister {title} Lee. My password is {password}",
        },
        {
            "role": "user",
            "name": "Ana",
            "timestamp": "2024-03-02T10:01:00Z",
            "content": f"I'm a {canary} engineer. My favourite city is {title}ville.",
        },
    ]
    _post(tenant, external_id, {"messages": chat, "session_id": f"session-{canary}"}, format="json")
    _post(tenant, external_id, {"text": f"My favourite city is {title}burg now."}, format="json")
    # A procedure → a procedural row.
    _post(
        tenant,
        external_id,
        {
            "text": f"Here's how to make {canary} tea: first boil the water, then steep the {canary} leaves for "
            "5 minutes, then strain it."
        },
        format="json",
    )
    # An update → a superseding episodic row; the old one stays until erasure.
    episodic = client.get(f"/v1/subjects/{external_id}/memories?type=episodic").json()["results"][0]
    patched = client.patch(
        f"/v1/subjects/{external_id}/memories/episodic/{episodic['id']}",
        {"changes": {"summary": f"Ana toured the {title} Museum."}},
        format="json",
    )
    assert patched.status_code == 201, patched.content
    # A document → a resource row, the original bytes in object storage, a vault entry.
    document = f"Notes on {canary} gardening. The shed password is {title}Shed-42!".encode()
    _post(
        tenant,
        external_id,
        {"file": SimpleUploadedFile(f"{canary}.txt", document, "text/plain"), "title": f"{title} notes"},
        format="multipart",
    )
    # Batch ingestion: one batch written by its job in-process, one left pending (its chunks
    # still hold the text).
    for run in (True, False):
        accepted = client.post(
            f"/v1/subjects/{external_id}/memories/batch",
            {"chunks": [{"text": f"Last week I adopted a {canary} kitten called {title}ina."}]},
            format="json",
        )
        assert accepted.status_code == 202, accepted.content
        body = accepted.json()
        planted.batch_job_ids.append(body["job_id"])
        if run:
            app.loader.import_default_modules()  # the task modules a worker would import
            app.tasks["indexing.memory.batch_ingest"].apply(
                kwargs={"organization_id": str(tenant.id), "job_id": body["job_id"], "batch_id": body["batch_id"]}
            ).get()
    # Consent history (who changed what, when).
    consent = client.put(f"/v1/subjects/{external_id}/consent", {"purposes": {"learn_skills": True}}, format="json")
    assert consent.status_code == 200, consent.content
    # Graph vertices and an edge carrying the canary, through the adapter.
    with organization_scope(tenant.id):
        params = {"subject_id": str(subject.id)}
        for key in ("museum", "lee"):
            graph.cypher(
                organization_id=tenant.id,
                query=_ANCHOR,
                params={**params, "key": f"{canary} {key}", "name": f"{title} {key}", "type": "concept"},
                returns=["a"],
            )
        graph.cypher(
            organization_id=tenant.id,
            query=_FRAME,
            params={**params, "frame_id": f"frame-{canary}", "predicate": "visit", "text": f"visited {title}"},
            returns=["f"],
        )
        graph.cypher(
            organization_id=tenant.id,
            query=_ARM,
            params={**params, "frame_id": f"frame-{canary}", "role": "place"},
            returns=["e"],
        )
        # A name embedding beside the graph.
        AnchorVector.objects.create(
            organization_id=tenant.id,
            subject_id=subject.id,
            anchor_key=f"{canary} museum",
            name=f"{title} Museum",
            anchor_type="concept",
            embedding=[0.1] * 384,
            embedding_model="test",
        )
    return planted


def subject_counts(subject_id: uuid.UUID) -> dict[str, int]:
    """What the subject holds now, per receipt key (as the owner, beneath RLS)."""
    tables = {
        "core": "memory_core_block",
        "episodic": "memory_episodic_event",
        "semantic": "memory_semantic_item",
        "procedural": "memory_procedural_item",
        "resource": "memory_resource_item",
        "vault": "memory_vault_entry",
        "ingestion_batches": "memory_ingestion_batch",
        "jobs": "jobs_job",
        "webhook_events": "webhooks_event",
        "consent_records": "consent_record",
        "anchor_vectors": "graph_anchor_vector",
    }
    counts = {}
    with connections["owner"].cursor() as cursor:
        for key, table in tables.items():
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE subject_id = %s', [subject_id])
            counts[key] = cursor.fetchone()[0]
    return counts


def graph_counts(tenant: Tenant, subject_id: uuid.UUID) -> dict[str, int]:
    with organization_scope(tenant.id):
        params = {"subject_id": str(subject_id)}
        vertices = graph.cypher(
            organization_id=tenant.id,
            query="MATCH (n) WHERE n.subject_id = $subject_id RETURN count(n)",
            params=params,
            returns=["n"],
        )
        edges = graph.cypher(
            organization_id=tenant.id,
            query="MATCH (n)-[e]-() WHERE n.subject_id = $subject_id RETURN count(DISTINCT e)",
            params=params,
            returns=["n"],
        )
    return {"graph_vertices": int(vertices[0][0]), "graph_edges": int(edges[0][0])}
