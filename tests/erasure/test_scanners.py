"""The scans the erasure tests rely on find what they are looking for (no vacuous passes)."""

from __future__ import annotations

from pathlib import Path

from django.core.cache import cache

from apps.jobs.services import job_create
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from tests.erasure.planting import new_canary
from tests.erasure.support import database_text, redis_text, storage_text
from tests.factories import make_tenant


def test_the_scans_see_tables_graphs_objects_cache_and_broker_messages(tmp_path: Path) -> None:
    tenant = make_tenant()
    in_row, in_graph, in_cache, in_message = (new_canary() for _ in range(4))
    subject = tenant.subject(in_row)
    with organization_scope(tenant.id):
        from apps.graph import adapter

        adapter.cypher(
            organization_id=tenant.id,
            query="CREATE (a:Anchor {subject_id: $s, key: $k, name: $k}) RETURN a",
            params={"s": str(subject.id), "k": in_graph},
            returns=["a"],
        )
        job = job_create(organization_id=tenant.id, kind="test.scan")
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "object").write_bytes(f"bytes {in_row}".encode())
    cache.set(f"scan-{in_cache}", {"text": in_cache}, timeout=60)
    # A message that no worker consumes: its body is base64-encoded JSON in a Redis list.
    app.send_task(
        "test-scan.unrouted", kwargs={"job_id": str(job.id), "text": in_message}, queue=f"test-scan-{in_message}"
    )
    try:
        database = database_text()
        assert in_row in database and in_graph in database
        assert in_row in storage_text(tmp_path)
        redis = redis_text()
        assert in_cache in redis and in_message in redis
    finally:
        cache.delete(f"scan-{in_cache}")
        with app.connection_for_write() as conn:
            conn.default_channel.queue_delete(f"test-scan-{in_message}")
