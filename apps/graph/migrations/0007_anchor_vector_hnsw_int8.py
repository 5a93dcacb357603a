"""The partial HNSW index of 0003 for the local model's int8 graph (ADR 0091), whose vectors are
stored under their own model name: ``apps.retrieval.reads.recall_anchors`` uses an index only
for a model that has one. Built concurrently, as 0003's."""

from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("graph", "0006_anchor_frame_citations")]

    operations = [
        migrations.RunSQL(
            sql=(
                "CREATE INDEX CONCURRENTLY IF NOT EXISTS graph_anchor_vector_hnsw_int8 ON graph_anchor_vector "
                "USING hnsw ((embedding::vector(384)) vector_cosine_ops) "
                "WHERE embedding_model = 'all-MiniLM-L6-v2-int8'"
            ),
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS graph_anchor_vector_hnsw_int8",
        )
    ]
