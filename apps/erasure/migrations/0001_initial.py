import uuid

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("tenancy", "0002_row_level_security"),
    ]

    operations = [
        migrations.CreateModel(
            name="ErasureRequest",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("organization_id", models.UUIDField()),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("subject", "Subject"),
                            ("consent_withdrawal", "Consent Withdrawal"),
                            ("organization", "Organization"),
                        ],
                        max_length=32,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[("pending", "Pending"), ("running", "Running"), ("completed", "Completed")],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("subject_id", models.UUIDField(blank=True, null=True)),
                ("subject_key", models.CharField(blank=True, default="", max_length=64)),
                (
                    "purposes",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64), blank=True, default=list, size=None
                    ),
                ),
                ("requested_by", models.CharField(max_length=100)),
                ("job_id", models.UUIDField(blank=True, null=True)),
                (
                    "steps_done",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64), blank=True, default=list, size=None
                    ),
                ),
                ("counts", models.JSONField(blank=True, default=dict)),
                ("receipt", models.JSONField(blank=True, null=True)),
                ("receipt_sha256", models.CharField(blank=True, default="", max_length=64)),
                ("requested_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("completed_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "db_table": "erasure_request",
                "indexes": [
                    models.Index(fields=["organization_id", "subject_id", "status"], name="erasure_subject_status"),
                    models.Index(fields=["organization_id", "subject_key"], name="erasure_subject_key"),
                    models.Index(fields=["organization_id", "requested_at", "id"], name="erasure_org_requested"),
                ],
            },
        ),
        migrations.CreateModel(
            name="ErasureOutbox",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("next_attempt_at", models.DateTimeField()),
                ("publish_count", models.PositiveIntegerField(default=0)),
                ("last_published_at", models.DateTimeField(blank=True, null=True)),
                ("done_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "organization",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="tenancy.organization"
                    ),
                ),
                (
                    "erasure_request",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="erasure.erasurerequest"
                    ),
                ),
            ],
            options={
                "db_table": "erasure_outbox",
                "indexes": [
                    models.Index(
                        condition=models.Q(("done_at__isnull", True)),
                        fields=["next_attempt_at"],
                        name="erasure_outbox_due",
                    )
                ],
            },
        ),
    ]
