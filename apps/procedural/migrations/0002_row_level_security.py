from django.db import migrations

from apps.platform.rls import enable_rls


class Migration(migrations.Migration):
    dependencies = [("procedural", "0001_initial")]

    operations = [
        enable_rls("procedural_session"),
        enable_rls("procedural_scec"),
        enable_rls("procedural_experience"),
        enable_rls("procedural_skill"),
        enable_rls("procedural_skill_version"),
        enable_rls("procedural_skill_citation"),
        enable_rls("procedural_skill_event"),
        enable_rls("procedural_admission"),
        enable_rls("procedural_replay"),
        enable_rls("procedural_retrieval"),
        enable_rls("procedural_feedback"),
    ]
