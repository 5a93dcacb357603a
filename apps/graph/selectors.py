from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef, Subquery

from apps.graph import store
from apps.graph.admission import SUBJECT_ROLES
from apps.graph.keys import anchor_key
from apps.graph.models import AnchorVector
from apps.jobs.models import Job
from apps.language.facts import stated_name
from apps.memory.currency import with_currency
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.platform.errors import NotFound
from apps.tenancy.models import Subject

# The kind of a job that deletes a subject's graph and indexes its rows again (ADR 0096).
REINDEX_JOB = "graph.reindex"


def anchors_list(*, subject: Subject, after: str, limit: int) -> tuple[list[dict[str, Any]], str | None]:
    page = store.anchor_page(organization_id=subject.organization_id, subject_id=subject.id, after=after)
    return page[:limit], (page[limit - 1]["key"] if len(page) > limit else None)


def frames_list(
    *, subject: Subject, after: str, limit: int, anchor_key: str | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    page = store.frame_page(
        organization_id=subject.organization_id, subject_id=subject.id, after=after, anchor_key=anchor_key
    )
    return page[:limit], (page[limit - 1]["frame_id"] if len(page) > limit else None)


def cited_rows(*, subject: Subject, row_ids: list[str]) -> list[EpisodicEvent | SemanticItem]:
    """The evidence rows a frame cites, in citation order (erased rows are simply absent), each
    with its currency (``row.currency``)."""
    ids = [uuid.UUID(i) for i in row_ids]
    found: dict[uuid.UUID, EpisodicEvent | SemanticItem] = {}
    for model in (EpisodicEvent, SemanticItem):
        for row in model.objects.filter(subject=subject, id__in=ids).defer("embedding"):
            found[row.id] = row
    return with_currency(found[i] for i in ids if i in found)


def frame_get(*, subject: Subject, frame_id: str) -> tuple[dict[str, Any], list[EpisodicEvent | SemanticItem]]:
    frames = store.frames_by_id(organization_id=subject.organization_id, subject_id=subject.id, frame_ids=[frame_id])
    frame = frames.get(frame_id)
    if frame is None:
        raise NotFound(f"No frame {frame_id} for this subject.")
    return frame, cited_rows(subject=subject, row_ids=list(frame["citations"]))


@dataclass(frozen=True, slots=True)
class SubjectGraphState:
    rebuilding: bool  # a re-index of the subject's graph is queued or running (ADR 0096)
    has_speaker: bool  # the subject's graph has the person it speaks as (ADR 0095)
    stated_name: str | None = None  # the name its own unnamed turns last gave ("I'm Kwame")


def subject_graph_state(*, subject: Subject, speaker: str | None) -> SubjectGraphState:
    """What a search asks of the subject's graph before it plans, in one round trip: with the
    name the subject gave itself in its own turns, a question may call it by that name too."""
    key = anchor_key(speaker) if speaker else ""
    row = (
        Subject.objects.filter(id=subject.id)
        .annotate(
            rebuilding=Exists(
                Job.objects.filter(
                    subject_id=OuterRef("id"),
                    kind=REINDEX_JOB,
                    status__in=(Job.Status.QUEUED, Job.Status.RUNNING),
                )
            ),
            # A person: the noun "subject" of a turn is another anchor's concept, not the subject.
            has_speaker=Exists(
                AnchorVector.objects.filter(subject_id=OuterRef("id"), anchor_key=key, anchor_type="person")
            ),
            introduction=Subquery(
                SemanticItem.objects.filter(subject_id=OuterRef("id"), name__in=SUBJECT_ROLES, attribute="name")
                .order_by("-created_at")
                .values("summary")[:1]
            ),
        )
        .values_list("rebuilding", "has_speaker", "introduction")
        .first()
    )
    rebuilding, has_speaker, introduction = row or (False, False, None)
    return SubjectGraphState(
        rebuilding=bool(rebuilding),
        has_speaker=bool(key) and bool(has_speaker),
        stated_name=stated_name(introduction) if introduction else None,
    )
