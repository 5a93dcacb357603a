"""Postgres restarted under load, on a throwaway cluster of this test's own, with a real
gunicorn server pointed at it: clients get clean 503s while it is down (JSON, no stack, no
SQL), every write answered 2xx is there afterwards, and the same server processes serve
again once it is back, without a restart."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import psutil
import pytest
import requests

from apps.memory.models import STORES
from tests.processes import purge_queues, wait_for
from tests.reliability.support import Cluster, api_server, manage, message, throwaway_postgres

CLIENTS = 4
STORE_TABLES = {store: model._meta.db_table for store, model in STORES.items()}
# What a database error must never show a client.
LEAKS = re.compile(r"Traceback|psycopg|SELECT |INSERT |UPDATE |FATAL|terminating|socket|\.py\b", re.IGNORECASE)


@dataclass
class Answer:
    at: float
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


def _stored(cluster: Cluster) -> dict[str, Counter[str]]:
    found: dict[str, Counter[str]] = {}
    for store, table in STORE_TABLES.items():
        for (chunk_id,) in cluster.sql(f"SELECT chunk_id::text FROM {table}"):  # table names are constants
            found.setdefault(chunk_id, Counter())[store] += 1
    return found


@pytest.mark.slow
def test_a_postgres_restart_under_load_gives_clean_503s_loses_nothing_and_heals() -> None:
    purge_queues()
    with throwaway_postgres("mirix_restart") as cluster:
        key = re.search(r"API key:\s+(mx_live_\w+)", manage(cluster.env, "seed_demo"))
        assert key
        with api_server(workers=1, threads=CLIENTS, env=cluster.env, name="restart") as server:
            created = server.post("/v1/subjects", key.group(1), {"external_id": "maya", "kind": "user"})
            assert created.status_code == 201, created.text
            workers_before = {p.pid for p in psutil.Process(server.process.pid).children()}
            answers: list[Answer] = []
            stop = threading.Event()

            def client(c: int) -> None:
                n = 0
                with requests.Session() as session:
                    session.headers["Authorization"] = f"Bearer {key.group(1)}"
                    while not stop.is_set():
                        n += 1
                        body = {"messages": [message(f"On day {n} I swam with Tom; marker c{c}n{n}.", n=n)]}
                        try:
                            response = session.post(f"{server.url}/v1/subjects/maya/memories", json=body, timeout=60)
                        except requests.RequestException as exc:  # the API server itself must stay up
                            answers.append(Answer(time.monotonic(), 0, repr(exc)))
                            continue
                        try:
                            parsed: Any = response.json()
                        except ValueError:
                            parsed = response.text
                        answers.append(Answer(time.monotonic(), response.status_code, parsed, dict(response.headers)))

            threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
            for thread in threads:
                thread.start()
            try:
                wait_for(lambda: sum(a.status == 202 for a in answers) >= CLIENTS, timeout=120)
                cluster.restart(down_seconds=3)
                back = time.monotonic()
                wait_for(lambda: sum(a.status == 202 and a.at > back for a in answers) >= CLIENTS, timeout=120)
            finally:
                stop.set()
                for thread in threads:
                    thread.join()
            workers_after = {p.pid for p in psutil.Process(server.process.pid).children()}
            ready = requests.get(f"{server.url}/readyz", timeout=10)
        stored = _stored(cluster)
    purge_queues()

    statuses = Counter(a.status for a in answers)
    assert set(statuses) <= {202, 503}, [(a.status, a.body) for a in answers if a.status not in (202, 503)]
    assert statuses[503] >= 1, statuses  # the restart was seen by clients
    for answer in answers:
        if answer.status == 503:
            assert isinstance(answer.body, dict), answer.body
            assert answer.body["error"]["code"] == "service_unavailable"
            assert answer.headers.get("Content-Type", "").startswith("application/json")
            assert answer.headers.get("Retry-After")
            assert not LEAKS.search(str(answer.body)), answer.body
    accepted = [a.body for a in answers if a.status == 202]
    expected = {body["chunk_id"]: Counter(r["type"] for r in body["records"]) for body in accepted}
    assert len(expected) == len(accepted)
    assert stored == expected  # every 2xx write is there, whole; nothing else is
    assert workers_after == workers_before  # healed in place: the same server processes
    assert ready.status_code == 200
