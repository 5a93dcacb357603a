"""gunicorn settings of the API server: ``make run``, the container image and the test servers.

Used as ``gunicorn -c python:infra.gunicorn_config``; bind address and worker counts stay on
the command line. What it sets:

- ``timeout`` above the request budget (``mirix_saas.settings.components.timeouts``): a
  request's transaction ends (committed, or rolled back and answered 503) before gunicorn
  would kill the worker, so a client is never told "failed" about a stored write.
- ``limit_request_line`` at gunicorn's maximum (8190 bytes); the application refuses paths
  over its own, lower limit with a JSON 414 (``apps.platform.middleware``).
- gunicorn's own error answers (a request line over 8190 bytes, malformed HTTP) in the API's
  JSON error shape instead of an HTML page.
- the control socket under the var directory: one per stack, not one per machine.
- every worker process, once it has loaded the application and before it takes a request,
  applies its share of the cores, warms the local models (``mirix_saas.processes``,
  ADR 0052) and rehearses a write (ADR 0093): the first request after a start costs about
  what a warm one does.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from gunicorn import util

from infra.embedded.environment import var_dir
from mirix_saas.settings.components.timeouts import SERVER_TIMEOUT_SECONDS

wsgi_app = "mirix_saas.wsgi:application"
timeout = SERVER_TIMEOUT_SECONDS
graceful_timeout = 10
limit_request_line = 8190
control_socket = str(var_dir() / "gunicorn.ctl")

_CODES = {400: "malformed_request", 403: "forbidden", 414: "uri_too_long", 417: "expectation_failed"}
_MESSAGES = {
    414: "The request line (method, path and query) is longer than 8190 bytes; shorten the path "
    "or send long values in a JSON body.",
    431: "The request's headers are too many or too large (at most 100 fields of 8190 bytes); send fewer or shorter ones.",
    500: "An internal error occurred; it has been logged.",
}


def json_error_answer(status: int, reason: str, message: str) -> bytes:
    """An HTTP answer in the API's error shape for an error gunicorn answers itself."""
    code = _CODES.get(status) or ("server_error" if status >= 500 else "bad_request")
    text = _MESSAGES.get(status) or f"{reason}: {message[:200]}; send a well-formed HTTP/1.1 request."
    body = json.dumps(
        {"error": {"code": code, "message": text, "details": {}, "request_id": f"req_{uuid.uuid4().hex}"}}
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def _write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    util.write_nonblock(sock, json_error_answer(status_int, reason, mesg))


# gunicorn writes its error pages through this one function (gunicorn.workers.base.handle_error).
util.write_error = _write_json_error


def post_worker_init(worker: Any) -> None:
    # Imported here: the application (and Django's settings) is loaded in the worker, not the master.
    from mirix_saas.processes import api_process_start

    api_process_start(processes=worker.cfg.workers, application=worker.wsgi)
