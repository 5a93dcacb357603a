from django.db import migrations

from apps.platform.rls import enable_rls

API_KEY_LOOKUP = """
CREATE FUNCTION tenancy_api_key_lookup(p_lookup_id text)
RETURNS TABLE (
    id uuid, organization_id uuid, key_hash varchar, scopes varchar[], expires_at timestamptz,
    revoked_at timestamptz, rate_limit_per_minute integer, organization_status varchar,
    monthly_request_quota bigint
)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT k.id, k.organization_id, k.key_hash, k.scopes, k.expires_at, k.revoked_at,
           k.rate_limit_per_minute, o.status, o.monthly_request_quota
    FROM tenancy_api_key k JOIN tenancy_organization o ON o.id = k.organization_id
    WHERE k.lookup_id = p_lookup_id
$$;
REVOKE ALL ON FUNCTION tenancy_api_key_lookup(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tenancy_api_key_lookup(text) TO mirix_app;
"""


class Migration(migrations.Migration):
    dependencies = [("tenancy", "0001_initial")]

    operations = [
        enable_rls("tenancy_organization", column="id"),
        enable_rls("tenancy_subject"),
        enable_rls("tenancy_membership"),
        enable_rls("tenancy_api_key"),
        # The one read that precedes the tenant scope: find a key by its clear lookup id.
        migrations.RunSQL(API_KEY_LOOKUP, "DROP FUNCTION IF EXISTS tenancy_api_key_lookup(text);"),
        # Organizations are created by the platform (owner), never by the application role.
        migrations.RunSQL(
            "REVOKE INSERT, DELETE ON tenancy_organization FROM mirix_app;",
            "GRANT INSERT, DELETE ON tenancy_organization TO mirix_app;",
        ),
    ]
