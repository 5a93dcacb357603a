"""RLS as the application role with raw SQL, beneath every ORM safeguard."""

from __future__ import annotations

import os
import uuid

import psycopg
import pytest
from django.contrib.auth import get_user_model

from apps.jobs.services import job_create
from apps.tenancy.scope import organization_scope
from apps.tenancy.services import membership_create
from tests.factories import make_tenant

# Tables the seed below fills for both organizations; every tenant table is checked for leaks.
SEEDED = {"tenancy_organization", "tenancy_subject", "tenancy_membership", "tenancy_api_key", "jobs_job"}


def _app_connection() -> psycopg.Connection:
    return psycopg.connect(os.environ["DATABASE_URL"], autocommit=False)


def _tenant_tables(conn: psycopg.Connection) -> list[str]:
    rows = conn.execute(
        """SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relkind = 'r'
             AND (EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id')
                  OR c.relname = 'tenancy_organization')"""
    ).fetchall()
    return sorted(r[0] for r in rows)


def _seed_two_tenants():  # type: ignore[no-untyped-def]
    a, b = make_tenant("org-a"), make_tenant("org-b")
    for tenant in (a, b):
        subject = tenant.subject("shared-external-id")
        user = get_user_model().objects.db_manager("owner").create_user(username=f"staff-{tenant.id}")
        membership_create(organization_id=tenant.id, user_id=user.pk, role="viewer")
        with organization_scope(tenant.id):
            job_create(organization_id=tenant.id, kind="test", subject_id=subject.id)
    return a, b


def test_every_tenant_table_forces_row_level_security() -> None:
    with _app_connection() as conn:
        tables = _tenant_tables(conn)
        assert {"tenancy_organization", "tenancy_subject", "tenancy_api_key", "jobs_job"} <= set(tables)
        flags = dict(
            conn.execute(
                "SELECT relname, relrowsecurity AND relforcerowsecurity FROM pg_class WHERE relname = ANY(%s)",
                (tables,),
            ).fetchall()
        )
        assert all(flags[t] for t in tables), flags


def test_application_role_is_not_privileged_and_owns_nothing() -> None:
    with _app_connection() as conn:
        role = conn.execute(
            "SELECT rolsuper, rolbypassrls, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert role == (False, False, False, False)
        owned = conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = current_user"
        ).fetchone()
        assert owned == (0,)


def test_without_the_setting_every_tenant_table_is_empty() -> None:
    _seed_two_tenants()
    with _app_connection() as conn:
        for table in _tenant_tables(conn):
            assert conn.execute(f'SELECT count(*) FROM "{table}"').fetchone() == (0,), table


def test_with_organization_a_set_none_of_bs_rows_are_visible_or_writable() -> None:
    a, b = _seed_two_tenants()
    with _app_connection() as conn:
        conn.execute("SELECT set_config('app.organization_id', %s, true)", (str(a.id),))
        for table in _tenant_tables(conn):
            column = "id" if table == "tenancy_organization" else "organization_id"
            foreign = conn.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}" <> %s', (a.id,)).fetchone()
            own = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()
            assert foreign == (0,), table
            if table in SEEDED:
                assert own is not None and own[0] >= 1, table
        # B's rows can be neither changed nor deleted, and nothing can be written into B.
        assert (
            conn.execute("UPDATE tenancy_subject SET display_name = 'x' WHERE organization_id = %s", (b.id,)).rowcount
            == 0
        )
        assert conn.execute("DELETE FROM jobs_job WHERE organization_id = %s", (b.id,)).rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO tenancy_subject (id, organization_id, external_id, kind, display_name, metadata, created_at)"
                " VALUES (%s, %s, 'intruder', 'user', '', '{}', now())",
                (uuid.uuid4(), b.id),
            )
        conn.rollback()


def test_application_role_cannot_create_organizations() -> None:
    with _app_connection() as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(
            "INSERT INTO tenancy_organization (id, name, slug, graph_name, status, created_at)"
            " VALUES (%s, 'x', 'x', 'g_x', 'active', now())",
            (uuid.uuid4(),),
        )
