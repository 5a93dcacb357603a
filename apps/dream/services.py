"""Semantic AutoDream (docs/architecture.md, "Consolidation plane"): explicit rounds over a frontier.

``dream_request`` queues a round as a job (the batch ingestion job calls it after every five
chunks and after the last one; it never schedules itself). A round:

1. makes sure the frontier is indexed (the chunks' rows are indexed here if their indexing job
   has not run yet; a row another worker is indexing right now makes the job retry later);
2. takes the sources: eligible anchors backed by the frontier's semantic rows (the final round
   adds the eligible anchors no earlier round used as a source), their candidate pairs from the
   name index, and plans at most the round's cap of unseen pairs (``apps.dream.candidates``);
3. asks the provider for one decision per pair, caches explicit rejections, and merges a→b
   losslessly (``apps.graph.merge_store``), each merge in a savepoint of its own with its record;
4. after a final round that merged, runs one repair round over the touched representatives;
5. records the round and emits ``dream.completed`` with the merges.

The evidence plane is only read (which rows a chunk holds, and their index status); nothing
here writes to it (invariant 5).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from apps.consent.purposes import STORE_CONVERSATIONS
from apps.dream.candidates import (
    NAME_SCAN_LIMIT,
    NEIGHBOURS,
    ROUND_CAPS,
    SAFE_TYPES,
    AnchorInfo,
    CandidatePair,
    NameIndex,
    Neighbour,
    RoundKind,
    candidate_pairs,
    decision_outcome,
    name_partners,
    plan_round,
    rejection_key,
)
from apps.dream.evidence import codes_agree, names_resemble, naming_sentences
from apps.dream.models import DreamMerge, DreamRejection, DreamRound, DreamSource
from apps.erasure.erasers import delete_batch, subject_rows
from apps.erasure.registry import Counts, Eraser, ErasureTarget, eraser_register
from apps.graph import store
from apps.graph.adapter import cypher
from apps.graph.merge_store import MergeConflict, anchor_merge, anchor_merge_undo
from apps.graph.models import AnchorFrame, AnchorRow, AnchorVector
from apps.graph.services import MAX_INDEX_ATTEMPTS, index_chunk
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.memory.models import EpisodicEvent, IndexedRecord, SemanticItem
from apps.platform.errors import Conflict, NotFound, ValidationFailed
from apps.providers.dream_schemas import DreamAnchor, DreamQuestion
from apps.providers.interfaces import DreamJudge, MeteringContext
from apps.providers.registry import dream_judge_for
from apps.providers.services import DatabaseUsageMeter
from apps.retrieval.reads import EXACT_SCAN_LIMIT, HNSW_DIMENSION, HNSW_MODELS
from apps.tenancy.models import Subject
from apps.webhooks.events import DREAM_COMPLETED
from apps.webhooks.services import webhook_event_emit

logger = logging.getLogger(__name__)

DREAM_JOB_KIND = "dream.semantic"
DREAM_EVERY_CHUNKS = 5  # the ingestion driver's schedule (paper A.5)
MAX_CHUNK_IDS = 100
PAIRS_PER_STEP = 10  # pairs decided per committed step of a dream job


class FrontierNotIndexed(TimeoutError):
    """A frontier row is being indexed by another worker right now: a recoverable error, so the
    job retries with backoff (``workers.base``)."""


# --- requests ----------------------------------------------------------------------------------


def _chunks_with_rows(subject: Subject, chunk_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    found: set[uuid.UUID] = set()
    for model in (EpisodicEvent, SemanticItem):
        found |= set(
            model.objects.filter(subject=subject, chunk_id__in=list(chunk_ids)).values_list("chunk_id", flat=True)
        )
    return found


def dream_request(*, subject: Subject, chunk_ids: Sequence[uuid.UUID], final: bool) -> Job:
    """Queue a dream round over the chunks just written (after commit); ``final`` marks the last."""
    chunk_ids = list(dict.fromkeys(chunk_ids))
    if not chunk_ids and not final:
        raise ValidationFailed("chunk_ids: give the ids of the chunks just written (only a final round may omit them).")
    if len(chunk_ids) > MAX_CHUNK_IDS:
        raise ValidationFailed(f"chunk_ids: at most {MAX_CHUNK_IDS} chunks per round.")
    unknown = sorted(str(c) for c in set(chunk_ids) - _chunks_with_rows(subject, chunk_ids))
    if unknown:
        raise ValidationFailed(
            "chunk_ids: these chunks hold no episodic or semantic rows of this subject.", details={"unknown": unknown}
        )
    job = job_create(organization_id=subject.organization_id, kind=DREAM_JOB_KIND, subject_id=subject.id)
    job_enqueue_on_commit(
        job=job,
        task_name=task_names.SEMANTIC_DREAM,
        kwargs={"subject_id": str(subject.id), "chunk_ids": [str(c) for c in chunk_ids], "final": final},
    )
    return job


# --- reads: frontier, sources, name index --------------------------------------------------------

_ANCHORS_OF_ROWS = """
UNWIND $row_ids AS r
MATCH (n:Anchor {subject_id: $subject_id, semantic_ids: [r]})
RETURN DISTINCT n.key, n.type
"""
_ELIGIBLE_ANCHORS = """
MATCH (n:Anchor {subject_id: $subject_id})
WHERE n.type IN $types AND size(n.semantic_ids) > 0
RETURN n.key
"""


def _ensure_indexed(subject: Subject, chunk_ids: Sequence[uuid.UUID]) -> list[str]:
    """The frontier: ids of the chunks' semantic rows, once every one of them is indexed (or
    failed for good). Rows whose indexing job has not run yet are indexed here."""
    waiting = Q(index_status=IndexedRecord.IndexStatus.PENDING) | Q(
        index_status=IndexedRecord.IndexStatus.FAILED, index_attempts__lt=MAX_INDEX_ATTEMPTS
    )
    pending = set()
    for model in (EpisodicEvent, SemanticItem):
        pending |= set(
            model.objects.filter(waiting, subject=subject, chunk_id__in=list(chunk_ids)).values_list(
                "chunk_id", flat=True
            )
        )
    for chunk_id in sorted(pending):
        index_chunk(chunk_id=chunk_id)
    rows = SemanticItem.objects.filter(subject=subject, chunk_id__in=list(chunk_ids))
    if rows.filter(index_status=IndexedRecord.IndexStatus.PENDING).exists():
        raise FrontierNotIndexed("frontier rows are being indexed")
    return [str(i) for i in rows.filter(index_status=IndexedRecord.IndexStatus.INDEXED).values_list("id", flat=True)]


def _frontier_sources(subject: Subject, row_ids: Sequence[str]) -> list[str]:
    if not row_ids:
        return []
    rows = cypher(
        organization_id=subject.organization_id,
        query=_ANCHORS_OF_ROWS,
        params={"subject_id": str(subject.id), "row_ids": list(row_ids)},
        returns=["key", "type"],
    )
    return sorted({str(key) for key, anchor_type in rows if anchor_type in SAFE_TYPES})


def _never_used_sources(subject: Subject) -> list[str]:
    rows = cypher(
        organization_id=subject.organization_id,
        query=_ELIGIBLE_ANCHORS,
        params={"subject_id": str(subject.id), "types": sorted(SAFE_TYPES)},
        returns=["key"],
    )
    used = set(DreamSource.objects.filter(subject=subject).values_list("anchor_key", flat=True))
    return sorted({str(row[0]) for row in rows} - used)


def _anchor_info(props: dict[str, Any]) -> AnchorInfo:
    return AnchorInfo(
        key=str(props["key"]),
        name=str(props["name"]),
        type=str(props["type"]),
        aliases=tuple(props.get("aliases") or ()),
        mention_count=int(props.get("mention_count") or 0),
        semantic_backed=bool(props.get("semantic_ids")),
    )


_NEAREST_SQL = """
SELECT s.anchor_key, x.anchor_key, 1 - x.distance
FROM graph_anchor_vector AS s
CROSS JOIN LATERAL (
    SELECT v.anchor_key, {distance} AS distance
    FROM graph_anchor_vector AS v
    WHERE v.organization_id = %(organization)s AND v.subject_id = %(subject)s AND v.embedding_model = %(model)s
    ORDER BY {distance}
    LIMIT %(limit)s
) AS x
WHERE s.organization_id = %(organization)s AND s.subject_id = %(subject)s AND s.embedding_model = %(model)s
  AND s.anchor_key = ANY(%(keys)s::text[])
"""
_EXACT_DISTANCE = "v.embedding <=> s.embedding"
_INDEX_DISTANCE = f"v.embedding::vector({HNSW_DIMENSION}) <=> s.embedding::vector({HNSW_DIMENSION})"


def _nearest(subject: Subject, model: str, keys: Sequence[str], *, exact: bool) -> dict[str, list[Neighbour]]:
    """The ``NEIGHBOURS`` nearest name-index entries of each of ``keys`` (one statement)."""
    params: dict[str, Any] = {
        "organization": subject.organization_id,
        "subject": subject.id,
        "model": model,
        "limit": NEIGHBOURS,
        "keys": list(keys),
    }
    with connection.cursor() as cursor:
        if exact:
            cursor.execute(_NEAREST_SQL.format(distance=_EXACT_DISTANCE), params)
            rows = cursor.fetchall()
        else:
            # Without a sort the ordered HNSW scan is the only plan: the subject's btree would
            # otherwise win on a young subject's statistics and sort every vector of the
            # subject once per source. Sorting is allowed again right after this statement.
            cursor.execute("SELECT current_setting('enable_sort')")
            enable_sort = cursor.fetchone()[0]
            cursor.execute("SET LOCAL hnsw.iterative_scan = 'relaxed_order'")
            cursor.execute("SET LOCAL hnsw.ef_search = 100")
            cursor.execute("SET LOCAL enable_sort = off")
            try:
                cursor.execute(_NEAREST_SQL.format(distance=_INDEX_DISTANCE), params)
                rows = cursor.fetchall()
            finally:
                cursor.execute("SELECT set_config('enable_sort', %s, true)", [enable_sort])
    found: dict[str, list[Neighbour]] = {key: [] for key in keys}
    for key, other, similarity in rows:
        found[key].append(Neighbour(key=other, cosine=float(similarity)))
    return {key: sorted(ns, key=lambda n: (-n.cosine, n.key)) for key, ns in found.items()}


def _neighbours(subject: Subject, keys: Sequence[str]) -> dict[str, list[Neighbour]]:
    """The 4 nearest name-index entries of each source (itself included), as retrieval's anchor
    recall finds them (HNSW above ``EXACT_SCAN_LIMIT`` anchors, exact below; complete either
    way), in one statement per embedding model rather than one recall per source: the vectors
    stay in the database and the subject's size is counted once per round."""
    models: dict[str, list[str]] = {}
    for key, model in AnchorVector.objects.filter(subject=subject, anchor_key__in=list(keys)).values_list(
        "anchor_key", "embedding_model"
    ):
        models.setdefault(model, []).append(key)
    found: dict[str, list[Neighbour]] = {}
    for model, model_keys in sorted(models.items()):
        total = AnchorVector.objects.filter(subject=subject, embedding_model=model)[: EXACT_SCAN_LIMIT + 1].count()
        nearest = _nearest(subject, model, model_keys, exact=model not in HNSW_MODELS or total <= EXACT_SCAN_LIMIT)
        short = [key for key in model_keys if len(nearest[key]) < min(NEIGHBOURS, total)]
        if short:  # the index scan came back short: the exact scan answers, so nothing is missed
            nearest.update(_nearest(subject, model, short, exact=True))
        found.update(nearest)
    return found


_PAIR_COSINE_SQL = """
SELECT a.anchor_key, b.anchor_key, 1 - (a.embedding <=> b.embedding)
FROM unnest(%(firsts)s::text[], %(seconds)s::text[]) AS p(x, y)
JOIN graph_anchor_vector AS a
  ON a.organization_id = %(organization)s AND a.subject_id = %(subject)s AND a.anchor_key = p.x
JOIN graph_anchor_vector AS b
  ON b.organization_id = a.organization_id AND b.subject_id = a.subject_id AND b.anchor_key = p.y
 AND b.embedding_model = a.embedding_model
"""
MENTION_ROWS = 12  # newest evidence rows read per anchor for its decision texts
FRAME_IDS = 200  # frames read per anchor for the co-occurrence rule
NAMESAKES = 20


def _names_by_type(subject: Subject, types: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """(key, name) of the name index, per type (at most ``NAME_SCAN_LIMIT`` per type)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for anchor_type in sorted(set(types)):
        found[anchor_type] = list(
            AnchorVector.objects.filter(subject=subject, anchor_type=anchor_type)
            .order_by("anchor_key")
            .values_list("anchor_key", "name")
            .distinct()[:NAME_SCAN_LIMIT]
        )
    return found


def _named_neighbours(
    subject: Subject, eligible: Sequence[AnchorInfo], indexes: dict[str, NameIndex]
) -> dict[str, list[Neighbour]]:
    """The name lane: per source, the anchors of its type whose names resemble its own, each with
    the cosine of the two name vectors (one statement)."""
    partners = {a.key: name_partners(a, indexes[a.type]) for a in eligible if a.type in indexes}
    firsts = [key for key, others in partners.items() for _ in others]
    seconds = [other for others in partners.values() for other in others]
    cosines: dict[tuple[str, str], float] = {}
    if firsts:
        with connection.cursor() as cursor:
            cursor.execute(
                _PAIR_COSINE_SQL,
                {
                    "organization": subject.organization_id,
                    "subject": subject.id,
                    "firsts": firsts,
                    "seconds": seconds,
                },
            )
            cosines = {(a, b): float(c) for a, b, c in cursor.fetchall()}
    return {
        key: [Neighbour(key=other, cosine=cosines.get((key, other), 0.0)) for other in others]
        for key, others in partners.items()
    }


def _row_texts(subject: Subject, row_ids: dict[str, list[uuid.UUID]]) -> dict[uuid.UUID, str]:
    texts: dict[uuid.UUID, str] = {}
    ids = [r for rows in row_ids.values() for r in rows]
    for row_id, summary, details in EpisodicEvent.objects.filter(subject=subject, id__in=ids).values_list(
        "id", "summary", "details"
    ):
        texts[row_id] = f"{summary}\n{details}"
    for row_id, name, summary, details in SemanticItem.objects.filter(subject=subject, id__in=ids).values_list(
        "id", "name", "summary", "details"
    ):
        texts[row_id] = f"{name}: {summary}\n{details}"
    return texts


def _contexts(subject: Subject, anchors: Sequence[AnchorInfo]) -> dict[str, DreamAnchor]:
    """Each anchor as its decision sees it: names, a few sentences of its newest evidence rows
    that name it, and the frames it is an arm of (the evidence plane is only read)."""
    rows: dict[str, list[uuid.UUID]] = {}
    frames: dict[str, list[str]] = {}
    for anchor in anchors:
        rows[anchor.key] = list(
            AnchorRow.objects.filter(subject=subject, anchor_key=anchor.key)
            .order_by("-id")
            .values_list("row_id", flat=True)[:MENTION_ROWS]
        )
        frames[anchor.key] = list(
            AnchorFrame.objects.filter(subject=subject, anchor_key=anchor.key)
            .order_by("frame_id")
            .values_list("frame_id", flat=True)[:FRAME_IDS]
        )
    texts = _row_texts(subject, rows)
    found: dict[str, DreamAnchor] = {}
    for anchor in anchors:
        texts_of = [texts.get(row_id, "") for row_id in rows[anchor.key]]
        found[anchor.key] = DreamAnchor(
            name=anchor.name,
            aliases=list(anchor.aliases),
            mention_count=anchor.mention_count,
            mentions=naming_sentences(texts_of, [anchor.name, *anchor.aliases]),
            frames=frames[anchor.key],
        )
    return found


def _namesakes(pair: CandidatePair, indexes: dict[str, NameIndex]) -> list[str]:
    index = indexes.get(pair.anchor_type)
    if index is None:
        return []
    own = {pair.first.key, pair.second.key}
    near = dict([*index.near(pair.first.name), *index.near(pair.second.name)])
    return [
        name
        for key, name in sorted(near.items())
        if key not in own and (names_resemble(pair.first.name, name) or names_resemble(pair.second.name, name))
    ][:NAMESAKES]


# --- a round -----------------------------------------------------------------------------------


@dataclass
class RoundStats:
    kind: str
    frontier_rows: int = 0
    sources: int = 0
    pairs_considered: int = 0
    verified: int = 0
    merged: int = 0
    rejected: int = 0
    cached: int = 0
    skipped_by_cap: int = 0
    invalid: int = 0
    stale: int = 0
    duration_ms: float = 0.0
    merges: list[str] = field(default_factory=list)
    merged_pairs: list[dict[str, Any]] = field(default_factory=list)  # from, into, type, cosine, decided by

    def as_dict(self) -> dict[str, Any]:
        values = {
            name: value for name, value in dataclasses.asdict(self).items() if name not in ("merges", "merged_pairs")
        }
        return {**values, "duration_ms": round(self.duration_ms, 1)}


class DreamRoundRunner:
    """One round over one subject: ``prepare`` plans, ``step`` decides the next pairs (each merge
    in a savepoint), ``finish`` records the round. A job commits between the calls; the
    synchronous ``dream_run`` makes them all in the caller's transaction."""

    def __init__(
        self,
        *,
        subject: Subject,
        kind: RoundKind,
        llm: DreamJudge,
        job: Job | None = None,
        chunk_ids: Sequence[uuid.UUID] = (),
        sources: Sequence[str] | None = None,
    ) -> None:
        self.subject, self.kind, self.llm, self.job = subject, kind, llm, job
        self.chunk_ids = [uuid.UUID(str(c)) for c in chunk_ids]
        self.given_sources = list(sources) if sources is not None else None
        self.stats = RoundStats(kind=kind)
        self.metering = MeteringContext(organization_id=subject.organization_id, meter=DatabaseUsageMeter())
        self.queue: list[CandidatePair] = []
        self.names: dict[str, NameIndex] = {}
        self.merged_away: set[str] = set()
        self.touched: set[str] = set()
        self.round_id: uuid.UUID | None = None
        self._elapsed = 0.0

    def _timed(self, started: float) -> None:
        self._elapsed += time.perf_counter() - started

    def prepare(self) -> None:
        started = time.perf_counter()
        if self.given_sources is not None:
            sources = self.given_sources
        else:
            frontier = _ensure_indexed(self.subject, self.chunk_ids)
            self.stats.frontier_rows = len(frontier)
            sources = _frontier_sources(self.subject, frontier)
            if self.kind == "final":
                sources = sorted(set(sources) | set(_never_used_sources(self.subject)))
        organization_id, subject_id = self.subject.organization_id, self.subject.id
        source_anchors = store.anchors_by_key(organization_id=organization_id, subject_id=subject_id, keys=sources)
        eligible = [_anchor_info(p) for p in source_anchors.values() if _anchor_info(p).eligible]
        neighbours = _neighbours(self.subject, [a.key for a in eligible])
        names = _names_by_type(self.subject, [a.type for a in eligible])
        self.names = {anchor_type: NameIndex(type_names) for anchor_type, type_names in names.items()}
        named = _named_neighbours(self.subject, eligible, self.names)
        others = sorted({n.key for ns in [*neighbours.values(), *named.values()] for n in ns} - set(source_anchors))
        anchors = {
            key: _anchor_info(props)
            for key, props in {
                **source_anchors,
                **store.anchors_by_key(organization_id=organization_id, subject_id=subject_id, keys=others),
            }.items()
        }
        pairs = candidate_pairs(eligible, neighbours, anchors, named)
        rejected = set(
            DreamRejection.objects.filter(subject=self.subject, cache_key__in=[p.cache_key for p in pairs]).values_list(
                "cache_key", flat=True
            )
        )
        plan = plan_round(pairs, rejected=rejected, cap=ROUND_CAPS[self.kind], sources=[a.key for a in eligible])
        self.queue = list(plan.to_verify)
        self.stats.sources = len(eligible)
        self.stats.pairs_considered = plan.considered
        self.stats.cached = len(plan.cached)
        self.stats.skipped_by_cap = len(plan.skipped)
        DreamSource.objects.bulk_create(
            [
                DreamSource(organization_id=organization_id, subject=self.subject, anchor_key=key)
                for key in plan.used_sources
            ],
            ignore_conflicts=True,
        )
        fields = {"organization_id": organization_id, "subject": self.subject, "kind": self.kind}
        chunks = [str(c) for c in self.chunk_ids]
        if self.job is None:
            dream_round = DreamRound.objects.create(**fields, chunk_ids=chunks)
        else:  # a retried job step finds its round again
            dream_round, _ = DreamRound.objects.get_or_create(**fields, job=self.job, defaults={"chunk_ids": chunks})
        self.round_id = dream_round.id
        self._timed(started)

    @property
    def done(self) -> bool:
        return not self.queue

    def step(self, limit: int = PAIRS_PER_STEP) -> None:
        started = time.perf_counter()
        batch, self.queue = self.queue[:limit], self.queue[limit:]
        anchors = {a.key: a for pair in batch for a in (pair.first, pair.second)}
        contexts = _contexts(self.subject, list(anchors.values()))
        for pair in batch:
            self._decide(pair, contexts)
        self._timed(started)

    def _reject(self, pair: CandidatePair, decided_by: str) -> None:
        DreamRejection.objects.get_or_create(
            organization_id=self.subject.organization_id,
            subject=self.subject,
            cache_key=pair.cache_key,
            defaults={"anchor_type": pair.anchor_type, "decided_by": decided_by[:120]},
        )
        self.stats.rejected += 1

    def _decide(self, pair: CandidatePair, contexts: dict[str, DreamAnchor]) -> None:
        if set(pair.keys) & self.merged_away:
            self.stats.stale += 1  # one side was merged earlier in this round: the repair round sees it
            return
        if not codes_agree(pair.anchor_type, pair.first.name, pair.second.name):
            self._reject(pair, "rule:numbers-dates-codes")  # never merged, whatever a model says
            return
        question = DreamQuestion(
            type=pair.anchor_type,
            first=contexts[pair.first.key],
            second=contexts[pair.second.key],
            namesakes=_namesakes(pair, self.names),
        )
        verdict = self.llm.dream_decide(question, metering=self.metering)
        self.stats.verified += 1
        outcome, target_key = decision_outcome(
            pair, same_entity=verdict.same_entity, representative=verdict.representative
        )
        decided_by = str(getattr(self.llm, "model", type(self.llm).__name__))
        if outcome == "reject":
            self._reject(pair, decided_by)
            return
        if outcome == "invalid":
            logger.info("dream decision named neither anchor", extra={"subject_id": str(self.subject.id)})
            self.stats.invalid += 1
            return
        target, source = (pair.first, pair.second) if target_key == pair.first.key else (pair.second, pair.first)
        try:
            with transaction.atomic():
                merged = anchor_merge(
                    organization_id=self.subject.organization_id,
                    subject_id=self.subject.id,
                    source_key=source.key,
                    target_key=target.key,
                )
                record = DreamMerge.objects.create(
                    organization_id=self.subject.organization_id,
                    subject=self.subject,
                    round_id=self.round_id,
                    job=self.job,
                    anchor_type=pair.anchor_type,
                    source_key=source.key,
                    source_name=source.name[:300],
                    target_key=target.key,
                    target_name=target.name[:300],
                    cosine=pair.cosine,
                    decided_by=decided_by[:120],
                    frames_rekeyed=len(merged.frame_renames),
                    frames_united=merged.frames_united,
                    snapshot=merged.snapshot,
                    after_digest=merged.after_digest,
                )
        except MergeConflict:
            self.stats.stale += 1  # an anchor went away meanwhile (another round merged it)
            return
        self.merged_away.add(source.key)
        self.touched.add(target.key)
        self.stats.merged += 1
        self.stats.merges.append(str(record.id))
        self.stats.merged_pairs.append(
            {
                "from": source.name,
                "into": target.name,
                "type": pair.anchor_type,
                "cosine": round(pair.cosine, 3),
                "decided_by": decided_by,
            }
        )

    def finish(self) -> RoundStats:
        assert self.round_id is not None, "prepare() first"
        self.stats.duration_ms = self._elapsed * 1000
        values = self.stats.as_dict()
        values.pop("kind")
        DreamRound.objects.filter(id=self.round_id).update(finished_at=timezone.now(), **values)
        return self.stats


def dream_steps(
    *, subject: Subject, llm: DreamJudge, job: Job | None, chunk_ids: Sequence[uuid.UUID], final: bool
) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """The rounds of one request as steps: planning, then ``PAIRS_PER_STEP`` decisions per step,
    then the repair round after a final round that merged. Returns the result summary."""
    rounds: list[RoundStats] = []
    runner = DreamRoundRunner(
        subject=subject, kind="final" if final else "intermediate", llm=llm, job=job, chunk_ids=chunk_ids
    )
    while True:
        runner.prepare()
        yield _summary(rounds, runner.stats)
        while not runner.done:
            runner.step()
            yield _summary(rounds, runner.stats)
        rounds.append(runner.finish())
        if runner.kind != "final" or not runner.touched:
            break
        touched = sorted(runner.touched)
        runner = DreamRoundRunner(
            subject=subject, kind="repair", llm=llm, job=job, chunk_ids=chunk_ids, sources=touched
        )
    merges = [m for r in rounds for m in r.merges]
    dream_completed_emit(
        subject=subject,
        kind="semantic",
        job=job,
        merges=merges,
        skills_changed=0,
        content={
            "merges": [
                {"id": str(m.id), "from": m.source_name, "into": m.target_name, "type": m.anchor_type}
                for m in DreamMerge.objects.filter(id__in=merges).order_by("created_at")
            ]
        },
    )
    return _summary(rounds, None)


_COUNTED = ("pairs_considered", "verified", "merged", "rejected", "cached", "skipped_by_cap", "invalid", "stale")


def _summary(rounds: list[RoundStats], current: RoundStats | None) -> dict[str, Any]:
    every = [*rounds, *([current] if current is not None else [])]
    summary: dict[str, Any] = {name: sum(getattr(r, name) for r in every) for name in _COUNTED}
    summary["rounds"] = [r.as_dict() for r in every]
    summary["merged_pairs"] = [m for r in every for m in r.merged_pairs]
    return summary


def dream_run(
    *,
    subject: Subject,
    chunk_ids: Sequence[uuid.UUID],
    final: bool,
    llm: DreamJudge | None = None,
    job: Job | None = None,
) -> dict[str, Any]:
    """Every round of one request in the caller's transaction (evaluation, benchmarks, tests)."""
    steps = dream_steps(
        subject=subject, llm=llm or dream_judge_for(subject.organization_id), job=job, chunk_ids=chunk_ids, final=final
    )
    while True:
        try:
            next(steps)
        except StopIteration as finished:
            return finished.value  # type: ignore[no-any-return]


# --- the ingestion driver's schedule -------------------------------------------------------------


def dream_after_chunk(
    *, subject: Subject, frontier: list[str], chunk_id: uuid.UUID | None, finished: bool
) -> list[str]:
    """Called by the batch ingestion job after each chunk it wrote: every ``DREAM_EVERY_CHUNKS``
    chunks, and once after the last, queue a round over the chunks since the last one. Returns
    the chunks still waiting for a round."""
    if chunk_id is not None:
        frontier = [*frontier, str(chunk_id)]
    if len(frontier) < DREAM_EVERY_CHUNKS and not finished:
        return frontier
    with_rows = _chunks_with_rows(subject, [uuid.UUID(c) for c in frontier])
    chunk_ids = [uuid.UUID(c) for c in frontier if uuid.UUID(c) in with_rows]
    if chunk_ids or finished:
        dream_request(subject=subject, chunk_ids=chunk_ids, final=finished)
    return []


# --- console: list and undo ----------------------------------------------------------------------


def dream_merge_undo(*, subject: Subject, merge_id: uuid.UUID) -> DreamMerge:
    """Undo one merge exactly (the graph as it was right before it) and cache the pair as
    rejected, so no later round merges it again. Refused when later work touched the merged
    anchor or frames: undo later merges first."""
    merge = DreamMerge.objects.select_for_update().filter(subject=subject, id=merge_id).first()
    if merge is None:
        raise NotFound("No such dream merge for this subject.")
    if merge.undone_at is not None:
        raise Conflict("This merge was already undone.")
    anchor_merge_undo(
        organization_id=subject.organization_id,
        subject_id=subject.id,
        snapshot=merge.snapshot,
        after_digest=merge.after_digest,
    )
    merge.undone_at = timezone.now()
    merge.save(update_fields=["undone_at"])
    DreamRejection.objects.get_or_create(
        organization_id=subject.organization_id,
        subject=subject,
        cache_key=rejection_key(merge.source_name, merge.target_name, merge.anchor_type),
        defaults={"anchor_type": merge.anchor_type, "decided_by": "console:undo"},
    )
    return merge


# --- erasure -------------------------------------------------------------------------------------


def _dream_erase(target: ErasureTarget) -> Counts:
    for model in (DreamMerge, DreamRound, DreamRejection, DreamSource):
        counts = delete_batch(subject_rows(model, target))
        if counts:
            return counts
    return {}


def register_dream_eraser() -> None:
    eraser_register(
        Eraser(
            "dream",
            _dream_erase,
            ("dream_merge", "dream_round", "dream_rejection", "dream_source"),
            frozenset({STORE_CONVERSATIONS}),
            order=305,
        )
    )


_COUNT_ANCHORS = "MATCH (n:Anchor {subject_id: $subject_id}) RETURN count(n)"
_COUNT_FRAMES = "MATCH (n:Frame {subject_id: $subject_id}) RETURN count(n)"


def graph_size(subject: Subject) -> dict[str, int]:
    """Anchors and frames of a subject (benchmarks; a full count)."""
    counts = {}
    for name, query in (("anchors", _COUNT_ANCHORS), ("frames", _COUNT_FRAMES)):
        rows = cypher(
            organization_id=subject.organization_id, query=query, params={"subject_id": str(subject.id)}, returns=["n"]
        )
        counts[name] = int(rows[0][0]) if rows else 0
    return counts


def dream_completed_emit(
    *,
    subject: Subject,
    kind: str,
    job: Job | None,
    merges: list[Any],
    skills_changed: int,
    content: dict[str, Any] | None = None,
) -> None:
    """The ``dream.completed`` webhook event of a semantic or procedural dream request."""
    webhook_event_emit(
        organization_id=subject.organization_id,
        event_type=DREAM_COMPLETED,
        subject_id=subject.id,
        payload={
            "subject_id": str(subject.id),
            "kind": kind,
            "job_id": str(job.id) if job else None,
            "merges": merges,
            "skills_changed": skills_changed,
        },
        content=content,
    )
