"""The attribute of a semantic fact's key (entity, attribute).

Rows written before it keep an empty attribute: nothing derives one for them after the fact,
so they are superseded only by an update of their own (ADR 0027).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0006_batch_chunks"),
        ("tenancy", "0002_row_level_security"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="semanticitem", name="msem_name"),
        migrations.AddField(
            model_name="semanticitem",
            name="attribute",
            field=models.CharField(blank=True, default="", max_length=100),
        ),
        migrations.AddIndex(
            model_name="semanticitem",
            index=models.Index(fields=["organization", "subject", "name", "attribute"], name="msem_name_attribute"),
        ),
    ]
