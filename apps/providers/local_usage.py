"""What local inference meters (ADR 0049): the tokens a local model processed, as prompt
tokens of a call, so that ``GET /v1/usage`` reports local work beside a provider's.

- The local embedder counts with its own tokenizer (:mod:`apps.providers.local_embedder`).
- The local language pipeline (rules over spaCy: the memory writer, the graph extractor, the
  answerer) counts the text each call reads with :func:`apps.language.words.count_tokens`
  (words and punctuation, the count a search's ``token_budget`` uses): a call that reads the
  same messages again (routing, then each writer) counts them again, as a provider call that
  is sent them again would. Nothing is generated token by token, so completion tokens are 0.
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.language.pipeline import SPACY_MODEL
from apps.language.words import count_tokens
from apps.providers.interfaces import MeteringContext, Purpose

# The local language pipeline's model names, as its usage rows record them.
MEMORY_WRITER = f"local-rules+{SPACY_MODEL}"
GRAPH_EXTRACTOR = f"local-frames+{SPACY_MODEL}"
ANSWERER = "local-answer-rules"
DREAM_JUDGE = "local-rule"
LANGUAGE_MODELS = frozenset({MEMORY_WRITER, GRAPH_EXTRACTOR, ANSWERER, DREAM_JUDGE})


def record_local(metering: MeteringContext | None, *, purpose: Purpose, model: str, texts: Iterable[str]) -> None:
    """Record one local call that read ``texts``."""
    if metering is None:
        return
    metering.record(
        purpose=purpose, model=model, prompt_tokens=sum(count_tokens(text) for text in texts), completion_tokens=0
    )
