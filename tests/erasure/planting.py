"""Plant a unique canary in every store and path of one subject, through the API and the
services production uses (the graph through its adapter, as the indexer writes it)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections

from apps.graph import adapter as graph
from apps.graph.models import AnchorFrame, AnchorRow, AnchorVector
from apps.jobs import task_names
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from tests.factories import Tenant, complete_writes, written_answer

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
    assert response.status_code == 202, response.content
    complete_writes(tenant.id)  # what the worker does (ADR 0054)
    return written_answer(tenant.id, response.json())


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
    assert patched.status_code == 200, patched.content
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
            app.tasks[task_names.BATCH_INGEST].apply(
                kwargs={"organization_id": str(tenant.id), "job_id": body["job_id"], "batch_id": body["batch_id"]}
            ).get()
    # Consent history (who changed what, when).
    consent = client.put(f"/v1/subjects/{external_id}/consent", {"purposes": {"learn_skills": True}}, format="json")
    assert consent.status_code == 200, consent.content
    # Task sessions: one with its SCEC (left pending), one distilled into an experience and a
    # cited skill.
    sessions = []
    for scec in ({"reward_spec": {"kind": "contains", "expected": canary}, "inputs": {"tea": canary}}, None):
        written = client.post(
            f"/v1/subjects/{external_id}/sessions",
            {
                "task": f"Brew {canary} tea for 4 guests",
                "domain": "cooking",
                "steps": [
                    {"kind": "thought", "content": f"Lesson: steep {canary} leaves for exactly 5 minutes"},
                    {"kind": "tool_result", "content": "the tasting passed"},
                ],
                "final_output": f"4 cups of {canary} tea",
                "scec": scec,
            },
            format="json",
        )
        assert written.status_code == 201, written.content
        sessions.append(written.json()["id"])
    with organization_scope(tenant.id):
        from apps.procedural import services as procedural
        from apps.procedural.models import TaskSession
        from apps.procedural.provider import metering_for, procedural_llm

        llm, metering = procedural_llm(tenant.id), metering_for(tenant.id)
        session = TaskSession.objects.get(id=sessions[1])
        assert procedural.session_distill(session=session, llm=llm, metering=metering)
        assert procedural.skills_curate(subject=subject, llm=llm, metering=metering)["created"] == 1
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
        # The adjacency index beside the graph: the frame and a row that mention the anchor.
        AnchorFrame.objects.create(
            organization_id=tenant.id,
            subject_id=subject.id,
            anchor_key=f"{canary} museum",
            frame_id=f"frame-{canary}",
            predicate="visit",
            roles=["place"],
        )
        AnchorRow.objects.create(
            organization_id=tenant.id,
            subject_id=subject.id,
            anchor_key=f"{canary} museum",
            memory_type="episodic",
            row_id=uuid.uuid4(),
        )
    # Semantic AutoDream's records: a round, a merge (names and an undo snapshot), a cached
    # rejection and a used source, as the dream service writes them.
    with organization_scope(tenant.id):
        from apps.dream.candidates import rejection_key
        from apps.dream.models import DreamMerge, DreamRejection, DreamRound, DreamSource

        dream_round = DreamRound.objects.create(organization_id=tenant.id, subject_id=subject.id, kind="final")
        DreamMerge.objects.create(
            organization_id=tenant.id,
            subject_id=subject.id,
            round=dream_round,
            anchor_type="object",
            source_key=f"bottle {canary} steel",
            source_name=f"{title} steel bottle",
            target_key=f"bottle {canary} stainless steel",
            target_name=f"{title} stainless steel bottle",
            cosine=0.9,
            decided_by="local",
            snapshot={"source": {"name": f"{title} steel bottle"}},
            after_digest="0" * 64,
        )
        DreamRejection.objects.create(
            organization_id=tenant.id,
            subject_id=subject.id,
            cache_key=rejection_key(f"{title} 10 gallons", f"{title} 20 gallons", "object"),
            anchor_type="object",
            decided_by="local",
        )
        DreamSource.objects.create(
            organization_id=tenant.id, subject_id=subject.id, anchor_key=f"bottle {canary} steel"
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
        "dream_round": "dream_round",
        "dream_merge": "dream_merge",
        "dream_rejection": "dream_rejection",
        "dream_source": "dream_source",
        "anchor_frames": "graph_anchor_frame",
        "anchor_rows": "graph_anchor_row",
        "procedural_session": "procedural_session",
        "procedural_experience": "procedural_experience",
        "procedural_skill": "procedural_skill",
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
