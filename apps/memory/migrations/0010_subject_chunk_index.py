from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0009_pending_writes"),
        ("tenancy", "0004_subjects_created_on_write"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="episodicevent",
            index=models.Index(
                fields=["organization", "subject", "chunk_id", "created_at", "id"], name="mepi_subject_chunk"
            ),
        ),
    ]
