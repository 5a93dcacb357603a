"""The ports of the provider layer: one method per write-path decision, embeddings, metering."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from apps.providers.procedural_schemas import (
    AbstractReply,
    CurateInput,
    CurateReply,
    DistillInput,
    DistillReply,
    ReplayRequest,
    ReplayResult,
)
from apps.providers.schemas import (
    CoreDraft,
    EpisodicDraft,
    ProceduralDraft,
    RouteDecision,
    SemanticDraft,
    WriterInput,
)

if TYPE_CHECKING:
    # The graph's frame types only annotate the GraphLLM port: the write path, which needs the
    # other ports, does not import the graph.
    from apps.graph.frames import ExtractedFrame, Extraction
    from apps.providers.dream_schemas import DreamQuestion, DreamVerdict
    from apps.providers.extraction_schemas import ExtractionInput, SameEntityDecision, SameEntityQuestion


class Purpose(StrEnum):
    """What a provider call was for; usage is metered per organization and per purpose."""

    ROUTE = "route"
    WRITE_CORE = "write.core"
    WRITE_EPISODIC = "write.episodic"
    WRITE_SEMANTIC = "write.semantic"
    WRITE_PROCEDURAL = "write.procedural"
    EMBED = "embed"
    EXTRACT = "extract"
    CANONICALIZE = "canonicalize"
    REPAIR = "repair"
    DREAM = "dream"
    ANSWER = "answer"
    DISTILL = "distill"
    CURATE = "curate"
    ABSTRACT = "abstract"
    REPLAY = "replay"


class UsageMeter(Protocol):
    def record(
        self,
        *,
        organization_id: uuid.UUID,
        api_key_id: uuid.UUID | None,
        purpose: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None: ...


@dataclass(frozen=True)
class MeteringContext:
    """Whose usage a call is; the provider adds the purpose of each call it makes.
    ``api_key_id`` is the key whose request makes the call, None for background work."""

    organization_id: uuid.UUID
    meter: UsageMeter
    api_key_id: uuid.UUID | None = None

    def record(self, *, purpose: Purpose, model: str, prompt_tokens: int, completion_tokens: int) -> None:
        self.meter.record(
            organization_id=self.organization_id,
            api_key_id=self.api_key_id,
            purpose=purpose.value,
            model=model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )


class MemoryLLM(Protocol):
    """The Meta Memory Manager's router and the writers of the four LLM-written memory types."""

    def route(self, memory_input: WriterInput, *, metering: MeteringContext) -> RouteDecision: ...

    def write_core(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[CoreDraft]: ...

    def write_episodic(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[EpisodicDraft]: ...

    def write_semantic(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[SemanticDraft]: ...

    def write_procedural(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[ProceduralDraft]: ...


class Embedder(Protocol):
    """Unit-length vectors of ``dimension`` floats, one per text, in input order."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str], *, metering: MeteringContext | None = None) -> list[list[float]]: ...


class GraphLLM(Protocol):
    """The learned steps of graph indexing (docs/architecture.md, "Graph plane"): extract, canonicalize, repair.

    Everything they return is a proposal that deterministic code checks: admission, identity
    and the two-anchor rule run after them, and a rename must name a retrieved candidate.
    """

    def extract_frames(self, record: ExtractionInput, *, metering: MeteringContext) -> Extraction:
        """The record's entities and n-ary frames; literals on the frames, never as entities."""
        ...

    def extract_frames_many(self, records: Sequence[ExtractionInput], *, metering: MeteringContext) -> list[Extraction]:
        """``extract_frames`` of each record, in order; a provider may batch the work."""
        ...

    def decide_same_entity(
        self, record: ExtractionInput, questions: Sequence[SameEntityQuestion], *, metering: MeteringContext
    ) -> list[SameEntityDecision]:
        """One decision per question, in order, for all of a record's entities at once.

        ``same_as`` is one of that question's own candidates or None (a new anchor); an answer
        naming anything else is None. Names differing in a number, date or code never match.
        """
        ...

    def repair_frames(
        self,
        record: ExtractionInput,
        *,
        frames: Sequence[ExtractedFrame],
        missing: Sequence[str],
        metering: MeteringContext,
    ) -> Extraction:
        """Frames to add for the audit's missing items, with any new entities.

        ``missing`` is what the coverage audit listed (``apps.graph.coverage``): at least one
        item, each trimmed, at most 12; the graph's repair step calls only then, so an
        implementation only repairs. Only additions: ``frames`` (the primary extraction) are
        context, never returned changed.
        """
        ...


class DreamJudge(Protocol):
    """The semantic AutoDream decision (docs/architecture.md, "Consolidation plane")."""

    def dream_decide(self, question: DreamQuestion, *, metering: MeteringContext) -> DreamVerdict:
        """Semantic AutoDream: are the pair's two anchors one entity, and which of the two
        existing names represents it. A representative that is not one of the two names is
        rejected by the caller."""
        ...


@dataclass(frozen=True)
class EvidenceRow:
    """One evidence row an answerer reads: its id (what an answer cites), type, times, text,
    speaker and currency.

    The text is stored memory: untrusted data, never instructions."""

    row_id: str
    memory_type: str
    text: str
    event_time: datetime | None  # when it happened, when known
    mention_time: datetime | None  # when it was said or written
    speaker: str = ""  # who said it (an episodic row's actor), or whom it is about (a semantic row's name)
    current: bool = True  # False: a later row replaced what this one states
    attribute: str = ""  # a semantic row's fact attribute: (speaker, attribute) is the fact's key
    told: str = ""  # the sentences the row was written from, when its text keeps only some of them
    passage: bool = False  # a passage of a document: no one's statement


@dataclass(frozen=True)
class EvidenceFact:
    """One graph fact an answerer reads: a predicate, its arguments ``(role, name)``, its
    literals and times, and the ids of the rows it was extracted from."""

    predicate: str
    arguments: tuple[tuple[str, str], ...]
    literals: tuple[tuple[str, str], ...]
    event_time: datetime | None
    status: str  # planned or done
    citations: tuple[str, ...]


@dataclass(frozen=True)
class AnswerRequest:
    """What the answering agent sees for one call (paper Algorithm 1 lines 16–20).

    ``rows`` are in retrieval order (best first), the union of every search so far.
    ``searches_left`` is how many more searches it may ask for through ``AnswerDraft.needs_more``.
    A rewrite carries the rejected ``draft`` and the rules the answer check fired on it.
    """

    question: str
    rows: tuple[EvidenceRow, ...]
    facts: tuple[EvidenceFact, ...]
    searches_left: int
    draft: str | None = None
    check_rules: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerDraft:
    """An answer, the evidence row ids it cites, and optionally the query of one more search."""

    answer: str
    cited_row_ids: tuple[str, ...]
    needs_more: str | None = None


# What an answerer says when the evidence does not answer the question (the answer check reads
# it as explicit uncertainty, which triggers its one extra search).
UNKNOWN_ANSWER = "I don't know based on the stored memories."


class AnswerLLM(Protocol):
    """The answering agent of the answer endpoint: drafts an answer from retrieved evidence,
    may ask for more searches, and rewrites a draft the answer check rejected."""

    def answer(self, request: AnswerRequest, *, metering: MeteringContext) -> AnswerDraft: ...


class ReplayUnavailable(Exception):
    """The provider cannot replay this SCEC (e.g. the local provider has no executor for it)."""


class ProceduralLLM(Protocol):
    """Procedural AutoDream (distill, curate), general-form abstraction and SEDM replay.

    Replies are proposals: the procedural app checks every quote before storing anything."""

    @property
    def version(self) -> str:
        """The model (and its version) whose replies these are, stored with what they produce."""
        ...

    def distill(self, session: DistillInput, *, metering: MeteringContext) -> DistillReply: ...

    def curate(self, request: CurateInput, *, metering: MeteringContext) -> CurateReply: ...

    def abstract(self, text: str, *, metering: MeteringContext) -> AbstractReply: ...

    def replay(self, request: ReplayRequest, *, metering: MeteringContext) -> ReplayResult:
        """One arm of an A/B replay; raises ``ReplayUnavailable`` when it cannot run it."""
        ...
