"""Keep the row vectors of episodic and semantic rows in the row (ADR 0019).

pgvector's ``vector`` type is stored EXTERNAL: once a row passes the 2 kB TOAST threshold,
which a 384-d vector plus a message does, the vector moves out of line and every distance
computed for a row by id costs a second index probe and page read. MAIN keeps it in the heap
tuple (the long text columns go out of line first). Rows written before this migration keep
their layout until they are rewritten; the results are the same either way.
"""

from django.db import migrations

TABLES = ("memory_episodic_event", "memory_semantic_item")


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0003_index_attempts"),
    ]

    operations = [
        migrations.RunSQL(
            sql=[f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE MAIN" for table in TABLES],
            reverse_sql=[f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE EXTERNAL" for table in TABLES],
        ),
    ]
