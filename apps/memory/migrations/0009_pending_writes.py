"""Writes accepted in the request: the rows of a write a worker has yet to complete (ADR 0054)."""

import uuid

import django.db.models.deletion
from django.db import migrations, models

from apps.platform.rls import enable_rls

EPISODE_COLUMNS = (
    "actor, event_type, summary, details, event_time, event_time_precision, mention_time, status, source_message_ids"
)


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0004_job_chunks_and_indexing"),
        ("memory", "0008_row_metadata"),
        ("tenancy", "0004_subjects_created_on_write"),
    ]

    operations = [
        migrations.AlterField(
            model_name="episodicevent",
            name="index_status",
            field=models.CharField(
                choices=[("writing", "Writing"), ("pending", "Pending"), ("indexed", "Indexed"), ("failed", "Failed")],
                default="pending",
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="semanticitem",
            name="index_status",
            field=models.CharField(
                choices=[("writing", "Writing"), ("pending", "Pending"), ("indexed", "Indexed"), ("failed", "Failed")],
                default="pending",
                max_length=16,
            ),
        ),
        migrations.CreateModel(
            name="PendingWrite",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("chunk_id", models.UUIDField()),
                ("source_kind", models.CharField(max_length=16)),
                ("session_id", models.CharField(blank=True, default="", max_length=200)),
                ("metadata", models.JSONField(blank=True, default=dict)),
                ("api_key_id", models.UUIDField(blank=True, null=True)),
                ("messages", models.JSONField(blank=True, default=list)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "job",
                    models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="jobs.job"),
                ),
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
                "db_table": "memory_pending_write",
                "indexes": [models.Index(fields=["organization", "created_at"], name="mpend_org_created")],
            },
        ),
        enable_rls("memory_pending_write"),
        # A message's episodic row is stored in the write's request and completed by its worker
        # (the writer's episode of the message, ADR 0054); once it leaves ``writing`` it is
        # evidence like any other, never rewritten (the trigger refuses it, as a privilege error).
        migrations.RunSQL(
            f"""
            GRANT UPDATE ({EPISODE_COLUMNS}) ON memory_episodic_event TO mirix_app;
            CREATE FUNCTION memory_episode_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF OLD.index_status <> 'writing'
                   AND ROW({", ".join(f"NEW.{c}" for c in EPISODE_COLUMNS.split(", "))})
                       IS DISTINCT FROM ROW({", ".join(f"OLD.{c}" for c in EPISODE_COLUMNS.split(", "))}) THEN
                    RAISE EXCEPTION 'evidence is append-only: only a row still being written may change'
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER memory_episode_frozen BEFORE UPDATE ON memory_episodic_event
                FOR EACH ROW EXECUTE FUNCTION memory_episode_frozen();
            """,
            f"""
            DROP TRIGGER memory_episode_frozen ON memory_episodic_event;
            DROP FUNCTION memory_episode_frozen();
            REVOKE UPDATE ({EPISODE_COLUMNS}) ON memory_episodic_event FROM mirix_app;
            """,
        ),
    ]
