"""Row words beside the adjacency index (ADR 0115): each mention in ``graph_anchor_row`` carries
a copy of its row's full-text vector, filled here from the evidence tables for the mentions that
exist, as 0005 filled the row vectors."""

import django.contrib.postgres.search
from django.db import migrations

BACKFILL = """
UPDATE graph_anchor_row AS a SET search_vector = e.search_vector
FROM {table} AS e
WHERE a.memory_type = '{memory_type}' AND e.id = a.row_id AND e.organization_id = a.organization_id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0007_anchor_vector_hnsw_int8"),
        ("memory", "0004_inline_row_vectors"),
    ]

    operations = [
        migrations.AddField(
            model_name="anchorrow",
            name="search_vector",
            field=django.contrib.postgres.search.SearchVectorField(blank=True, null=True),
        ),
        migrations.RunSQL(
            sql=[
                BACKFILL.format(table="memory_episodic_event", memory_type="episodic"),
                BACKFILL.format(table="memory_semantic_item", memory_type="semantic"),
            ],
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
