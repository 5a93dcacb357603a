"""The closed-loop load generator of ``bench_api`` against a local HTTP server."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from apps.evaluation import loadgen

pytestmark = pytest.mark.unit


CONNECTIONS: list[int] = []  # the client port of each request the server answered


@pytest.fixture
def server() -> Iterator[str]:
    CONNECTIONS.clear()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            CONNECTIONS.append(self.client_address[1])
            status = 503 if self.path.endswith("/3") else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            if self.path.endswith("/close"):  # as gunicorn's sync workers answer every request
                self.send_header("Connection", "close")
            self.end_headers()

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            answer = json.dumps({"echo": json.loads(body), "type": self.headers["Content-Type"],
                                 "key": self.headers["Authorization"], "path": self.path}).encode()  # fmt: skip
            self.send_response(202)
            self.send_header("Content-Length", str(len(answer)))
            self.send_header("Server-Timing", "total;dur=1.5")
            self.end_headers()
            self.wfile.write(answer)

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
    def send(session: loadgen.Session, client: int, number: int) -> loadgen.Response:
        return session.get(f"{server}/{client}/{number % 5}", timeout=5)

    sample = loadgen.run_closed_loop(send, clients=4, seconds=0.5, expected_status=200)
    summary = loadgen.summarize(sample, 4)
    assert summary.requests > 20 and summary.errors > 0
    assert summary.error_kinds == {"503": summary.errors}
    # Every fifth request of each client answers 503.
    assert summary.errors == pytest.approx(summary.requests / 5, rel=0.3)
    assert summary.per_second > 0 and 0 < summary.p50_ms <= summary.p95_ms <= summary.p99_ms


def test_a_session_keeps_its_connection_until_the_server_closes_it(server: str) -> None:
    with loadgen.Session() as session:
        assert [session.get(f"{server}/keep").status_code for _ in range(3)] == [200, 200, 200]
        assert len(set(CONNECTIONS)) == 1
        assert [session.get(f"{server}/close").status_code for _ in range(3)] == [200, 200, 200]
        assert len(set(CONNECTIONS)) == 3  # the first /close still rode the kept connection, then one each


def test_a_session_posts_json_and_reads_the_answer(server: str) -> None:
    with loadgen.Session() as session:
        response = session.post(f"{server}/v1/x?y=1", json={"messages": ["é"]}, headers={"Authorization": "Bearer k"})
    assert response.status_code == 202
    assert response.json() == {"echo": {"messages": ["é"]}, "type": "application/json", "key": "Bearer k",
                               "path": "/v1/x?y=1"}  # fmt: skip
    assert response.headers.get("server-timing") == "total;dur=1.5"


def test_a_refused_connection_counts_as_an_error_of_its_kind() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    def send(session: loadgen.Session, client: int, number: int) -> loadgen.Response:
        return session.get(f"http://127.0.0.1:{port}/", timeout=1)

    sample = loadgen.run_closed_loop(send, clients=1, seconds=0.2, expected_status=200)
    assert not sample.latencies and set(sample.errors) == {"ConnectionRefusedError"}


def test_a_session_refuses_anything_but_plain_http() -> None:
    with loadgen.Session() as session, pytest.raises(ValueError, match="plain HTTP"):
        session.get("https://127.0.0.1/")


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
