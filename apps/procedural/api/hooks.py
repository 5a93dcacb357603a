"""How ``/search`` includes procedural skills when the procedural store is requested: the
search extension this app registers with retrieval in ``ProceduralConfig.ready``."""

from __future__ import annotations

from apps.procedural.api.serializers import SkillRetrievalSerializer
from apps.procedural.selectors import SkillRetrieval, skill_search
from apps.providers.registry import query_embedder
from apps.retrieval.extensions import SearchExtension
from apps.tenancy.models import Subject

SEARCH_SKILLS = 3


def procedural_skills(*, subject: Subject, query: str) -> SkillRetrieval:
    """Skills ranked by sim × weight, with the retrieval that feedback names."""
    return skill_search(
        subject=subject, query=query, embedder=query_embedder(subject.organization_id), limit=SEARCH_SKILLS
    )


skills_search_extension = SearchExtension(
    name="skills",
    memory_type="procedural",
    search=procedural_skills,
    serializer=SkillRetrievalSerializer,
    help_text="Verified skills, when procedural is requested.",
)
