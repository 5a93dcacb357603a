from django.db import migrations

from apps.platform.rls import enable_rls

TABLES = [
    "memory_core_block",
    "memory_episodic_event",
    "memory_semantic_item",
    "memory_procedural_item",
    "memory_resource_item",
    "memory_vault_entry",
    "memory_ingestion_batch",
]


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]

    operations = [
        *[enable_rls(table) for table in TABLES],
        # Evidence is append-only for the application: rows are superseded, never rewritten.
        # Only the index status of episodic/semantic rows changes; erasure deletes.
        migrations.RunSQL(
            "REVOKE UPDATE ON memory_core_block, memory_procedural_item, memory_resource_item, memory_vault_entry FROM mirix_app;",
            "GRANT UPDATE ON memory_core_block, memory_procedural_item, memory_resource_item, memory_vault_entry TO mirix_app;",
        ),
        migrations.RunSQL(
            """
            REVOKE UPDATE ON memory_episodic_event, memory_semantic_item FROM mirix_app;
            GRANT UPDATE (index_status, index_error) ON memory_episodic_event, memory_semantic_item TO mirix_app;
            """,
            """
            REVOKE UPDATE (index_status, index_error) ON memory_episodic_event, memory_semantic_item FROM mirix_app;
            GRANT UPDATE ON memory_episodic_event, memory_semantic_item TO mirix_app;
            """,
        ),
        # Embeddings are derived from the evidence: a change of model re-embeds them in place.
        migrations.RunSQL(
            """
            GRANT UPDATE (embedding, embedding_model) ON memory_episodic_event, memory_semantic_item,
                memory_procedural_item, memory_resource_item TO mirix_app;
            """,
            """
            REVOKE UPDATE (embedding, embedding_model) ON memory_episodic_event, memory_semantic_item,
                memory_procedural_item, memory_resource_item FROM mirix_app;
            """,
        ),
    ]
