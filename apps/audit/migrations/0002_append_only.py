from django.db import migrations

from apps.platform.rls import enable_rls

APPEND_ONLY = """
CREATE FUNCTION audit_entry_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_entry is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_entry_append_only BEFORE UPDATE OR DELETE ON audit_entry
    FOR EACH ROW EXECUTE FUNCTION audit_entry_refuse_change();
REVOKE UPDATE, DELETE, TRUNCATE ON audit_entry FROM mirix_app;
"""

UNDO = """
DROP TRIGGER IF EXISTS audit_entry_append_only ON audit_entry;
DROP FUNCTION IF EXISTS audit_entry_refuse_change();
GRANT UPDATE, DELETE ON audit_entry TO mirix_app;
"""


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]

    operations = [enable_rls("audit_entry"), migrations.RunSQL(APPEND_ONLY, UNDO)]
