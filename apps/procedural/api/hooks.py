"""How ``/search`` includes procedural skills when the procedural type is requested: the
search (``procedural_skills``) and how its result is rendered (``SkillRetrievalSerializer``),
the one seam through which retrieval's API reaches procedural memory."""

from __future__ import annotations

from apps.procedural.api.serializers import SkillRetrievalSerializer
from apps.procedural.selectors import SkillRetrieval, skill_search
from apps.providers.registry import embedder
from apps.tenancy.models import Subject

__all__ = ["SkillRetrievalSerializer", "procedural_skills"]

SEARCH_SKILLS = 3


def procedural_skills(*, subject: Subject, query: str) -> SkillRetrieval:
    """Skills ranked by sim × weight, with the retrieval that feedback names
    (``SkillRetrievalSerializer`` renders it)."""
    return skill_search(subject=subject, query=query, embedder=embedder(), limit=SEARCH_SKILLS)
