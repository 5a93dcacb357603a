"""The closed-loop load generator of ``bench_api`` against a local HTTP server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from apps.evaluation import loadgen

pytestmark = pytest.mark.unit


@pytest.fixture
def server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            status = 503 if self.path.endswith("/3") else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_clients_run_back_to_back_and_other_statuses_count_as_errors(server: str) -> None:
    def send(session: requests.Session, client: int, number: int) -> requests.Response:
        return session.get(f"{server}/{client}/{number % 5}", timeout=5)

    sample = loadgen.run_closed_loop(send, clients=4, seconds=0.5, expected_status=200)
    summary = loadgen.summarize(sample, 4)
    assert summary.requests > 20 and summary.errors > 0
    assert summary.error_kinds == {"503": summary.errors}
    # Every fifth request of each client answers 503.
    assert summary.errors == pytest.approx(summary.requests / 5, rel=0.3)
    assert summary.per_second > 0 and 0 < summary.p50_ms <= summary.p95_ms <= summary.p99_ms


def test_text_stream_deals_each_text_once_until_the_pool_runs_out() -> None:
    stream = loadgen.TextStream(["a", "b", "b", "c"])  # a repeated text of the pool counts once
    assert stream.take(2) == ["a", "b"]
    assert stream.take(1) == ["c"]
    assert stream.wrapped == 0
    assert stream.take(2) == ["a", "b"]
    assert stream.wrapped == 2


def test_text_stream_never_deals_a_text_to_two_clients() -> None:
    stream = loadgen.TextStream([str(i) for i in range(4000)])
    dealt: list[list[str]] = [[] for _ in range(4)]

    def client(index: int) -> None:
        for _ in range(100):
            dealt[index] += stream.take(10)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    texts = [text for texts in dealt for text in texts]
    assert len(texts) == len(set(texts)) == 4000
    assert stream.wrapped == 0


def test_exchange_alternates_user_and_assistant() -> None:
    assert loadgen.exchange(["hi there", "hello", "bye"]) == [
        {"role": "user", "name": "Bench", "content": "hi there"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "name": "Bench", "content": "bye"},
    ]


def test_batches_of_groups_writes_by_their_batch() -> None:
    batches = loadgen.batches_of(["t1", "t1", "t1", "t2", "t3", "t3"])
    assert (batches.count, batches.mean, batches.largest) == (3, 2.0, 3)
    assert loadgen.batches_of([]) == loadgen.Batches(count=0, mean=0.0, largest=0)


def test_two_windows_of_a_cell_add_up_to_one() -> None:
    first = loadgen.Sample(latencies=[0.010, 0.030], errors={"503": 1}, seconds=2.0)
    second = loadgen.Sample(latencies=[0.020], errors={"503": 2, "429": 1}, seconds=1.0)
    assert loadgen.merged(None, second) is second
    both = loadgen.merged(first, second)
    assert both.latencies == [0.010, 0.030, 0.020] and both.seconds == 3.0
    assert both.errors == {"503": 3, "429": 1} and first.errors == {"503": 1}  # the windows are left as they were
    summary = loadgen.summarize(both, clients=2)
    assert summary.per_second == 1.0 and summary.requests == 7 and summary.p50_ms == 20.0
