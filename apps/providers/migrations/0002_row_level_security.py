from django.db import migrations

from apps.platform.rls import enable_rls


class Migration(migrations.Migration):
    dependencies = [("providers", "0001_initial")]

    operations = [enable_rls("providers_provider_usage")]
