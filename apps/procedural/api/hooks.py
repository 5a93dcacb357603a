"""How ``/search`` includes procedural skills when the procedural type is requested."""

from __future__ import annotations

from apps.procedural.selectors import SkillRetrieval, skill_search
from apps.providers.registry import embedder
from apps.tenancy.models import Subject

SEARCH_SKILLS = 3


def procedural_skills(*, subject: Subject, query: str) -> SkillRetrieval:
    """Skills ranked by sim × weight, with the retrieval that feedback names
    (``SkillRetrievalSerializer`` renders it)."""
    return skill_search(subject=subject, query=query, embedder=embedder(), limit=SEARCH_SKILLS)
