from django.db import migrations

from apps.platform.rls import enable_rls


class Migration(migrations.Migration):
    dependencies = [("erasure", "0001_initial")]

    operations = [enable_rls("erasure_request"), enable_rls("erasure_outbox")]
