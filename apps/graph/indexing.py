"""Indexing committed episodic and semantic rows into the organization's hypergraph (docs/architecture.md, "Graph plane").

For a batch of rows of one subject: extract entities and n-ary frames, canonicalize entity
names against the subject's anchors (ANN proposes, one decision per record disposes, a rename
only to a retrieved candidate), admit anchors through the gate, keep frames with ≥ 2 distinct
anchors, audit coverage and run one bounded repair, then write every anchor, frame and arm of
the batch in a handful of round trips under per-key locks. The evidence rows are never
changed, except their index status.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from apps.graph import adjacency, store
from apps.graph.admission import Admission, admit_anchors, speaks_as_subject, subject_speaker
from apps.graph.coverage import audit_coverage
from apps.graph.frames import ExtractedEntity, ExtractedFrame, Extraction, RecordKind
from apps.graph.identity import frame_identity
from apps.graph.keys import anchor_key
from apps.language.dates import parse_event_time
from apps.memory.models import EpisodicEvent, IndexedRecord, SemanticItem
from apps.memory.statements import without_about
from apps.providers.extraction_schemas import AnchorCandidate, ExtractionInput, SameEntityQuestion
from apps.providers.interfaces import Embedder, GraphLLM, MeteringContext
from apps.tenancy.models import Subject

logger = logging.getLogger(__name__)

# Canonicalization: up to 4 existing anchors with cosine ≥ 0.72 (paper A.2).
CANONICALIZE_NEIGHBOURS = 4
CANONICALIZE_MIN_COSINE = 0.72
# Anchor types that name a specific thing; a generic noun chunk ranks below them.
NAMED_TYPES = frozenset({"person", "organization", "location", "event", "content"})


@dataclass
class RecordGraph:
    """What one row contributes: its admitted anchors and its frames (by identity)."""

    row: IndexedRecord
    kind: RecordKind
    admission: Admission
    frames: dict[str, ExtractedFrame] = field(default_factory=dict)


@dataclass
class IndexStats:
    rows: int = 0
    anchors_created: int = 0
    anchors_updated: int = 0
    frames_created: int = 0
    frames_updated: int = 0
    repairs: int = 0

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


def _kind(row: IndexedRecord) -> RecordKind:
    return "episodic" if isinstance(row, EpisodicEvent) else "semantic"


def _event_time_iso(row: IndexedRecord) -> str | None:
    if not isinstance(row, EpisodicEvent) or row.event_time is None:
        return None
    day = row.event_time.date()
    precision = row.event_time_precision
    if precision == "year":
        return f"{day.year:04d}"
    if precision == "month":
        return f"{day.year:04d}-{day.month:02d}"
    if precision == "week":
        year, week, _ = day.isocalendar()
        return f"{year:04d}-W{week:02d}"
    if precision == "time":
        return row.event_time.isoformat()
    return day.isoformat()


_VAULT_PLACEHOLDER = re.compile(r"\[vault:[a-z_]+#\d+\]")


def _graph_text(text: str) -> str:
    """Vault placeholders stand for values the graph must never hold: they are not entities."""
    return _VAULT_PLACEHOLDER.sub("", text)


def _episode_text(summary: str, details: str, actor: str) -> str:
    """An episode's text for extraction: its summary and details, without the summary when the
    details already say it (a writer's summary is often the details' first line under the
    actor's label): each sentence is parsed once, and read once by the coverage audit."""
    told = summary.removeprefix(f"{actor}: ").strip() if actor else summary.strip()
    if told and any(told in line for line in details.splitlines()):
        return details
    return f"{summary}\n{details}"


def subject_speaker_of(subject: Subject) -> str | None:
    """Whom a user subject's own unnamed turns speak as (ADR 0095); an agent subject's unnamed
    user turns are its users', not its own."""
    if subject.kind != Subject.Kind.USER:
        return None
    return subject_speaker(subject.display_name, subject.external_id)


def extraction_input(row: IndexedRecord, *, speaker: str | None = None) -> ExtractionInput:
    """``speaker``: the name the subject's own unnamed turns speak under (``subject_speaker``);
    "I" in a row written as "user" is then that person, an anchor like any other (ADR 0095)."""
    if isinstance(row, EpisodicEvent):
        return ExtractionInput(
            kind="episodic",
            text=_graph_text(_episode_text(row.summary, row.details, row.actor)),
            mention_time=row.mention_time,
            event_time=_event_time_iso(row),
            actor=speaker if speaker and speaks_as_subject(row.actor) else row.actor,
            status=row.status,  # type: ignore[arg-type]
        )
    assert isinstance(row, SemanticItem)
    return ExtractionInput(
        kind="semantic",
        text=_graph_text(f"{row.name}: {without_about(row.summary)}\n{row.details}"),
        actor=speaker if speaker and speaks_as_subject(row.source) else row.source,
    )


def _nearest_anchors(*, subject: Subject, vectors: list[list[float]], model: str) -> list[list[tuple[str, str, float]]]:
    """For each vector, up to 4 (key, name, cosine) of the subject's anchors with cosine ≥ 0.72,
    in one query (an exact scan per vector over the subject's anchors)."""
    if not vectors:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH q AS MATERIALIZED (
                SELECT idx, vec::vector AS vec FROM unnest(%s::text[]) WITH ORDINALITY AS t(vec, idx)
            )
            SELECT q.idx, v.anchor_key, v.name, v.cosine
            FROM q CROSS JOIN LATERAL (
                SELECT anchor_key, name, 1 - (embedding <=> q.vec) AS cosine FROM graph_anchor_vector
                WHERE organization_id = %s AND subject_id = %s AND embedding_model = %s
                ORDER BY embedding <=> q.vec LIMIT %s
            ) v
            WHERE v.cosine >= %s
            ORDER BY q.idx, v.cosine DESC, v.anchor_key
            """,
            [
                [str(vector) for vector in vectors],
                subject.organization_id,
                subject.id,
                model,
                CANONICALIZE_NEIGHBOURS,
                CANONICALIZE_MIN_COSINE,
            ],
        )
        found: list[list[tuple[str, str, float]]] = [[] for _ in vectors]
        for index, key, name, cosine in cursor.fetchall():
            found[int(index) - 1].append((key, name, float(cosine)))
    return found


def _renamed(frame: ExtractedFrame, renames: dict[str, str]) -> ExtractedFrame:
    return dataclasses.replace(frame, roles=[(role, renames.get(name, name)) for role, name in frame.roles])


class SubjectIndexer:
    """Indexes rows of one subject; one instance per batch (it caches lookups of the batch)."""

    def __init__(self, *, subject: Subject, graph_llm: GraphLLM, embedder: Embedder, metering: MeteringContext) -> None:
        self.subject = subject
        self.graph_llm = graph_llm
        self.embedder = embedder
        self.metering = metering
        self.stats = IndexStats()
        self._name_vectors: dict[str, list[float]] = {}

    def _embed_names(self, names: Sequence[str]) -> list[list[float]]:
        """Name embeddings, each name embedded once per batch (repair and the anchor side table
        reuse what canonicalization computed)."""
        missing = [n for n in dict.fromkeys(names) if n not in self._name_vectors]
        if missing:
            self._name_vectors.update(zip(missing, self.embedder.embed(missing, metering=self.metering), strict=True))
        return [self._name_vectors[n] for n in names]

    # -- per record: extraction, canonicalization, admission, frames, repair ---------------------

    def _questions(
        self, entities_by_record: list[list[ExtractedEntity]], existing_keys: set[str]
    ) -> list[list[SameEntityQuestion]]:
        """Per record, a same-entity question for each entity with no anchor of its exact key but
        with close anchors by name embedding (one embedding call and one ANN query per batch,
        each distinct name asked once: the records of a batch share many names)."""
        unknown = [
            [e for e in dict.fromkeys(entities) if (key := anchor_key(e.name)) and key not in existing_keys]
            for entities in entities_by_record
        ]
        names = list(dict.fromkeys(entity.name for entities in unknown for entity in entities))
        if not names:
            return [[] for _ in entities_by_record]
        nearest = dict(
            zip(
                names,
                _nearest_anchors(
                    subject=self.subject, vectors=self._embed_names(names), model=self.embedder.model_name
                ),
                strict=True,
            )
        )
        questions: list[list[SameEntityQuestion]] = []
        for entities in unknown:
            record_questions = []
            for entity in entities:
                candidates = [AnchorCandidate(name=name) for _, name, _ in nearest[entity.name]]
                if candidates:
                    record_questions.append(
                        SameEntityQuestion(name=entity.name, type=entity.type, candidates=candidates)
                    )
            questions.append(record_questions)
        return questions

    def _renames(self, record: ExtractionInput, questions: list[SameEntityQuestion]) -> dict[str, str]:
        """entity name → the retrieved candidate it is the same as; any other answer is ignored."""
        if not questions:
            return {}
        decisions = self.graph_llm.decide_same_entity(record, questions, metering=self.metering)
        allowed = {q.name: {c.name for c in q.candidates} for q in questions}
        return {
            d.name: d.same_as
            for d in decisions
            if d.same_as is not None and d.same_as in allowed.get(d.name, set()) and d.same_as != d.name
        }

    def _record_graph(self, row: IndexedRecord, extraction: Extraction, renames: dict[str, str]) -> RecordGraph:
        kind = _kind(row)
        entities = [ExtractedEntity(name=renames.get(e.name, e.name), type=e.type) for e in extraction.entities]
        frames = [_renamed(frame, renames) for frame in extraction.frames]
        admission = admit_anchors(entities, kind=kind, frames=frames)
        graph = RecordGraph(row=row, kind=kind, admission=admission)
        fallback_time = _event_time_iso(row)
        for frame in frames:
            arms = [(role, anchor.key) for role, name in frame.roles if (anchor := admission.anchor_for(name))]
            if len({key for _, key in arms}) < 2:
                continue
            keyed = dataclasses.replace(frame, event_time=frame.event_time or fallback_time)
            graph.frames[frame_identity(keyed, kind=kind, subject_id=self.subject.id, memory_id=row.id)] = keyed
        return graph

    def _repaired(
        self,
        row: IndexedRecord,
        record: ExtractionInput,
        extraction: Extraction,
        renames: dict[str, str],
        graph: RecordGraph,
        existing_keys: set[str],
    ) -> RecordGraph:
        """One bounded repair call when the audit finds uncovered details; it may only add. The
        audit's items are what the call is asked about: trimmed, distinct, at most 12 (the
        implementations take them as they are)."""
        audit = audit_coverage(record.text, list(graph.frames.values()))
        if not audit.needs_repair:
            return graph
        repair = self.graph_llm.repair_frames(
            record, frames=list(graph.frames.values()), missing=audit.missing, metering=self.metering
        )
        more = self._renames(record, self._questions([repair.entities], existing_keys)[0])
        combined = Extraction(
            entities=[*extraction.entities, *repair.entities], frames=[*extraction.frames, *repair.frames]
        )
        repaired = self._record_graph(row, combined, {**more, **renames})
        repaired.frames = {**repaired.frames, **graph.frames}  # every primary frame survives unchanged
        self.stats.repairs += 1
        return repaired

    def plan(self, rows: Sequence[IndexedRecord]) -> list[RecordGraph]:
        speaker = subject_speaker_of(self.subject)
        records = [extraction_input(row, speaker=speaker) for row in rows]
        extractions = self.graph_llm.extract_frames_many(records, metering=self.metering)
        entity_keys = sorted({k for x in extractions for e in x.entities if (k := anchor_key(e.name))})
        existing_keys = set(
            store.anchors_by_key(
                organization_id=self.subject.organization_id, subject_id=self.subject.id, keys=entity_keys
            )
        )
        questions = self._questions([x.entities for x in extractions], existing_keys)
        graphs = []
        for row, record, extraction, record_questions in zip(rows, records, extractions, questions, strict=True):
            renames = self._renames(record, record_questions)
            graph = self._record_graph(row, extraction, renames)
            graphs.append(self._repaired(row, record, extraction, renames, graph, existing_keys))
        return graphs

    # -- the batch: one set of graph writes -------------------------------------------------------

    def index(self, rows: Sequence[IndexedRecord]) -> IndexStats:
        organization_id, subject_id = self.subject.organization_id, self.subject.id
        graphs = self.plan(rows)
        anchor_keys = sorted({a.key for g in graphs for a in g.admission.admitted})
        frame_ids = sorted({frame_id for g in graphs for frame_id in g.frames})
        store.lock_keys(
            organization_id=organization_id,
            subject_id=subject_id,
            keys=[f"anchor:{k}" for k in anchor_keys] + [f"frame:{f}" for f in frame_ids],
        )
        anchors = store.anchors_by_key(organization_id=organization_id, subject_id=subject_id, keys=anchor_keys)
        frames = store.frames_by_id(organization_id=organization_id, subject_id=subject_id, frame_ids=frame_ids)
        created_anchors: dict[str, dict[str, Any]] = {}
        touched_anchors: dict[str, dict[str, Any]] = {}
        created_frames: dict[str, dict[str, Any]] = {}
        touched_frames: dict[str, dict[str, Any]] = {}
        known = adjacency.known_mentions(
            organization_id=organization_id, subject_id=subject_id, row_ids=[str(row.id) for row in rows]
        )
        for graph in graphs:
            self._merge_anchors(graph, anchors, created_anchors, touched_anchors, known)
            self._merge_frames(graph, frames, created_frames, touched_frames)
        store.anchors_write(
            organization_id=organization_id,
            created=list(created_anchors.values()),
            updated=list(touched_anchors.values()),
        )
        store.frames_write(
            organization_id=organization_id,
            subject_id=subject_id,
            created=list(created_frames.values()),
            updated=list(touched_frames.values()),
        )
        self._store_anchor_vectors(list(created_anchors.values()))
        self.stats.rows += len(rows)
        self.stats.anchors_created += len(created_anchors)
        self.stats.anchors_updated += len(touched_anchors)
        self.stats.frames_created += len(created_frames)
        self.stats.frames_updated += len(touched_frames)
        return self.stats

    def _merge_anchors(
        self,
        graph: RecordGraph,
        existing: dict[str, dict[str, Any]],
        created: dict[str, dict[str, Any]],
        touched: dict[str, dict[str, Any]],
        known: set[tuple[str, str]],
    ) -> None:
        """An anchor's vertex keeps its newest row ids (the store bounds the list); every
        mention goes to the adjacency index, which also tells a re-run what was counted."""
        ids_field = "episodic_ids" if graph.kind == "episodic" else "semantic_ids"
        for anchor in graph.admission.admitted:
            score = 1.0 if anchor.type in NAMED_TYPES else 0.5
            if anchor.key in existing and anchor.key not in created:
                props = touched.setdefault(anchor.key, dict(existing[anchor.key]))
            else:
                props = created.setdefault(
                    anchor.key,
                    {
                        "subject_id": str(self.subject.id),
                        "key": anchor.key,
                        "name": anchor.name,
                        "type": anchor.type,
                        "aliases": [],
                        "mention_count": 0,
                        "admission_score": score,
                        "episodic_ids": [],
                        "semantic_ids": [],
                    },
                )
            row_id = str(graph.row.id)
            if row_id in props[ids_field] or (anchor.key, row_id) in known:
                continue  # this row was already counted (a re-run): nothing changes
            props[ids_field] = [*props[ids_field], row_id]
            props["mention_count"] = int(props["mention_count"]) + 1
            props["admission_score"] = max(float(props["admission_score"]), score)
            names = [anchor.name, *anchor.aliases]
            props["aliases"] = list(dict.fromkeys([*props["aliases"], *(n for n in names if n != props["name"])]))

    def _merge_frames(
        self,
        graph: RecordGraph,
        existing: dict[str, dict[str, Any]],
        created: dict[str, dict[str, Any]],
        touched: dict[str, dict[str, Any]],
    ) -> None:
        mention = graph.row.mention_time if isinstance(graph.row, EpisodicEvent) else graph.row.created_at
        for frame_id, frame in graph.frames.items():
            if frame_id in existing and frame_id not in created:
                props = touched.setdefault(frame_id, dict(existing[frame_id]))
            else:
                props = created.setdefault(
                    frame_id,
                    {
                        "frame_id": frame_id,
                        "subject_id": str(self.subject.id),
                        "kind": graph.kind,
                        "predicate": frame.predicate,
                        "arms": [
                            [role, anchor.key]
                            for role, name in frame.roles
                            if (anchor := graph.admission.anchor_for(name))
                        ],
                        "literals": {},
                        "event_time": frame.event_time,
                        "event_time_precision": _precision(frame.event_time),
                        "mention_time": mention.isoformat(),
                        "status": frame.status,
                        "citations": [],
                    },
                )
            row_id = str(graph.row.id)
            if row_id not in props["citations"]:
                props["citations"] = [*props["citations"], row_id]
            props["literals"] = {**frame.literals, **props["literals"]}
            if frame.status == "done":
                props["status"] = "done"  # a mention that it happened outranks a plan
            props["mention_time"] = max(str(props["mention_time"] or ""), mention.isoformat())

    def _store_anchor_vectors(self, anchors: list[dict[str, Any]]) -> None:
        if not anchors:
            return
        store.anchor_vectors_write(
            subject=self.subject,
            anchors=anchors,
            vectors=self._embed_names([a["name"] for a in anchors]),
            model=self.embedder.model_name,
        )


def _precision(event_time: str | None) -> str:
    return parse_event_time(event_time).precision.value if event_time else ""
