"""Reads of procedural memory: utility-weighted skill retrieval (s = sim × w, no reranking),
skills with their versions, citations and events."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from pgvector.django import CosineDistance

from apps.procedural.models import Retrieval, Scec, Skill, SkillEvent, SkillVersion
from apps.providers.interfaces import Embedder
from apps.resources.storage import storage
from apps.retrieval.fusion import trim_to_token_budget
from apps.tenancy.models import Subject

CANDIDATES = 50  # nearest skills by meaning that are then scored by sim × w
RETRIEVABLE = (Skill.Status.ACTIVE, Skill.Status.DEMOTED)


@dataclass(frozen=True)
class ScoredSkill:
    skill: Skill
    similarity: float
    score: float


@dataclass(frozen=True)
class SkillRetrieval:
    retrieval: Retrieval
    items: list[ScoredSkill]


def skill_search(
    *,
    subject: Subject,
    query: str,
    embedder: Embedder,
    domain: str | None = None,
    limit: int = 5,
    token_budget: int | None = None,
    weighted: bool = True,
) -> SkillRetrieval:
    """The subject's skills ranked by s(q, m) = sim(q, m) × w(m). With a ``domain``, specific
    skills of other domains are not eligible (their entities belong to their own domain);
    general forms of every domain are, tagged with their source domain. Recorded as a
    retrieval whose id feedback names. ``weighted=False`` ranks by similarity alone (the
    ablation the procedural benchmark compares against). ``token_budget`` keeps, best first,
    the skills whose texts fit it; the retrieval records only what was returned."""
    vector = embedder.embed([query])[0]
    eligible = Skill.objects.filter(
        subject=subject, status__in=RETRIEVABLE, embedding_model=embedder.model_name, embedding__isnull=False
    )
    wanted = (domain or "").strip().lower()
    if wanted:
        eligible = eligible.filter(Q(form=Skill.Form.GENERAL) | Q(domain=wanted))
    nearest = list(
        eligible.defer("embedding")
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance", "id")[:CANDIDATES]
    )
    scored = []
    for skill in nearest:
        similarity = max(0.0, 1.0 - float(skill.distance))
        score = similarity * skill.weight if weighted else similarity
        scored.append(ScoredSkill(skill=skill, similarity=similarity, score=score))
    scored.sort(key=lambda item: (-item.score, str(item.skill.id)))
    top = scored[:limit]
    if token_budget is not None:
        top = trim_to_token_budget(top, token_budget, text=lambda item: item.skill.text)
    retrieval = Retrieval.objects.create(
        organization_id=subject.organization_id,
        subject=subject,
        domain=wanted,
        items=[
            {"skill_id": str(i.skill.id), "similarity": i.similarity, "weight": i.skill.weight, "score": i.score}
            for i in top
        ],
    )
    return SkillRetrieval(retrieval=retrieval, items=top)


def skill_list(*, subject: Subject, include_archived: bool = False) -> list[Skill]:
    skills = Skill.objects.filter(subject=subject).defer("embedding")
    if not include_archived:
        skills = skills.filter(status__in=RETRIEVABLE)
    return list(skills.order_by("-weight", "created_at"))


def skill_get(*, subject: Subject, skill_id: uuid.UUID) -> Skill | None:
    return Skill.objects.filter(subject=subject, id=skill_id).defer("embedding").first()


def skill_versions(*, skill: Skill) -> list[SkillVersion]:
    return list(SkillVersion.objects.filter(skill=skill).prefetch_related("citations").order_by("version"))


def skill_events(*, skill: Skill) -> list[SkillEvent]:
    return list(SkillEvent.objects.filter(skill=skill).order_by("sequence"))


def scec_package(scec: Scec) -> dict[str, Any]:
    """The SCEC's immutable package (inline, or in object storage when large)."""
    if scec.package is not None:
        return dict(scec.package)
    loaded: dict[str, Any] = json.loads(storage().get(scec.object_key))
    return loaded
