import uuid

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("tenancy", "0002_row_level_security"),
    ]

    operations = [
        migrations.CreateModel(
            name="ConsentRecord",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                (
                    "purpose",
                    models.CharField(
                        choices=[
                            ("store_conversations", "store_conversations"),
                            ("store_sensitive_values", "store_sensitive_values"),
                            ("learn_skills", "learn_skills"),
                            ("cross_domain_generalization", "cross_domain_generalization"),
                        ],
                        max_length=64,
                    ),
                ),
                ("version", models.PositiveIntegerField()),
                ("granted", models.BooleanField()),
                ("actor", models.CharField(max_length=100)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "organization",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="tenancy.organization"
                    ),
                ),
                (
                    "subject",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="tenancy.subject"
                    ),
                ),
            ],
            options={
                "db_table": "consent_record",
                "indexes": [
                    models.Index(
                        fields=["organization", "subject", "purpose", "version"], name="consent_subject_purpose"
                    )
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("subject", "purpose", "version"), name="consent_record_version_unique"
                    )
                ],
            },
        ),
    ]
