"""A closed-loop HTTP load generator (framework-free): N clients, each sending its next
request as soon as the previous one is answered, for a fixed time.

Every request's latency and status is kept; :func:`summarize` turns them into requests/s,
percentiles and an error count. Used by ``bench_api`` and ``bench_writes``.

The clients speak HTTP through :class:`Session`, a thin layer over the standard library's
``http.client``: the generator runs on the cores of the server it measures, and each CPU
millisecond it spends per request is taken from the server. ``requests`` spent 1.1–1.5 ms of
CPU per write answered (the benchmark's own process, read from the kernel), a tenth of the
server's own; the lean client spends a fraction of that (docs/benchmarks.md).
"""

from __future__ import annotations

import http.client
import json as jsonlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from apps.platform.stats import percentile


@dataclass(frozen=True)
class Response:
    status_code: int
    headers: http.client.HTTPMessage  # case-insensitive ``get``
    content: bytes

    def json(self) -> Any:
        return jsonlib.loads(self.content)


class Session:
    """One client's HTTP/1.1 connection to one server, kept while the server keeps it open
    and opened again after an answer that closes it (gunicorn's sync workers close every
    connection). The interface is the part of ``requests.Session`` the benchmarks use."""

    def __init__(self) -> None:
        self._connection: http.client.HTTPConnection | None = None
        self._address: tuple[str, int] | None = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def get(self, url: str, *, headers: Mapping[str, str] | None = None, timeout: float = 600) -> Response:
        return self.request("GET", url, headers=headers, timeout=timeout)

    def post(
        self, url: str, *, json: Any = None, headers: Mapping[str, str] | None = None, timeout: float = 600
    ) -> Response:
        return self.request("POST", url, body=jsonlib.dumps(json).encode(), headers=headers, timeout=timeout)

    def request(
        self,
        method: str,
        url: str,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 600,
    ) -> Response:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"the load generator speaks plain HTTP to a host: {url!r}")
        address = (parts.hostname, parts.port or 80)
        if self._connection is None or self._address != address:
            self.close()
            self._connection, self._address = http.client.HTTPConnection(*address, timeout=timeout), address
        sent = {"Content-Type": "application/json", **(headers or {})} if body is not None else dict(headers or {})
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        try:
            self._connection.request(method, path, body=body, headers=sent)
            answer = self._connection.getresponse()
            response = Response(status_code=answer.status, headers=answer.headers, content=answer.read())
        except (OSError, http.client.HTTPException):
            self.close()  # the next request opens a new connection
            raise
        if answer.will_close:
            self.close()
        return response


# (session, client index, request number) → one HTTP response
Request = Callable[[Session, int, int], Response]


@dataclass
class Sample:
    latencies: list[float] = field(default_factory=list)  # seconds, successful requests only
    errors: dict[str, int] = field(default_factory=dict)  # status (or exception name) → count
    seconds: float = 0.0

    @property
    def requests(self) -> int:
        return len(self.latencies) + sum(self.errors.values())


@dataclass(frozen=True)
class Summary:
    clients: int
    requests: int
    errors: int
    per_second: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    error_kinds: dict[str, int]


def merged(first: Sample | None, second: Sample) -> Sample:
    """Two windows of the same cell as one: their requests, errors and seconds added up."""
    if first is None:
        return second
    errors = dict(first.errors)
    for kind, count in second.errors.items():
        errors[kind] = errors.get(kind, 0) + count
    return Sample(latencies=first.latencies + second.latencies, errors=errors, seconds=first.seconds + second.seconds)


def summarize(sample: Sample, clients: int) -> Summary:
    successful = sample.latencies
    return Summary(
        clients=clients,
        requests=sample.requests,
        errors=sum(sample.errors.values()),
        per_second=len(successful) / sample.seconds if sample.seconds else 0.0,
        p50_ms=percentile(successful, 0.50) * 1000,
        p95_ms=percentile(successful, 0.95) * 1000,
        p99_ms=percentile(successful, 0.99) * 1000,
        error_kinds=dict(sample.errors),
    )


def run_closed_loop(
    send: Request,
    *,
    clients: int,
    seconds: float,
    expected_status: int,
    on_request: Callable[[], None] | None = None,
) -> Sample:
    """``clients`` threads, each with its own connection, sending ``send`` back to back for
    ``seconds``; a response with another status than ``expected_status`` is an error."""
    sample = Sample()
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    deadline = [0.0]

    def client(index: int) -> None:
        latencies: list[float] = []
        errors: dict[str, int] = {}
        with Session() as session:
            start.wait()
            number = 0
            while time.monotonic() < deadline[0]:
                began = time.perf_counter()
                try:
                    status = str(send(session, index, number).status_code)
                except (OSError, http.client.HTTPException) as exc:
                    status = type(exc).__name__
                elapsed = time.perf_counter() - began
                if status == str(expected_status):
                    latencies.append(elapsed)
                else:
                    errors[status] = errors.get(status, 0) + 1
                number += 1
                if on_request is not None:
                    on_request()
        with lock:
            sample.latencies.extend(latencies)
            for status, count in errors.items():
                sample.errors[status] = sample.errors.get(status, 0) + count

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    began = time.monotonic()
    deadline[0] = began + seconds
    start.wait()
    for thread in threads:
        thread.join()
    sample.seconds = time.monotonic() - began
    return sample


class TextStream:
    """Texts dealt from a pool, each at most once while the pool lasts (thread-safe): clients
    that draw from one stream never write a text another client wrote, so a worker's caches
    of parses and vectors see no repeats (the general case: customers' texts do not repeat).
    ``wrapped`` counts the texts dealt again after the pool ran out."""

    def __init__(self, pool: list[str]) -> None:
        self._pool = list(dict.fromkeys(pool))
        self._next = 0
        self._lock = threading.Lock()
        self.wrapped = 0

    def take(self, count: int) -> list[str]:
        with self._lock:
            texts = [self._pool[(self._next + i) % len(self._pool)] for i in range(count)]
            self.wrapped += max(0, self._next + count - max(len(self._pool), self._next))
            self._next += count
        return texts


def exchange(texts: list[str], *, user_name: str = "Bench") -> list[dict[str, str]]:
    """Chat messages of one exchange: user and assistant in turn, the user first."""
    return [
        {"role": "user", "name": user_name, "content": text} if i % 2 == 0 else {"role": "assistant", "content": text}
        for i, text in enumerate(texts)
    ]


@dataclass(frozen=True)
class Batches:
    """How a worker grouped writes: writes per batch (mean, largest) and how many batches."""

    count: int
    mean: float
    largest: int


def batches_of(batch_keys: list[object]) -> Batches:
    """Writes grouped by the key of the batch that completed each (e.g. the time a batch
    stamped on its jobs)."""
    sizes: dict[object, int] = {}
    for key in batch_keys:
        sizes[key] = sizes.get(key, 0) + 1
    if not sizes:
        return Batches(count=0, mean=0.0, largest=0)
    return Batches(count=len(sizes), mean=len(batch_keys) / len(sizes), largest=max(sizes.values()))
