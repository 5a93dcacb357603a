"""How ``/search`` includes procedural skills when the procedural type is requested."""

from __future__ import annotations

from typing import Any

from apps.procedural.api.serializers import ScoredSkillSerializer
from apps.procedural.selectors import skill_search
from apps.providers.registry import embedder
from apps.tenancy.models import Subject

SEARCH_SKILLS = 3


def procedural_skills(*, subject: Subject, query: str) -> dict[str, Any]:
    """Skills ranked by sim × weight, with the retrieval id that feedback names."""
    found = skill_search(subject=subject, query=query, embedder=embedder(), limit=SEARCH_SKILLS)
    return {"retrieval_id": str(found.retrieval.id), "results": ScoredSkillSerializer(found.items, many=True).data}
