"""Repair of the local graph extractor: frames added for the items a coverage audit found missing.

Only additions, only in the sentences that hold a missing item: possessives without a name,
a quoted phrase as the ``title`` of its clause, the speaker as ``source`` of a clause left
with one anchor, and a shared image as ``share(agent, depicts)`` over its caption's nouns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from apps.graph.admission import rejection_reason
from apps.graph.extraction.clauses import Analysis, Candidate, Mention, clause_owner, distinct_anchors, literal_value
from apps.graph.extraction.parsing import QUOTED
from apps.graph.frames import ExtractedFrame
from apps.graph.keys import anchor_key

if TYPE_CHECKING:
    from spacy.tokens import Span

# What a caption calls the picture itself is not something it depicts.
_MEDIA_KEYS = frozenset({"image", "photo", "photograph", "picture", "pic", "screenshot", "video", "drawing", "selfie"})
_MAX_DEPICTED = 6


# --- repair ----------------------------------------------------------------------------------


def _holds(text: str, items: Sequence[str]) -> list[str]:
    folded = text.casefold()
    return [item for item in items if item.casefold() in folded]


def _overlaps(literals: Sequence[Span], items: Sequence[str]) -> bool:
    """Whether a literal is one of the missing items ("$45" is missing, spaCy's entity is "45")."""
    values = [literal_value(entity)[1].casefold() for entity in literals]
    return any(item.casefold() in value or value in item.casefold() for value in values for item in items)


def repair_candidates(
    analysis: Analysis, items: Sequence[str]
) -> Iterator[tuple[Candidate, list[tuple[str, Mention]]]]:
    by_sentence: dict[int, list[Candidate]] = {}
    for candidate in analysis.candidates:
        by_sentence.setdefault(candidate.head.sent.start, []).append(candidate)
    for sentence in analysis.doc.sents:
        wanted = _holds(sentence.text, items)
        if not wanted:
            continue
        yield from ((candidate, []) for candidate in analysis.bare_possessives(sentence))
        for candidate in by_sentence.get(sentence.start, []):
            extra = _quote_arms(analysis, candidate, sentence, wanted)
            if distinct_anchors(candidate, extra) < 2 and _overlaps(candidate.literals, wanted):
                speaker = analysis.speaker_of(candidate.head)
                source = analysis.person(speaker) if speaker else None
                if source is not None:
                    extra.append(("source", source))
            if extra:
                yield candidate, extra


def _quote_arms(
    analysis: Analysis, candidate: Candidate, sentence: Span, wanted: Sequence[str]
) -> list[tuple[str, Mention]]:
    arms: list[tuple[str, Mention]] = []
    heads = {c.head.i: c for c in analysis.candidates if c.head.sent.start == sentence.start and c.clause}
    quoted = {
        match.start(group): match[group]
        for match in QUOTED.finditer(sentence.text)
        for group in ("straight", "curly")
        if match[group] is not None
    }
    for item in wanted:
        start = next((at for at, quote in quoted.items() if quote.strip().casefold() == item.casefold()), -1)
        span = sentence.char_span(start, start + len(item), alignment_mode="expand") if start >= 0 else None
        if span is None or clause_owner(span.root, heads) is not candidate:
            continue
        key = anchor_key(item)
        if key and rejection_reason(key) is None and key not in candidate.keys():
            arms.append(("title", Mention(name=item, type="content", key=key)))
    return arms


def depictions(analysis: Analysis, items: Sequence[str]) -> Iterator[tuple[ExtractedFrame, list[Mention]]]:
    """share(agent: who shared it, depicts: what its caption names) for each caption with a missing item."""
    for caption in analysis.captions:
        if not caption.text or not _holds(caption.text, items):
            continue
        agent = analysis.person(caption.speaker) if caption.speaker else None
        excluded = {*_MEDIA_KEYS, agent.key if agent else ""}
        inside = [mention for at, mention in analysis.mentioned_at if caption.start <= at < caption.end]
        depicted = list({m.key: m for m in inside if m.key not in excluded}.values())[:_MAX_DEPICTED]
        arms = ([("agent", agent.name)] if agent else []) + [("depicts", m.name) for m in depicted]
        frame = ExtractedFrame(
            predicate="share",
            roles=arms,
            literals={"media": caption.media},
            event_time=analysis.record.event_time,
            status="done",
        )
        yield frame, ([agent] if agent else []) + depicted
