"""Helpers for the erasure tests: running erasure jobs in-process, and scanning every place
data can land (every table of every schema, object storage, every Redis database)."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import redis
from django.conf import settings
from django.db import connections
from psycopg import sql

from apps.erasure.models import ErasureRequest


def erasure_request(request_id: uuid.UUID | str) -> ErasureRequest:
    return ErasureRequest.objects.dangerously_across_organizations().get(id=request_id)


def run_erasure(request_id: uuid.UUID | str) -> ErasureRequest:
    """Run the request's job in this process through the Celery task (``.apply``)."""
    from workers.erasure import run_erasure as task

    request = erasure_request(request_id)
    task.apply(
        kwargs={
            "organization_id": str(request.organization_id),
            "job_id": str(request.job_id),
            "erasure_request_id": str(request.id),
        }
    ).get()
    return erasure_request(request_id)


def database_text() -> str:
    """Every row of every table of every schema (AGE graph schemas included), as the owner."""
    chunks = []
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        )
        for schema, table in cursor.fetchall():
            cursor.execute(
                sql.SQL("SELECT t::text FROM {}.{} t")
                .format(sql.Identifier(schema), sql.Identifier(table))
                .as_string(cursor.connection)
            )
            chunks += [f"{schema}.{table}: {row[0]}" for row in cursor.fetchall()]
    return "\n".join(chunks)


def storage_text(root: Path) -> str:
    """Every object's key and bytes under the filesystem storage root."""
    chunks = []
    for path in root.rglob("*"):
        if path.is_file():
            chunks.append(f"{path.relative_to(root)}: {path.read_bytes().decode('utf-8', errors='replace')}")
    return "\n".join(chunks)


def _expanded(text: str) -> Iterator[str]:
    """The text, and the bodies of any Celery/kombu messages in it (base64-encoded JSON)."""
    yield text
    try:
        value = json.loads(text)
    except ValueError:
        return
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            body, properties = item.get("body"), item.get("properties")
            if isinstance(body, str) and isinstance(properties, dict) and properties.get("body_encoding") == "base64":
                try:
                    yield base64.b64decode(body).decode("utf-8", errors="replace")
                except (binascii.Error, ValueError):
                    pass
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str) and item[:1] in "[{":
            yield from _expanded(item)


def _dump(client: redis.Redis, key: bytes) -> list[bytes]:  # type: ignore[type-arg]
    kind = client.type(key).decode()
    if kind == "string":
        return [client.get(key) or b""]
    if kind == "list":
        return list(client.lrange(key, 0, -1))
    if kind == "hash":
        return [part for pair in client.hgetall(key).items() for part in pair]
    if kind == "set":
        return list(client.smembers(key))
    if kind == "zset":
        return list(client.zrange(key, 0, -1))
    return []


def redis_text() -> str:
    """Every key and value of every database of the broker's (and cache's) Redis."""
    socket_path = urlsplit(settings.CELERY_BROKER_URL).path
    databases = redis.Redis(unix_socket_path=socket_path).info("keyspace")
    chunks = []
    for name in databases:
        client = redis.Redis(unix_socket_path=socket_path, db=int(str(name).removeprefix("db")))
        for key in client.scan_iter(count=1000):
            chunks.append(key.decode("utf-8", errors="replace"))
            for value in _dump(client, key):
                chunks += list(_expanded(value.decode("utf-8", errors="replace")))
    return "\n".join(chunks)
