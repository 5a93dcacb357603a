"""Subjects with thousands of near-duplicate anchors, for AutoDream's cost benchmark and its
cap tests: pairs of semantic-backed object anchors whose two names have nearly the same name
vector (cosine ≈ 0.99), written through the graph store like indexing writes them."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from apps.graph import store
from apps.graph.keys import anchor_key
from apps.providers.registry import embedder
from apps.retrieval.reads import HNSW_DIMENSION
from apps.tenancy.models import Subject

NOISE = 0.08  # per-dimension noise around a pair's shared vector: cosine ≈ 0.99 in 384 dimensions
WRITE_BATCH = 500


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def write_near_duplicate_anchors(
    subject: Subject, *, pairs: Sequence[tuple[str, str]], row_ids: Sequence[str], seed: int
) -> list[dict[str, Any]]:
    """Two anchors per pair of names, both mentioned by that pair's semantic row, with name
    vectors drawn around one random vector per pair; returns the anchors in pair order."""
    rng = random.Random(seed)
    anchors: list[dict[str, Any]] = []
    vectors: list[list[float]] = []
    for names, row_id in zip(pairs, row_ids, strict=True):
        base = [rng.gauss(0, 1) for _ in range(HNSW_DIMENSION)]
        for name in names:
            anchors.append(
                {
                    "subject_id": str(subject.id),
                    "key": anchor_key(name),
                    "name": name,
                    "type": "object",
                    "aliases": [],
                    "mention_count": 1,
                    "admission_score": 0.5,
                    "episodic_ids": [],
                    "semantic_ids": [row_id],
                }
            )
            vectors.append(_unit([x + rng.gauss(0, NOISE) for x in base]))
    for start in range(0, len(anchors), WRITE_BATCH):
        store.anchors_write(
            organization_id=subject.organization_id, created=anchors[start : start + WRITE_BATCH], updated=[]
        )
    store.anchor_vectors_write(subject=subject, anchors=anchors, vectors=vectors, model=embedder().model_name)
    return anchors
