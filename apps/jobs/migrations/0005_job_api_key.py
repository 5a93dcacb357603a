"""The API key that submitted a job, so that a batch's rows and model tokens are credited to
it in the usage report (ADR 0042). Jobs submitted before have none (background)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0004_job_chunks_and_indexing"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="api_key_id",
            field=models.UUIDField(blank=True, null=True),
        ),
    ]
