"""A partial HNSW index on the anchor name embeddings of the local model (all-MiniLM-L6-v2, 384-d).

``embedding`` has no fixed dimension (the dimension is a deployment setting), so the index is
on the expression ``embedding::vector(384)``, limited to the rows of the one model that makes
384-d vectors; ``apps.retrieval.reads.recall_anchors`` orders by the same expression and
names the same model as a literal so the planner can prove the predicate and use the index.
Built concurrently: on 2 cores an HNSW build takes minutes (docs/benchmarks.md) and must not block anchor
writes meanwhile.
"""

from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("graph", "0002_row_level_security")]

    operations = [
        migrations.RunSQL(
            sql=(
                "CREATE INDEX CONCURRENTLY IF NOT EXISTS graph_anchor_vector_hnsw ON graph_anchor_vector "
                "USING hnsw ((embedding::vector(384)) vector_cosine_ops) "
                "WHERE embedding_model = 'all-MiniLM-L6-v2'"
            ),
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS graph_anchor_vector_hnsw",
        )
    ]
