"""A LoCoMo-format conversation written through the product's own write path, in process, and
the map back from memory rows to the turns they cite. Shared by the evaluation commands.

Each session is one write call (one chunk), as a client would send it, with each turn's dia_id
as its message id, so a row's provenance (``source_message_ids``) names the turns it rests on.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Literal

from tqdm import tqdm

from apps.evaluation.locomo import Conversation, session_messages
from apps.graph.services import index_chunk
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.memory.services import incoming_messages, memory_write_messages
from apps.providers.registry import embedder, llm_for
from apps.tenancy import services as tenancy
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope

Voice = Literal["named", "user", "user-opaque"]


def conversation_ingest(
    *,
    organization_id: uuid.UUID,
    conversation: Conversation,
    index: bool,
    after_session: Callable[[Subject, uuid.UUID], None] | None = None,
    voice: Voice = "named",
) -> Subject:
    """Write every session of ``conversation`` for a new subject of the organization, indexing
    each chunk into the graph when ``index``; ``after_session`` sees each written chunk's id.

    ``voice``: ``named``, each turn named after its speaker; ``user``, the first speaker's turns
    unnamed ``user`` messages and the other's ``assistant`` ones, for a subject whose id is the
    first speaker's name (ADR 0095); ``user-opaque``, the same for a subject whose id is no name."""
    llm, vectors = llm_for(organization_id), embedder()
    user = conversation.speakers[0] if voice != "named" else None
    external_id = conversation.sample_id
    if voice == "user":
        external_id = conversation.speakers[0].casefold()
    elif voice == "user-opaque":
        external_id = f"u-{uuid.uuid4().hex[:8]}"
    with organization_scope(organization_id):
        subject = tenancy.subject_create(organization_id=organization_id, external_id=external_id, kind="user")
    for session in tqdm(conversation.sessions, desc=f"ingest {conversation.sample_id}", unit="session"):
        with organization_scope(organization_id):
            written = memory_write_messages(
                subject=subject,
                messages=incoming_messages(list(session_messages(session, user=user))),
                source_kind="chat",
                session_id=f"session_{session.number}",
                llm=llm,
                embedder=vectors,
            )
        if index:
            with organization_scope(organization_id):
                index_chunk(chunk_id=written.chunk_id)
        if after_session is not None:
            after_session(subject, written.chunk_id)
    return subject


def row_dia_ids(subject: Subject) -> dict[str, list[str]]:
    """Every memory row of the subject, by id, with the dia_ids of the turns it cites."""
    with organization_scope(subject.organization_id):
        return {
            str(row_id): list(ids)
            for model in (EpisodicEvent, SemanticItem)
            for row_id, ids in model.objects.filter(subject=subject).values_list("id", "source_message_ids")
        }


def kept_subject(organization_id: str, subject_id: str) -> Subject:
    """The subject of an ingestion an evaluation kept (``--keep``), read in its organization."""
    organization = uuid.UUID(organization_id)
    with organization_scope(organization):
        return Subject.objects.get(id=subject_id, organization_id=organization)
