"""Resource search reads: a matched resource's passages ranked for the question, and the
excerpts of them that fit a token budget (ADR 0025). Both the typed resource search and the
graph search's typed paths return resources this way, never the whole text over budget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from apps.memory.excerpts import Excerpt, choose_excerpts
from apps.memory.models import EpisodicEvent, ResourceItem
from apps.memory.passages import split_passages
from apps.memory.search import fuse as fuse_typed
from apps.memory.search import keyword_lane, vector_lane
from apps.memory.selectors import current_rows
from apps.tenancy.models import Subject

PASSAGES_PER_RESOURCE = 8  # the passages of a matched resource ranked for its excerpts


@dataclass(frozen=True)
class ResourceHit:
    """A matched resource and the passages of it that search returns (not its whole text)."""

    resource: ResourceItem
    excerpts: list[Excerpt]

    @property
    def tokens(self) -> int:
        return sum(excerpt.tokens for excerpt in self.excerpts)


def _ranked_passages(
    subject: Subject, resource: ResourceItem, question: str, vector: list[float], model: str
) -> list[Excerpt]:
    rows = current_rows(EpisodicEvent, subject=subject).filter(resource_id=resource.id).defer("embedding")
    hits = fuse_typed(
        vector_lane(rows, vector=vector, model=model), keyword_lane(rows, query=question), limit=PASSAGES_PER_RESOURCE
    )
    if hits:
        return [
            Excerpt(str(hit.row.id), hit.row.resource_start or 0, hit.row.resource_end or 0, hit.row.summary)
            for hit in hits
        ]
    # Stored before documents had passages: its opening passage, cut at read time.
    return [Excerpt(None, p.start, p.end, p.text) for p in split_passages(resource.extracted_text)[:1]]


def resource_hits(
    *,
    subject: Subject,
    resources: Sequence[ResourceItem],
    question: str,
    vector: list[float],
    model: str,
    token_budget: int | None,
) -> list[ResourceHit]:
    """The resources with their excerpts for the question, within ``token_budget`` tokens of
    excerpts in all; with a budget, a resource left without any is not returned."""
    ranked = [_ranked_passages(subject, resource, question, vector, model) for resource in resources]
    chosen = choose_excerpts(ranked, token_budget)
    return [
        ResourceHit(resource=resource, excerpts=excerpts)
        for resource, excerpts in zip(resources, chosen, strict=True)
        if excerpts or token_budget is None
    ]
