"""The read adapters of retrieval: bounded reads of the graph and the evidence plane.

Every read here has a cap that does not depend on the subject's history: anchors by name
embedding (15), exactly named anchors (16), rows per anchor, frames per anchor, frames of the
relation lane (240, chosen inside the database by frame id after the predicate filter), rows
by id. The pure core (planner, scoring, fusion) decides; this module only fetches.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Q
from pgvector.django import CosineDistance

from apps.graph.adapter import cypher
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.retrieval.types import AnchorCandidate, FactCandidate, RowCandidate
from apps.tenancy.models import Subject

ANCHOR_RECALL = 15  # paper: K_A
HNSW_MODEL = "all-MiniLM-L6-v2"  # the partial HNSW index of graph_anchor_vector covers this model
HNSW_DIMENSION = 384
EXACT_SCAN_LIMIT = 5000  # below this many anchors an exact scan is as fast and always complete
ROWS_PER_ANCHOR = 24  # the most recent rows that mention an anchor
FRAMES_PER_ANCHOR = 16  # incident frames per anchor in the base lane, by frame id
CO_PARTICIPANTS = 8  # anchors reached through those frames whose rows join the base lane
RELATION_FRAME_CAP = 240  # paper A.3


@dataclass(frozen=True)
class AnchorRecall:
    anchor_key: str
    name: str
    type: str
    similarity: float


def _recall_sql(*, exact: bool) -> str:
    distance = (
        "embedding <=> %s::vector" if exact else f"embedding::vector({HNSW_DIMENSION}) <=> %s::vector({HNSW_DIMENSION})"
    )
    return f"""
        SELECT anchor_key, name, anchor_type, 1 - ({distance}) AS similarity
        FROM graph_anchor_vector
        WHERE organization_id = %s AND subject_id = %s AND embedding_model = %s
        ORDER BY {distance}
        LIMIT %s
    """


def recall_anchors(
    *, subject: Subject, vector: list[float], model: str, limit: int = ANCHOR_RECALL
) -> list[AnchorRecall]:
    """The subject's anchors nearest to the question by name embedding.

    Large subjects go through the HNSW index with iterative scans (the subject filter applies
    after the index, so a plain HNSW scan could return fewer rows than exist); if it still
    comes back short, an exact scan answers, so the result is never incomplete."""
    text = str(vector)
    params: list[Any] = [text, subject.organization_id, subject.id, model, text, limit]
    with connection.cursor() as cursor:
        # Counted only up to the threshold: a full count(*) grows with the subject's anchors.
        cursor.execute(
            "SELECT count(*) FROM (SELECT 1 FROM graph_anchor_vector WHERE organization_id = %s AND subject_id = %s"
            " AND embedding_model = %s LIMIT %s) AS bounded",
            [subject.organization_id, subject.id, model, EXACT_SCAN_LIMIT + 1],
        )
        total = int(cursor.fetchone()[0])
        use_index = model == HNSW_MODEL and len(vector) == HNSW_DIMENSION and total > EXACT_SCAN_LIMIT
        if use_index:
            cursor.execute("SET LOCAL hnsw.iterative_scan = 'relaxed_order'")
            cursor.execute("SET LOCAL hnsw.ef_search = 100")
            cursor.execute(_recall_sql(exact=False), params)
            rows = cursor.fetchall()
            if len(rows) < min(limit, total):
                use_index = False
        if not use_index:
            cursor.execute(_recall_sql(exact=True), params)
            rows = cursor.fetchall()
    recalled = [AnchorRecall(anchor_key=r[0], name=r[1], type=r[2], similarity=float(r[3])) for r in rows]
    return sorted(recalled, key=lambda a: (-a.similarity, a.anchor_key))


def anchor_candidates(
    *, subject: Subject, recalled: Sequence[AnchorRecall], named_keys: Sequence[str]
) -> list[AnchorCandidate]:
    """Recalled and exactly named anchors with their graph properties, in one graph read."""
    similarity = {a.anchor_key: a.similarity for a in recalled}
    keys = list(dict.fromkeys([*similarity, *named_keys]))
    found = _anchors(subject, _ANCHOR_CANDIDATES, keys)
    return [
        AnchorCandidate(
            anchor_key=key,
            name=str(props[1]),
            type=str(props[2]),
            vector_similarity=similarity.get(key, 0.0),
            degree=int(props[3]),
            is_person=props[2] == "person",
            episodic_ids=list(props[4]),
            semantic_ids=list(props[5]),
        )
        for key in keys
        if (props := found.get(key)) is not None
    ]


# AGE plans `a.key IN $keys` (and `UNWIND … WHERE a.key = k`) as a scan of every anchor of the
# graph; `UNWIND $keys AS k MATCH (n:Anchor {subject_id: …, key: k})` is one lookup in the GIN
# index of Anchor.properties per key. Joined on to edges and frames, though, an UNWIND is
# estimated at 1000 rows and the planner hash-joins every edge and frame of the graph, so the
# adjacency reads go one anchor at a time (`a.key = $key`: the unique btree, nested loops).
# Anchor properties hold every row id that mentions the anchor (megabytes for a hub) and each
# expression over them reads the whole value: row ids come sliced, and nothing reads the anchor
# again once per edge.
_ANCHOR_CANDIDATES = f"""
UNWIND $keys AS k
MATCH (n:Anchor {{subject_id: $subject_id, key: k}})
WITH k, properties(n) AS p
RETURN [k, p.name, p.type, p.mention_count, p.episodic_ids[-{ROWS_PER_ANCHOR}..], p.semantic_ids[-{ROWS_PER_ANCHOR}..]]
"""
_ANCHOR_NAMES = """
UNWIND $keys AS k
MATCH (n:Anchor {subject_id: $subject_id, key: k})
RETURN [k, n.name]
"""
_INCIDENT_FRAMES = f"""
MATCH (a:Anchor)<-[:ARM]-(f:Frame)
WHERE a.subject_id = $subject_id AND a.key = $key AND f.subject_id = $subject_id
RETURN properties(f) ORDER BY f.frame_id LIMIT {FRAMES_PER_ANCHOR}
"""
_RELATION_FRAMES = f"""
MATCH (a:Anchor)<-[:ARM]-(f:Frame)
WHERE a.subject_id = $subject_id AND a.key = $key AND f.subject_id = $subject_id AND f.predicate IN $predicates
WITH DISTINCT f
RETURN properties(f) ORDER BY f.frame_id LIMIT {RELATION_FRAME_CAP}
"""


def _anchors(subject: Subject, query: str, keys: Sequence[str]) -> dict[str, list[Any]]:
    """One index lookup per key; each row is a list that starts with the key."""
    if not keys:
        return {}
    rows = cypher(
        organization_id=subject.organization_id,
        query=query,
        params={"subject_id": str(subject.id), "keys": list(keys)},
        returns=["anchor"],
    )
    return {str(row[0][0]): list(row[0]) for row in rows}


def incident_frames(*, subject: Subject, keys: Sequence[str]) -> list[dict[str, Any]]:
    """Up to FRAMES_PER_ANCHOR frames per anchor (lowest frame ids: a deterministic choice)."""
    frames: dict[str, dict[str, Any]] = {}
    for key in dict.fromkeys(keys):
        for frame in _adjacent_frames(subject, _INCIDENT_FRAMES, key=key):
            frames.setdefault(frame["frame_id"], frame)
    return [frames[k] for k in sorted(frames)]


def relation_frames(*, subject: Subject, keys: Sequence[str], predicates: Sequence[str]) -> list[dict[str, Any]]:
    """One-hop adjacency from the named anchors, predicate-filtered in the database, then at
    most 240 frames by frame id."""
    if not predicates:
        return []
    frames: dict[str, dict[str, Any]] = {}
    for key in dict.fromkeys(keys):
        for frame in _adjacent_frames(subject, _RELATION_FRAMES, key=key, predicates=list(predicates)):
            frames.setdefault(frame["frame_id"], frame)
    return [frames[k] for k in sorted(frames)[:RELATION_FRAME_CAP]]


def _adjacent_frames(subject: Subject, query: str, **params: Any) -> list[dict[str, Any]]:
    rows = cypher(
        organization_id=subject.organization_id,
        query=query,
        params={"subject_id": str(subject.id), **params},
        returns=["frame"],
    )
    return [row[0] for row in rows]


def fact_candidates(*, subject: Subject, frames: Sequence[dict[str, Any]]) -> list[FactCandidate]:
    """Frames with their arms' anchor names (one graph read for all the names)."""
    from apps.providers.dates import parse_event_time

    keys = sorted({key for frame in frames for _, key in frame["arms"]})
    names = {k: str(v[1]) for k, v in _anchors(subject, _ANCHOR_NAMES, keys).items()}
    facts = []
    for frame in frames:
        event_time = parse_event_time(frame["event_time"]).start if frame.get("event_time") else None
        mention = frame.get("mention_time")
        facts.append(
            FactCandidate(
                frame_id=str(frame["frame_id"]),
                predicate=str(frame["predicate"]),
                roles=[(role, key, names.get(key, key)) for role, key in frame["arms"]],
                literals={str(k): str(v) for k, v in dict(frame.get("literals") or {}).items()},
                event_time=event_time,
                event_time_precision=str(frame.get("event_time_precision") or ""),
                mention_time=_parse_time(mention),
                status="planned" if frame.get("status") == "planned" else "done",
                citations=[str(c) for c in frame["citations"]],
                kind="semantic" if frame.get("kind") == "semantic" else "episodic",
            )
        )
    return facts


def _parse_time(value: Any) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def rows_by_id(
    *, subject: Subject, ids: Sequence[str], vector: list[float], model: str, lane: str
) -> list[RowCandidate]:
    """The rows with these ids (episodic and semantic), with their similarity to the question."""
    wanted = [uuid.UUID(i) for i in dict.fromkeys(ids)]
    if not wanted:
        return []
    rows: list[tuple[float, RowCandidate]] = []
    for model_class, kind in ((EpisodicEvent, "episodic"), (SemanticItem, "semantic")):
        queryset = (
            model_class.objects.filter(subject=subject, id__in=wanted)
            .annotate(distance=CosineDistance("embedding", vector))
            .defer("embedding")
        )
        for row in queryset:
            similarity = 1.0 - float(row.distance) if row.embedding_model == model and row.distance is not None else 0.0
            rows.append((similarity, _row_candidate(row, kind, lane)))
    return _with_vector_ranks(rows)


def _row_candidate(row: Any, kind: str, lane: str, *, vector_rank: int | None = None) -> RowCandidate:
    return RowCandidate(
        row_id=str(row.id),
        memory_type="episodic" if kind == "episodic" else "semantic",
        text=row_text(row),
        event_time=getattr(row, "event_time", None),
        mention_time=getattr(row, "mention_time", None),
        created_at=row.created_at,
        chunk_id=str(row.chunk_id),
        session_id=row.session_id,
        lane=lane,  # type: ignore[arg-type]
        vector_rank=vector_rank,
        lexical_score=0.0,
    )


def _with_vector_ranks(scored: list[tuple[float, RowCandidate]]) -> list[RowCandidate]:
    """Rank each type's rows by similarity (0-based), the shallow prior fusion uses."""
    ranked: list[RowCandidate] = []
    for kind in ("episodic", "semantic"):
        of_kind = sorted((s for s in scored if s[1].memory_type == kind), key=lambda s: (-s[0], s[1].row_id))
        for rank, (_, row) in enumerate(of_kind):
            ranked.append(_replace_rank(row, rank))
    return ranked


def _replace_rank(row: RowCandidate, rank: int) -> RowCandidate:
    from dataclasses import replace

    return replace(row, vector_rank=rank)


def row_text(row: Any) -> str:
    """What a search returns of a row: the episodic summary (speaker and what was said) or the
    semantic statement. The details stay one GET away."""
    if isinstance(row, SemanticItem):
        return f"{row.name}: {row.summary}"
    return str(row.summary)


def neighbour_ids(*, subject: Subject, row_ids: Sequence[str], per_row: int = 1) -> list[str]:
    """Same-chunk neighbours of episodic rows (the turns just before and after), recomputed from
    provenance at read time rather than stored as graph edges."""
    if not row_ids:
        return []
    anchors = list(
        EpisodicEvent.objects.filter(subject=subject, id__in=[uuid.UUID(i) for i in row_ids]).values_list(
            "chunk_id", "created_at", "id"
        )
    )
    found: list[str] = []
    for chunk_id, created_at, row_id in anchors:
        same_chunk = EpisodicEvent.objects.filter(subject=subject, chunk_id=chunk_id).exclude(id=row_id)
        before = same_chunk.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=row_id))
        after = same_chunk.filter(Q(created_at__gt=created_at) | Q(created_at=created_at, id__gt=row_id))
        found += [str(i) for i in before.order_by("-created_at", "-id").values_list("id", flat=True)[:per_row]]
        found += [str(i) for i in after.order_by("created_at", "id").values_list("id", flat=True)[:per_row]]
    return found


def flat_rows(*, subject: Subject, question: str, vector: list[float], model: str, depth: int) -> list[RowCandidate]:
    """Direct evidence retrieval (the ablation baseline and the fallback): vector and keyword
    lanes over the subject's episodic and semantic rows, each ranked on its own."""
    from apps.memory.search import keyword_lane, vector_lane
    from apps.memory.services import current_rows

    scored: list[tuple[float, RowCandidate]] = []
    for model_class, kind in ((EpisodicEvent, "episodic"), (SemanticItem, "semantic")):
        rows = current_rows(model_class, subject=subject).defer("embedding")
        by_vector = vector_lane(rows, vector=vector, model=model, depth=depth)
        by_words = keyword_lane(rows, query=question, depth=depth)
        ranks = {row.id: rank for rank, row in enumerate(by_vector)}
        lexical = {row.id: float(getattr(row, "rank", 0.0)) for row in by_words}
        for row in {r.id: r for r in [*by_vector, *by_words]}.values():
            rrf = (1 / (60 + ranks[row.id]) if row.id in ranks else 0.0) + (
                1 / (60 + list(lexical).index(row.id)) if row.id in lexical else 0.0
            )
            candidate = _row_candidate(row, kind, "flat", vector_rank=ranks.get(row.id))
            scored.append((rrf, _with_lexical(candidate, lexical.get(row.id, 0.0))))
    scored.sort(key=lambda s: (-s[0], s[1].row_id))
    return [row for _, row in scored]


def _with_lexical(row: RowCandidate, score: float) -> RowCandidate:
    from dataclasses import replace

    return replace(row, lexical_score=score)
