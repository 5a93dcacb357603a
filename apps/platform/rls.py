"""Row-level security for tenant tables, as migration operations.

Every tenant table gets ``ENABLE`` + ``FORCE ROW LEVEL SECURITY`` and a policy keyed by the
transaction-local ``app.organization_id``: without it a query sees nothing and can write
nothing. The owner role (migrations, platform operations) has a policy of its own; the
application role never does.
"""

from __future__ import annotations

from django.db import migrations

OWNER_ROLE = "mirix_owner"
SCOPE_EXPRESSION = "NULLIF(current_setting('app.organization_id', true), '')::uuid"


def enable_rls(table: str, column: str = "organization_id") -> migrations.RunSQL:
    forward = f"""
        ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant_isolation ON {table}
            USING ({column} = {SCOPE_EXPRESSION})
            WITH CHECK ({column} = {SCOPE_EXPRESSION});
        CREATE POLICY platform_owner ON {table} TO {OWNER_ROLE} USING (true) WITH CHECK (true);
    """
    backward = f"""
        DROP POLICY IF EXISTS platform_owner ON {table};
        DROP POLICY IF EXISTS tenant_isolation ON {table};
        ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY;
        ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;
    """
    return migrations.RunSQL(forward, backward)
