from django.db import migrations, models


class Migration(migrations.Migration):
    """The API key whose request made a provider call; null for background work. The table's
    row-level security policy is unchanged (it keys on the organization)."""

    dependencies = [
        ("providers", "0003_organization_config"),
    ]

    operations = [
        migrations.AddField(
            model_name="providerusage",
            name="api_key_id",
            field=models.UUIDField(blank=True, null=True),
        ),
    ]
