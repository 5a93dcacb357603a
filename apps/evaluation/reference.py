"""Reference retrievers over raw conversation turns, outside the product: the yardsticks the
LoCoMo evaluation compares flat and graph mode with, run in the same harness.

Each turn is one document, written ``speaker: text`` (with an image caption kept, as the
dataset loader keeps it). ``turns-bm25`` is Okapi BM25 (:mod:`apps.retrieval.lexical`),
``turns-dense`` the embedder's cosine similarity, ``turns-rrf`` the first ``DEPTH`` of each
fused by reciprocal rank with the usual constant (60).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from apps.providers.interfaces import Embedder
from apps.retrieval import lexical

REFERENCE_MODES = ("turns-bm25", "turns-dense", "turns-rrf")
DEPTH = 50  # turns of each order the fusion reads
FUSION_K = 60  # the usual constant of reciprocal rank fusion


class TurnRetriever:
    """The three reference orders of one conversation's turns for any question."""

    def __init__(self, turns: Sequence[tuple[str, str]], embedder: Embedder) -> None:
        self.ids = [turn_id for turn_id, _ in turns]
        self.documents = [lexical.terms(text) for _, text in turns]
        self.embedder = embedder
        self.matrix = _unit_rows(np.asarray(embedder.embed([text for _, text in turns]), dtype=float))

    def orders(self, question: str, *, limit: int) -> dict[str, list[str]]:
        scores = lexical.bm25_scores(lexical.terms(question), self.documents)
        by_words = lexical.ranked(self.ids, scores)
        vector = _unit_rows(np.asarray([self.embedder.embed([question])[0]], dtype=float))[0]
        similarity = self.matrix @ vector
        by_meaning = [self.ids[i] for i in sorted(range(len(self.ids)), key=lambda i: (-similarity[i], self.ids[i]))]
        fused = [turn_id for turn_id, _ in lexical.rrf([by_words[:DEPTH], by_meaning[:DEPTH]], k=FUSION_K)]
        return {
            "turns-bm25": by_words[:limit],
            "turns-dense": by_meaning[:limit],
            "turns-rrf": fused[:limit],
        }


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)
