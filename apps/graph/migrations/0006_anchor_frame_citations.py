"""The rows each frame cites, on its adjacency rows (ADR 0048): a filtered graph read keeps
only frames citing a matching row before its frame caps. Frames indexed before this column
have ``NULL`` (not recorded); the jobs sweep rebuilds those subjects' index from their graph
(``apps.graph.services.adjacency_rebuild_missing``)."""

import django.contrib.postgres.fields
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0005_anchor_row_vectors"),
    ]

    operations = [
        migrations.AddField(
            model_name="anchorframe",
            name="citations",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.UUIDField(), blank=True, null=True, size=None
            ),
        ),
    ]
