import django.contrib.postgres.fields
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="AuditEntry",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("organization_id", models.UUIDField()),
                ("sequence", models.PositiveBigIntegerField()),
                ("actor", models.CharField(max_length=100)),
                ("action", models.CharField(max_length=64)),
                ("subject_id", models.UUIDField(blank=True, null=True)),
                (
                    "target_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=100), blank=True, default=list, size=None
                    ),
                ),
                ("request_id", models.CharField(blank=True, default="", max_length=100)),
                ("created_at", models.DateTimeField()),
                ("previous_hash", models.CharField(max_length=64)),
                ("entry_hash", models.CharField(max_length=64)),
            ],
            options={
                "db_table": "audit_entry",
                "constraints": [
                    models.UniqueConstraint(fields=("organization_id", "sequence"), name="audit_sequence_unique")
                ],
            },
        ),
    ]
