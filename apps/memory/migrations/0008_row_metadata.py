"""Metadata on every store's rows: the write's tags, GIN-indexed for filters (ADR 0035)."""

import django.contrib.postgres.indexes
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0007_semantic_attribute"),
        ("tenancy", "0002_row_level_security"),
    ]

    operations = [
        migrations.AddField(
            model_name="coreblock",
            name="metadata",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="episodicevent",
            name="metadata",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="proceduralitem",
            name="metadata",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="resourceitem",
            name="metadata",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="semanticitem",
            name="metadata",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="vaultentry",
            name="metadata",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddIndex(
            model_name="coreblock",
            index=django.contrib.postgres.indexes.GinIndex(fields=["metadata"], name="mcore_metadata"),
        ),
        migrations.AddIndex(
            model_name="episodicevent",
            index=django.contrib.postgres.indexes.GinIndex(fields=["metadata"], name="mepi_metadata"),
        ),
        migrations.AddIndex(
            model_name="proceduralitem",
            index=django.contrib.postgres.indexes.GinIndex(fields=["metadata"], name="mproc_metadata"),
        ),
        migrations.AddIndex(
            model_name="resourceitem",
            index=django.contrib.postgres.indexes.GinIndex(fields=["metadata"], name="mres_metadata"),
        ),
        migrations.AddIndex(
            model_name="semanticitem",
            index=django.contrib.postgres.indexes.GinIndex(fields=["metadata"], name="msem_metadata"),
        ),
        migrations.AddIndex(
            model_name="vaultentry",
            index=django.contrib.postgres.indexes.GinIndex(fields=["metadata"], name="mvault_metadata"),
        ),
    ]
