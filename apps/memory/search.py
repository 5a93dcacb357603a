"""Search over one subject's rows by meaning and by words, fused by reciprocal rank.

The vector lane is an exact k-nearest-neighbour scan restricted to the subject by the
(organization, subject) btree: it never returns fewer rows than exist, whatever the subject's
size (an HNSW scan filters after the index and can; see docs/adr/0005). Rows embedded by
another model than the deployment's are matched by words only until re-embedded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import F, QuerySet
from pgvector.django import CosineDistance

RRF_K = 60  # the usual constant of reciprocal rank fusion
LANE_DEPTH = 50  # candidates per lane before fusion


@dataclass(frozen=True)
class SearchHit:
    row: Any
    score: float
    vector_rank: int | None
    keyword_rank: int | None


def vector_lane(rows: QuerySet[Any], *, vector: list[float], model: str, depth: int = LANE_DEPTH) -> list[Any]:
    return list(
        rows.filter(embedding_model=model)
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance", "id")[:depth]
    )


def keyword_query(query: str) -> str | None:
    """Any of the query's words (OR), so a natural question matches rows with some of them;
    ranking rewards rows that match more. Only letters and digits reach the parser."""
    words = re.findall(r"[^\W_]+", query)
    return " | ".join(words) if words else None


def keyword_lane(rows: QuerySet[Any], *, query: str, depth: int = LANE_DEPTH) -> list[Any]:
    terms = keyword_query(query)
    if terms is None:
        return []
    search = SearchQuery(terms, config="english", search_type="raw")
    return list(
        rows.filter(search_vector=search)
        .annotate(rank=SearchRank(F("search_vector"), search))
        .order_by("-rank", "id")[:depth]
    )


def fuse(vector_hits: list[Any], keyword_hits: list[Any], *, limit: int) -> list[SearchHit]:
    """Reciprocal rank fusion; ties broken by id so results are deterministic."""
    ranks: dict[Any, dict[str, int]] = {}
    rows: dict[Any, Any] = {}
    for lane, hits in (("vector", vector_hits), ("keyword", keyword_hits)):
        for rank, row in enumerate(hits, start=1):
            ranks.setdefault(row.id, {})[lane] = rank
            rows[row.id] = row
    scored = [
        SearchHit(
            row=rows[row_id],
            score=sum(1.0 / (RRF_K + r) for r in lane_ranks.values()),
            vector_rank=lane_ranks.get("vector"),
            keyword_rank=lane_ranks.get("keyword"),
        )
        for row_id, lane_ranks in ranks.items()
    ]
    scored.sort(key=lambda hit: (-hit.score, str(hit.row.id)))
    return scored[:limit]
