"""A local OpenAI-compatible HTTP server, scripted per test, for driving the real SDK.

Each request takes the next scripted reply from a queue (a reply with no script left is a
500 that names the path, so a test that under-scripts fails loudly) and is recorded with its
path, headers and JSON body.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class StubReply:
    status: int = 200
    body: Any = None  # JSON-serialisable, or a str sent as is
    headers: dict[str, str] = field(default_factory=dict)
    delay_seconds: float = 0.0  # sleep before answering (to exceed a client timeout)
    drop_connection: bool = False  # close the connection without answering


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def chat_reply(
    content: str | None, *, prompt_tokens: int = 11, completion_tokens: int = 7, model: str = "gpt-test"
) -> StubReply:
    return StubReply(
        body={
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content, "refusal": None},
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def json_reply(payload: Any, *, prompt_tokens: int = 11, completion_tokens: int = 7) -> StubReply:
    return chat_reply(json.dumps(payload), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)


def embedding_reply(vectors: list[list[float]], *, prompt_tokens: int = 5, order: list[int] | None = None) -> StubReply:
    indices = order if order is not None else list(range(len(vectors)))
    return StubReply(
        body={
            "object": "list",
            "model": "text-embedding-stub",
            "data": [{"object": "embedding", "index": index, "embedding": vectors[index]} for index in indices],
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
        }
    )


def dropped_connection() -> StubReply:
    return StubReply(drop_connection=True)


def error_reply(status: int, *, headers: dict[str, str] | None = None, delay_seconds: float = 0.0) -> StubReply:
    body = {"error": {"message": f"stub error {status}", "type": "stub", "code": None}}
    return StubReply(status=status, body=body, headers=headers or {}, delay_seconds=delay_seconds)


class OpenAIStub:
    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._replies: deque[StubReply] = deque()
        self._responder: Callable[[RecordedRequest], StubReply | None] | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-stub", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def queue(self, *replies: StubReply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def respond_with(self, responder: Callable[[RecordedRequest], StubReply | None]) -> None:
        """Decide replies from the request itself (for concurrent callers, whose order a
        queue cannot script); a responder returning None falls back to the queue."""
        with self._lock:
            self._responder = responder

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, request: RecordedRequest) -> StubReply:
        with self._lock:
            self.requests.append(request)
            responder = self._responder
        decided = responder(request) if responder is not None else None
        if decided is not None:
            return decided
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return StubReply(status=500, body={"error": {"message": f"no scripted reply for {request.path}"}})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                request = RecordedRequest(
                    path=self.path,
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=json.loads(raw or b"{}"),
                )
                reply = stub._next(request)
                if reply.delay_seconds:
                    time.sleep(reply.delay_seconds)
                if reply.drop_connection:
                    self.close_connection = True
                    return
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                data = payload.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


def deployment_settings(stub: OpenAIStub, **overrides: Any) -> dict[str, Any]:
    """Settings that send every model call of the deployment to ``stub`` through the openai
    provider, with fast retries (the ``openai_deployment`` fixture applies them to a whole test;
    ``override_settings(**deployment_settings(stub))`` to part of one)."""
    return {
        "LLM_PROVIDER": "openai",
        "OPENAI_BASE_URL": stub.url,
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_MODEL": "gpt-test",
        "OPENAI_RETRY_BASE_SECONDS": 0.001,
        "OPENAI_TIMEOUT_SECONDS": 5,
        **overrides,
    }
