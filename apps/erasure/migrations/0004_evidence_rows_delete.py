from django.db import migrations

# The application role may not UPDATE evidence rows (append-only, apps.memory 0002): deleting a
# row that a surviving row supersedes must move that row's ``supersedes`` to the nearest older
# survivor, so deletion and that one relink run together in this function, and nothing else
# may change the column (ADR 0037). ``supersedes`` is a deferred foreign key: the relink after
# the delete is checked at commit.
EVIDENCE_ROWS_DELETE = """
CREATE FUNCTION erasure_evidence_rows_delete(p_table text, p_subject uuid, p_ids uuid[])
RETURNS jsonb
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
DECLARE
    scope uuid := NULLIF(current_setting('app.organization_id', true), '')::uuid;
    deleted integer;
    relinked jsonb;
BEGIN
    IF scope IS NULL THEN
        RAISE EXCEPTION 'erasure_evidence_rows_delete runs in an organization scope';
    END IF;
    IF p_table NOT IN ('memory_core_block', 'memory_episodic_event', 'memory_semantic_item',
                       'memory_procedural_item', 'memory_resource_item', 'memory_vault_entry') THEN
        RAISE EXCEPTION 'not an evidence table: %', p_table;
    END IF;
    EXECUTE format($q$
        CREATE TEMP TABLE erasure_relinks ON COMMIT DROP AS
        WITH RECURSIVE doomed AS (
            SELECT id, supersedes_id FROM %1$I
            WHERE organization_id = $1 AND subject_id = $2 AND id = ANY($3)
        ), walk(successor, predecessor) AS (
            SELECT s.id, s.supersedes_id FROM %1$I AS s
            WHERE s.organization_id = $1 AND s.subject_id = $2 AND s.supersedes_id = ANY($3)
              AND NOT (s.id = ANY($3))
            UNION ALL
            SELECT w.successor, d.supersedes_id FROM walk AS w JOIN doomed AS d ON d.id = w.predecessor
        )
        SELECT successor, predecessor FROM walk
        WHERE predecessor IS NULL OR NOT (predecessor = ANY($3))
    $q$, p_table) USING scope, p_subject, p_ids;
    EXECUTE format('DELETE FROM %I WHERE organization_id = $1 AND subject_id = $2 AND id = ANY($3)', p_table)
        USING scope, p_subject, p_ids;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    EXECUTE format($q$
        UPDATE %I AS t SET supersedes_id = r.predecessor FROM erasure_relinks AS r
        WHERE t.organization_id = $1 AND t.id = r.successor
    $q$, p_table) USING scope;
    SELECT coalesce(jsonb_agg(jsonb_build_array(successor, predecessor) ORDER BY successor), '[]'::jsonb)
        INTO relinked FROM erasure_relinks;
    DROP TABLE erasure_relinks;
    RETURN jsonb_build_object('deleted', deleted, 'relinked', relinked);
END
$fn$;
REVOKE ALL ON FUNCTION erasure_evidence_rows_delete(text, uuid, uuid[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION erasure_evidence_rows_delete(text, uuid, uuid[]) TO mirix_app;
"""


class Migration(migrations.Migration):
    dependencies = [("erasure", "0003_storage_rewrites"), ("memory", "0007_semantic_attribute")]

    operations = [
        migrations.RunSQL(
            EVIDENCE_ROWS_DELETE, "DROP FUNCTION IF EXISTS erasure_evidence_rows_delete(text, uuid, uuid[]);"
        )
    ]
