from django.db import migrations

from apps.platform.rls import enable_rls


class Migration(migrations.Migration):
    dependencies = [("usage", "0001_initial")]

    operations = [enable_rls("usage_counter")]
