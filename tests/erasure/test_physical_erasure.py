"""After a subject's erasure, its text is gone from the table files too, not only from the rows.

Read as bytes, the way ``grep -a`` over the data directory would: every file of this
database's directory (tables, TOAST, indexes, the catalogs), after a CHECKPOINT has written
every page out.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.test import override_settings

from apps.erasure import adapter, services
from apps.erasure.models import ErasureRequest
from tests.erasure.planting import plant
from tests.erasure.support import run_erasure
from tests.factories import make_tenant


@pytest.fixture
def storage_root(tmp_path: Path) -> Iterator[Path]:
    with override_settings(OBJECT_STORAGE="filesystem", OBJECT_STORAGE_ROOT=tmp_path / "objects"):
        yield tmp_path / "objects"


def _database_files() -> list[Path]:
    """Every file of the test database's directory, after a checkpoint (as the superuser:
    the data directory belongs to the server's system user; root reads it)."""
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as admin:
        admin.execute("CHECKPOINT")
        row = admin.execute(
            "SELECT current_setting('data_directory'), oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    directory = Path(row[0]) / "base" / str(row[1])
    return [path for path in directory.iterdir() if path.is_file()]


def _files_holding(needle: str) -> list[str]:
    wanted = needle.encode()
    hits = []
    for path in _database_files():
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # unlinked by the checkpoint meanwhile
            continue
        if wanted in data or wanted.upper() in data or wanted.capitalize() in data:
            hits.append(path.name)
    return hits


def _relations(filenodes: list[str]) -> list[str]:
    """The names of the relations that own these files (for a readable failure)."""
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as admin:
        rows = admin.execute(
            "SELECT DISTINCT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE pg_relation_filenode(c.oid)::text = ANY(%s)",
            ([name.split(".")[0].split("_")[0] for name in filenodes],),
        ).fetchall()
    return sorted(row[0] for row in rows) or filenodes


def test_the_erased_subjects_text_leaves_the_table_files(storage_root: Path) -> None:
    tenant = make_tenant()
    ana = plant(tenant, "ana")
    bob = plant(tenant, "bob")  # same tables, same pages: must survive the rewrite
    # Control: before the erasure, the scan finds the canary in the files of the stores.
    assert _files_holding(ana.canary), "the scan must see the planted text in the table files"

    accepted = tenant.client().delete("/v1/subjects/ana")
    assert accepted.status_code == 202, accepted.content
    done = run_erasure(accepted.json()["erasure_request_id"])
    assert done.status == ErasureRequest.Status.COMPLETED

    left = _files_holding(ana.canary)
    assert left == [], f"erased text still in the files of {_relations(left)}"
    assert _files_holding(bob.canary), "the other subject's text must still be there"

    # The receipt says which tables were rewritten, when, and what the rewrite cannot reach.
    storage = tenant.client().get(f"/v1/erasure-requests/{done.id}").json()["receipt"]["storage"]
    rewritten = {entry["relation"] for entry in storage["relations"] if entry["status"] == "rewritten"}
    assert {"public.memory_episodic_event", "public.memory_semantic_item", "public.tenancy_subject"} <= rewritten
    assert any(relation.startswith(f"{tenant.organization.graph_name}.") for relation in rewritten)
    assert all(entry["at"] for entry in storage["relations"])
    assert "WAL archives" in storage["retained_elsewhere"] and "backups" in storage["retained_elsewhere"]


def test_a_busy_table_is_left_to_routine_vacuum_and_the_receipt_says_so(
    storage_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewrite waits at most the lock timeout: readers would queue behind it."""
    monkeypatch.setattr(services, "REWRITE_LOCK_TIMEOUT_MS", 200)
    tenant = make_tenant()
    plant(tenant, "ana")
    request_id = tenant.client().delete("/v1/subjects/ana").json()["erasure_request_id"]
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"]) as reader:
        reader.execute("LOCK TABLE public.memory_semantic_item IN ACCESS SHARE MODE")  # a long read
        done = run_erasure(request_id)
    assert done.status == ErasureRequest.Status.COMPLETED
    statuses = {entry["relation"]: entry["status"] for entry in done.receipt["storage"]["relations"]}
    assert statuses["public.memory_semantic_item"] == "busy"
    assert statuses["public.memory_episodic_event"] == "rewritten"


def test_a_table_the_owner_may_not_maintain_is_reported_not_claimed() -> None:
    """VACUUM only warns and skips a table its role may not maintain: the rewrite says so."""
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as admin:
        admin.execute("CREATE TABLE public.erasure_probe_not_owned (note text)")
        try:
            assert adapter.relation_rewrite(relation="public.erasure_probe_not_owned", lock_timeout_ms=200) == (
                "not_permitted"
            )
        finally:
            admin.execute("DROP TABLE public.erasure_probe_not_owned")
    assert adapter.relation_rewrite(relation="public.erasure_probe_not_owned", lock_timeout_ms=200) == "gone"
    assert adapter.relation_rewrite(relation="public.memory_core_block", lock_timeout_ms=200) == "rewritten"
