"""The ``local`` graph extractor: the provider class over parsing, clauses and repair.

Deterministic and offline (see :mod:`apps.graph.extraction`). Each call meters the tokens of
the text it parses (ADR 0049); a batch is one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from apps.graph.extraction.clauses import (
    Mention,
    analysis_of,
    candidate_frame,
    distinct_anchors,
    entities_of,
    primary_frames,
)
from apps.graph.extraction.parsing import prepared
from apps.graph.extraction.repair import depictions, repair_candidates
from apps.graph.frames import ExtractedFrame, Extraction
from apps.graph.identity import frame_signature
from apps.graph.keys import anchor_key, may_denote_same
from apps.language.pipeline import PARSES, PIPE_BATCH
from apps.providers.extraction_schemas import (
    ExtractionInput,
    SameEntityDecision,
    SameEntityQuestion,
    consistent_extraction,
)
from apps.providers.interfaces import MeteringContext, Purpose
from apps.providers.local_usage import GRAPH_EXTRACTOR, record_local

if TYPE_CHECKING:
    pass

# --- the provider ----------------------------------------------------------------------------


class LocalGraphLLM:
    model = GRAPH_EXTRACTOR

    def parse_ahead(self, records: Sequence[ExtractionInput]) -> None:
        """Parse the records' texts in one pipeline call, ahead of extracting them (a worker's
        batch of several subjects extracts subject by subject: each subject's few texts in a
        pipeline call of their own parse about a quarter slower per text)."""
        PARSES.warm(prepared(record)[0] for record in records)

    def extract_frames_many(self, records: Sequence[ExtractionInput], *, metering: MeteringContext) -> list[Extraction]:
        """``extract_frames`` of each record, in order, parsing the batch together (faster)."""
        extractions: list[Extraction] = []
        record_local(metering, purpose=Purpose.EXTRACT, model=self.model, texts=[r.text for r in records])
        for start in range(0, len(records), PIPE_BATCH):
            batch = records[start : start + PIPE_BATCH]
            PARSES.warm([prepared(record)[0] for record in batch])
            extractions += [self._extract(record) for record in batch]
        return extractions

    def extract_frames(self, record: ExtractionInput, *, metering: MeteringContext) -> Extraction:
        record_local(metering, purpose=Purpose.EXTRACT, model=self.model, texts=[record.text])
        return self._extract(record)

    def _extract(self, record: ExtractionInput) -> Extraction:
        analysis = analysis_of(record)
        primary = primary_frames(analysis)
        arms = [mention for candidate, _ in primary for _, mention in candidate.arms]
        return consistent_extraction(entities_of([*analysis.mentions, *arms]), [frame for _, frame in primary])

    def decide_same_entity(
        self, record: ExtractionInput, questions: Sequence[SameEntityQuestion], *, metering: MeteringContext
    ) -> list[SameEntityDecision]:
        record_local(
            metering,
            purpose=Purpose.CANONICALIZE,
            model=self.model,
            texts=[name for q in questions for name in (q.name, *(c.name for c in q.candidates))],
        )
        decisions: list[SameEntityDecision] = []
        for question in questions:
            key = anchor_key(question.name)
            same_as = next(
                (
                    candidate.name
                    for candidate in question.candidates
                    if key
                    and may_denote_same(question.name, candidate.name)
                    and (key == anchor_key(candidate.name) or key in {anchor_key(alias) for alias in candidate.aliases})
                ),
                None,
            )
            decisions.append(SameEntityDecision(name=question.name, same_as=same_as))
        return decisions

    def repair_frames(
        self,
        record: ExtractionInput,
        *,
        frames: Sequence[ExtractedFrame],
        missing: Sequence[str],
        metering: MeteringContext,
    ) -> Extraction:
        record_local(metering, purpose=Purpose.REPAIR, model=self.model, texts=[record.text])
        analysis = analysis_of(record)
        known = {frame_signature(frame) for frame in frames} | {
            frame_signature(frame) for _, frame in primary_frames(analysis)
        }
        added: list[ExtractedFrame] = []
        mentions: list[Mention] = []
        for candidate, extra in repair_candidates(analysis, missing):
            if distinct_anchors(candidate, extra) < 2:
                continue
            frame = candidate_frame(analysis, candidate, extra)
            if frame_signature(frame) not in known:
                known.add(frame_signature(frame))
                added.append(frame)
                mentions += [mention for _, mention in [*candidate.arms, *extra]]
        for frame, depicted in depictions(analysis, missing):
            if frame_signature(frame) not in known and len({m.key for m in depicted}) >= 2:
                known.add(frame_signature(frame))
                added.append(frame)
                mentions += depicted
        return consistent_extraction(entities_of(list({m.key: m for m in mentions}.values())), added)
