from django.db import migrations

from apps.platform.rls import enable_rls


class Migration(migrations.Migration):
    dependencies = [("consent", "0001_initial")]

    operations = [
        enable_rls("consent_record"),
        # The history is append-only for the application: a change is a new version. Erasure
        # of the subject deletes it.
        migrations.RunSQL(
            "REVOKE UPDATE ON consent_record FROM mirix_app;", "GRANT UPDATE ON consent_record TO mirix_app;"
        ),
    ]
