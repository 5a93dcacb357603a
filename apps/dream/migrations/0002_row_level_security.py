from django.db import migrations

from apps.platform.rls import enable_rls


class Migration(migrations.Migration):
    dependencies = [("dream", "0001_initial")]

    operations = [
        enable_rls("dream_round"),
        enable_rls("dream_merge"),
        enable_rls("dream_rejection"),
        enable_rls("dream_source"),
    ]
