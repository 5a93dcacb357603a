"""The TypeScript SDK (clients/typescript) against the real stack: its own tests, run by Node's
test runner as a subprocess, with the stack's address and keys in the environment."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from apps.webhooks import signing
from tests.clients.conftest import Stack, unique
from tests.conftest import _clear_cache as clear_cache

pytestmark = pytest.mark.slow

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "typescript"


class _ResetCounters(BaseHTTPRequestHandler):
    """POST clears the service's rate-limit counters (the client's injected sleep calls it)."""

    def do_POST(self) -> None:
        clear_cache()
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def counter_reset_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ResetCounters)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _signed_delivery() -> str:
    """A delivery signed by the service's signing code during a rotation (two secrets)."""
    body = json.dumps({"type": "memory.created", "data": {"subject": "ana", "ids": [str(uuid.uuid4())]}}).encode()
    secrets = [signing.secret_generate(), signing.secret_generate()]
    headers = signing.signed_headers(
        secrets=secrets, message_id=f"msg_{uuid.uuid4().hex}", timestamp=int(time.time()), body=body
    )
    return json.dumps({"body": body.decode(), "headers": headers, "secret": secrets[0], "other_secret": secrets[1]})


def test_the_typescript_sdk_passes_its_tests_against_the_stack(stack: Stack, counter_reset_url: str) -> None:
    node = shutil.which("node")
    assert node, "the TypeScript SDK's tests need Node.js 20 or later on PATH"
    env = {
        **stack.env(),
        "MIRIX_INTRUDER_KEY": stack.intruder.key,
        "MIRIX_READONLY_KEY": stack.owner.issue_key(["memories:read"]),
        "MIRIX_LIMITED_KEY": stack.owner.issue_key(["memories:read"], rate_limit=1),
        "MIRIX_LIMITED_SUBJECT": stack.owner.subject(unique("ts-rl")).external_id,
        "MIRIX_CACHE_RESET_URL": counter_reset_url,
        "MIRIX_WEBHOOK_DELIVERY": _signed_delivery(),
        "NODE_OPTIONS": "",
    }
    env.pop("NODE_TEST_CONTEXT", None)
    done = subprocess.run(
        [node, "--test", "--test-reporter=tap", str(PACKAGE / "test")],
        capture_output=True,
        text=True,
        env=env,
        cwd=PACKAGE,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"node --test exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "# fail 0" in done.stdout and "# pass 12" in done.stdout, done.stdout


def test_the_package_has_no_runtime_dependencies() -> None:
    manifest = json.loads((PACKAGE / "package.json").read_text())
    assert manifest["type"] == "module" and not manifest.get("dependencies")
    assert manifest["exports"]["."] == {"types": "./src/index.d.ts", "import": "./src/index.js"}
    assert (PACKAGE / "src" / "index.d.ts").is_file()
