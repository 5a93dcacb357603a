"""Posting webhook messages to customer URLs without server-side request forgery. Framework-free.

The address policy (which URLs and addresses may be called, one lookup) is
``apps.platform.netpolicy``. For every attempt, ``post`` connects to an address that policy
checked, never to a fresh lookup (so a name that resolves differently the second time cannot
steer the connection), sends the hostname as ``Host`` and as TLS SNI and verifies the
certificate against it, follows no redirect, reads at most a few KB of the answer, and gives
up at a wall-clock deadline.
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from apps.platform.netpolicy import OutboundError, Target, resolve, target_parse

RESPONSE_READ_BYTES = 2048
SNIPPET_CHARS = 500


class ConnectFailed(OutboundError):
    code = "connection_error"


class TlsFailed(OutboundError):
    code = "tls_error"


class TimedOut(OutboundError):
    code = "timeout"


@dataclass(frozen=True)
class Response:
    status: int
    retry_after: str | None
    body_snippet: str  # at most SNIPPET_CHARS characters


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to an address checked beforehand instead of resolving ``host`` again."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """TLS to a checked address, with SNI and certificate verification for ``host``."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self.address = address
        self.tls_context = context

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        try:
            self.sock = self.tls_context.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise


@functools.cache
def _default_tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def _abort(connection: http.client.HTTPConnection, expired: threading.Event) -> None:
    expired.set()
    sock = connection.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _connect(connection: http.client.HTTPConnection) -> None:
    try:
        connection.connect()
    except TimeoutError as exc:
        raise TimedOut("The connection timed out.") from exc
    except ssl.SSLError as exc:
        raise TlsFailed(f"TLS failed: {exc.reason or type(exc).__name__}.") from exc
    except OSError as exc:
        raise ConnectFailed(f"The connection failed: {exc.strerror or type(exc).__name__}.") from exc


def _exchange(
    connection: http.client.HTTPConnection, target: Target, headers: Mapping[str, str], body: bytes, deadline: float
) -> Response:
    expired = threading.Event()
    watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), _abort, args=(connection, expired))
    watchdog.daemon = True
    watchdog.start()
    try:
        try:
            connection.request("POST", target.path, body=body, headers=dict(headers))
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            if expired.is_set() or isinstance(exc, TimeoutError):
                raise TimedOut("No response before the timeout.") from exc
            raise ConnectFailed(f"The exchange failed: {type(exc).__name__}.") from exc
        try:
            data = response.read(RESPONSE_READ_BYTES)
        except (OSError, http.client.HTTPException):
            data = b""  # the status line and headers arrived; the body is only a snippet
    finally:
        watchdog.cancel()
    return Response(
        status=response.status,
        retry_after=response.getheader("Retry-After"),
        body_snippet=data.decode("utf-8", "replace")[:SNIPPET_CHARS],
    )


def post(
    target: Target,
    addresses: Sequence[str],
    *,
    headers: Mapping[str, str],
    body: bytes,
    timeout: float,
    tls_context: ssl.SSLContext | None = None,
) -> Response:
    """POST ``body`` to the first checked address that accepts a connection, within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    failure: OutboundError = ConnectFailed("No address accepted the connection.")
    for address in addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimedOut("The connection timed out.")
        connection: http.client.HTTPConnection
        if target.scheme == "https":
            context = tls_context or _default_tls_context()
            connection = _PinnedHTTPSConnection(
                target.host, target.port, address=address, timeout=remaining, context=context
            )
        else:
            connection = _PinnedHTTPConnection(target.host, target.port, address=address, timeout=remaining)
        try:
            try:
                _connect(connection)
            except (ConnectFailed, TimedOut) as exc:
                failure = exc
                continue
            return _exchange(connection, target, headers, body, deadline)
        finally:
            connection.close()
    raise failure


def post_checked(
    url: str,
    *,
    headers: Mapping[str, str],
    body: bytes,
    timeout: float,
    allow_loopback: bool,
    tls_context: ssl.SSLContext | None = None,
) -> Response:
    """Parse, resolve once, check every address, then POST to a checked one."""
    target = target_parse(url, allow_loopback=allow_loopback)
    addresses = resolve(target, allow_loopback=allow_loopback)
    return post(target, addresses, headers=headers, body=body, timeout=timeout, tls_context=tls_context)
