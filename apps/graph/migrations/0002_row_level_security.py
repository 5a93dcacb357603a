from django.db import migrations

from apps.platform.rls import enable_rls


class Migration(migrations.Migration):
    dependencies = [("graph", "0001_initial")]

    operations = [enable_rls("graph_anchor_vector")]
