"""Pure data types shared by the retrieval core and its adapters. No framework imports.

The adapters (graph and evidence reads) hand the core :class:`AnchorCandidate`,
:class:`FactCandidate` and :class:`RowCandidate`; the planner produces a :class:`Plan`; scoring
and fusion return the ``Scored*`` / ``Fused*`` wrappers, which keep every term of a score so a
response or a test can say why something ranked where it did.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import date, datetime
from typing import Literal

from apps.language.lexicon import RoleGroup

Operator = Literal["single", "temporal", "intersection", "list-union", "count"]
AnswerType = Literal["date", "number", "person", "location", "activity", "object", "reason", "yes/no"]
TemporalOrder = Literal["before", "after", "first", "last", "order"]
RangeRelation = Literal["in", "before", "after"]
MemoryType = Literal["episodic", "semantic"]
FrameStatus = Literal["planned", "done"]
Lane = Literal["base", "relation", "flat"]  # flat: direct evidence retrieval after a graph read raised
FusedSource = Literal["cited", "base", "fill"]
# What a question asks of a fact that changed: its value now, or its history (planner).
TimeFocus = Literal["present", "history"]


@dataclass(frozen=True, slots=True)
class Budgets:
    """Row budgets of one query (docs/architecture.md, "Retrieval plane").

    ``base_rows`` is the base-row budget, rows reached through anchors; ``cited_rows`` is the
    cited-row budget, rows cited by relation facts, which also caps the graph facts the
    relation lane renders.
    """

    base_rows: int
    cited_rows: int

    @property
    def max_facts(self) -> int:
        return self.cited_rows

    @property
    def total_rows(self) -> int:
        """The default row limit of a request: cited plus base rows."""
        return self.base_rows + self.cited_rows


@dataclass(frozen=True, slots=True)
class RelationFamily:
    """A canonical relation the question asks about, with every surface form of the family.

    ``surface_forms`` are lemmas (multi-word forms joined by a space, e.g. ``"go to"``);
    ``cues`` are the question's words that matched, lowercased, in question order.
    """

    name: str
    surface_forms: tuple[str, ...]
    cues: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DateRange:
    """A date the question names, as a half-open period ``[start, end)``.

    ``relation`` says how a fact's time must relate to it: inside (``in``), or strictly
    ``before`` its start / ``after`` its end ("before June 2023", "since 2022").
    """

    phrase: str
    start: date
    end: date
    precision: str  # day, week, month or year (apps.language.dates.Precision values)
    relation: RangeRelation = "in"

    def contains(self, day: date) -> bool:
        return self.start <= day < self.end

    def satisfied_by(self, day: date) -> bool:
        if self.relation == "before":
            return day < self.start
        if self.relation == "after":
            return day >= self.end
        return self.contains(day)


@dataclass(frozen=True, slots=True)
class TemporalConstraints:
    """T_q: date ranges and temporal-order constraints of a question.

    ``months`` and ``years`` hold month numbers and years named without enough context to
    resolve to one period (no ``now`` given, or "in May" of an unknown year); ``relative``
    keeps relative phrases ("last week") that could not be resolved because no ``now`` was given.
    """

    ranges: tuple[DateRange, ...] = ()
    orders: tuple[TemporalOrder, ...] = ()
    months: tuple[int, ...] = ()
    years: tuple[int, ...] = ()
    relative: tuple[str, ...] = ()

    @property
    def names_a_date(self) -> bool:
        return bool(self.ranges or self.months or self.years)


@dataclass(frozen=True, slots=True)
class Constraints:
    """C_q: the non-relational constraints of a question.

    ``numbers`` are the digits it names; ``keywords`` its content words (surface forms, in
    order, without named entities or relation cues); ``content_stems`` the stems of every
    content word, relation cues and names included (what lexical coverage is measured on).
    """

    numbers: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    content_stems: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class RoleHint:
    """The roles the question implies for one named entity ("did Priya …" → agent)."""

    name: str
    key: str  # anchor_key(name)
    groups: frozenset[RoleGroup]


@dataclass(frozen=True, slots=True)
class Plan:
    """The plan of one question: operator, relations, constraints, answer types, temporal
    constraints and row budgets (docs/architecture.md, "Retrieval plane"), plus what the planner
    read off the question on the way: named entities, concrete objects, role hints."""

    question: str
    operator: Operator
    relations: tuple[RelationFamily, ...]
    constraints: Constraints
    answer_types: tuple[AnswerType, ...]
    temporal: TemporalConstraints
    budgets: Budgets
    entities: tuple[str, ...] = ()  # capitalized spans not at a sentence start, then quoted phrases
    objects: tuple[str, ...] = ()  # concrete objects the question names (relation lane object filter)
    role_hints: tuple[RoleHint, ...] = ()
    answer_roles: frozenset[RoleGroup] = frozenset()  # the role the answer plays in a fact
    counted: str | None = None  # what a count question counts ("kids", "times")
    future: bool = False  # the question asks about a planned or future event
    time_focus: TimeFocus = "history"  # present: the current value first, superseded rows after it

    @property
    def is_relation_query(self) -> bool:
        return bool(self.relations)

    @property
    def relation_forms(self) -> frozenset[str]:
        return frozenset(form for family in self.relations for form in family.surface_forms)


@dataclass(frozen=True, slots=True)
class AnchorCandidate:
    """An anchor an adapter recalled by name embedding or looked up by exact key.

    ``vector_similarity`` is the name-embedding similarity in [0, 1] (values outside are
    clamped); ``degree`` the number of incident frames (0 when the adapter does not know it);
    ``predicates`` the predicates of incident frames, which only exact lookups carry (paper A.3:
    the hub and predicate terms act on exactly named anchors alone).
    """

    anchor_key: str
    name: str
    type: str
    vector_similarity: float
    degree: int
    is_person: bool
    episodic_ids: list[str] = field(default_factory=list)
    semantic_ids: list[str] = field(default_factory=list)
    predicates: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class FactCandidate:
    """A frame of the relation lane. ``roles`` holds ``(role, anchor_key, anchor_name)``."""

    frame_id: str
    predicate: str
    roles: list[tuple[str, str, str]]
    literals: dict[str, str]
    event_time: datetime | None
    event_time_precision: str
    mention_time: datetime | None  # the source record's time: the state term's fallback
    status: FrameStatus
    citations: list[str]
    kind: MemoryType
    # Currency, from the cited rows: a fact is current while one of them is (reads.fact_currency).
    current: bool = True
    superseded_by: str | None = None  # when not current: the row that replaced its newest citation
    valid_to: datetime | None = None

    @property
    def valid_from(self) -> datetime | None:
        return self.event_time or self.mention_time

    @property
    def anchor_keys(self) -> frozenset[str]:
        return frozenset(key for _, key, _ in self.roles if key)


@dataclass(frozen=True, slots=True)
class RowCandidate:
    """An evidence row dereferenced from the vector database, tagged with the lane it came from.

    ``vector_rank`` is the row's 0-based rank by similarity to the question among the
    candidates of its type (``None`` when it has no comparable vector; fusion's
    ``rank_candidates`` stretches each type's order over the whole pool); ``similarity`` is that
    cosine similarity; ``lexical_score`` is the adapter's own lexical score, used by fusion only
    to break ties; ``lexical_rank`` is the row's 0-based BM25 rank among the candidates of its
    search (``None`` when not ranked or no query term matches); ``anchor_rank`` is its 0-based
    rank by association with the question's anchors (``None`` when it mentions none);
    ``context`` holds the ids of the episodic rows next to it in its chunk; ``match_text`` is
    what lexical matching reads (the text and the details); ``speaker`` is who the row speaks
    for: an episodic row's actor, a semantic row's name; ``superseded_by``, ``valid_from`` and
    ``valid_to`` are its currency (a row is current when nothing supersedes it); ``sources``
    are the messages it was written from.
    """

    row_id: str
    memory_type: MemoryType
    text: str
    event_time: datetime | None
    mention_time: datetime | None
    created_at: datetime | None
    chunk_id: str | None
    session_id: str | None
    lane: Lane
    vector_rank: int | None
    lexical_score: float
    lexical_rank: int | None = None
    match_text: str = ""
    similarity: float | None = None
    anchor_rank: int | None = None
    fact_rank: int | None = None  # 0-based rank among the rows the relation lane's ranked facts cite (ADR 0076)
    context: tuple[str, ...] = ()
    speaker: str = ""
    attribute: str | None = None  # a semantic row's fact attribute (its key with ``speaker``)
    passage: bool = False  # an episodic row that is a passage of a document (ADR 0025)
    valid_from: datetime | None = None  # event time, else mention time (apps.memory.currency)
    superseded_by: str | None = None  # the row that replaced this one
    valid_to: datetime | None = None  # that row's valid_from
    sources: tuple[str, ...] = ()  # the ids of the messages it was written from (its provenance)

    @property
    def current(self) -> bool:
        return self.superseded_by is None

    @property
    def told(self) -> str:
        """The sentences the row was written from (its details' first line: an episodic row's
        whole group of sentences, of which its text keeps the events), else its text (a
        passage's first line of details names the document it is of)."""
        if self.passage:
            return self.text
        details = self.match_text[len(self.text) + 1 :] if self.match_text.startswith(f"{self.text}\n") else ""
        return details.split("\n", 1)[0] or self.text


@dataclass(frozen=True, slots=True)
class AnchorScore:
    """The terms of s_A (paper eq. 10); ``hub`` is stored positive and subtracted."""

    vec: float
    exact: float
    lex: float
    pred: float
    spec: float
    hub: float

    @property
    def total(self) -> float:
        return self.vec + self.exact + self.lex + self.pred + self.spec - self.hub


@dataclass(frozen=True, slots=True)
class ScoredAnchor:
    anchor: AnchorCandidate
    score: AnchorScore


@dataclass(frozen=True, slots=True)
class FactScore:
    """The nine terms of s_F (paper eq. 11)."""

    relation: float
    entity: float
    constraint: float
    answer_type: float
    time: float
    intersection: float
    specificity: float
    role: float
    state: float

    @property
    def total(self) -> float:
        return sum(float(getattr(self, item.name)) for item in fields(self))


@dataclass(frozen=True, slots=True)
class ScoredFact:
    fact: FactCandidate
    score: FactScore
    shared_object: bool = False  # in the hard shared-object group of an intersection question


@dataclass(frozen=True, slots=True)
class FusedRow:
    row: RowCandidate
    source: FusedSource  # the fusion phase that took it
    score: float  # the lane rerank score


@dataclass(frozen=True, slots=True)
class FusionResult:
    rows: tuple[FusedRow, ...]
    collapsed: tuple[tuple[str, str], ...]  # (dropped row id, kept row id): same-date paraphrases, restatements
    rows_inspected: int

    @property
    def row_ids(self) -> tuple[str, ...]:
        return tuple(fused.row.row_id for fused in self.rows)
