"""Each local embedding model's anchor vectors have a partial HNSW index the anchor recall's
index query can use (migrations 0003 and 0007, ADR 0091)."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection, transaction

from apps.providers.local_embedder import MODEL_NAMES
from apps.retrieval import reads


@pytest.mark.parametrize("model", sorted(MODEL_NAMES.values()))
def test_the_recall_query_of_each_local_model_can_use_its_hnsw_index(model: str) -> None:
    assert model in reads.HNSW_MODELS
    vector = "[" + ",".join(["0.05"] * reads.HNSW_DIMENSION) + "]"
    with transaction.atomic(), connection.cursor() as cursor:
        # Only an ordered index path is left: no sequential scan and no sort of another scan.
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
        cursor.execute(
            "EXPLAIN " + reads._recall_sql(exact=False),
            [vector, str(uuid.uuid4()), str(uuid.uuid4()), model, vector, reads.ANCHOR_RECALL],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "graph_anchor_vector_hnsw" in plan, plan
    suffix = "_int8" if model.endswith("-int8") else ""
    assert f"graph_anchor_vector_hnsw{suffix} " in plan, plan  # this model's own index
