from django.db import migrations

from apps.platform.rls import enable_rls


class Migration(migrations.Migration):
    dependencies = [("webhooks", "0001_initial")]

    operations = [
        enable_rls("webhooks_endpoint"),
        enable_rls("webhooks_secret"),
        enable_rls("webhooks_event"),
        enable_rls("webhooks_delivery"),
        enable_rls("webhooks_attempt"),
    ]
