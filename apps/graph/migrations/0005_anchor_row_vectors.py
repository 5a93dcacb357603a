"""Row vectors beside the adjacency index (ADR 0019): each mention in ``graph_anchor_row``
carries a half-precision copy of its row's vector and the model that made it, filled here
from the evidence tables for the mentions that exist; the unique index leads with the row."""

import pgvector.django
from django.db import migrations, models

BACKFILL = """
UPDATE graph_anchor_row AS a SET embedding = e.embedding::halfvec, embedding_model = e.embedding_model
FROM {table} AS e
WHERE a.memory_type = '{memory_type}' AND e.id = a.row_id AND e.organization_id = a.organization_id
  AND e.embedding IS NOT NULL
"""


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0004_anchor_adjacency"),
        ("memory", "0004_inline_row_vectors"),
    ]

    operations = [
        migrations.AddField(
            model_name="anchorrow",
            name="embedding",
            field=pgvector.django.HalfVectorField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="anchorrow",
            name="embedding_model",
            field=models.CharField(blank=True, default="", max_length=100),
        ),
        # An anchor's newest mentions must be read through anchor_row_newest: with the anchor
        # second in the unique index, the planner could read all of a hub's mentions and sort.
        migrations.AddConstraint(
            model_name="anchorrow",
            constraint=models.UniqueConstraint(
                fields=("organization", "subject", "row_id", "anchor_key"), name="anchor_row_unique_by_row"
            ),
        ),
        migrations.RemoveConstraint(model_name="anchorrow", name="anchor_row_unique"),
        migrations.RemoveIndex(model_name="anchorrow", name="anchor_row_row"),
        migrations.RunSQL(
            sql=[
                BACKFILL.format(table="memory_episodic_event", memory_type="episodic"),
                BACKFILL.format(table="memory_semantic_item", memory_type="semantic"),
            ],
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
