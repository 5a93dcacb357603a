"""Calling customer URLs without server-side request forgery. Framework-free.

A customer's URL must never make us call our own network. So, for every attempt:

- ``target_parse`` checks the URL (https unless loopback is allowed, no credentials, an IP
  literal must be global); endpoints are checked with it when created or changed too;
- ``resolve`` resolves the host once and refuses it unless every address is globally
  routable: loopback, RFC 1918, link-local (cloud metadata at 169.254.169.254), shared
  100.64.0.0/10, fc00::/7, multicast, unspecified, reserved, and IPv6 forms that embed an
  IPv4 address (v4-mapped, 6to4, Teredo, NAT64) are refused;
- ``post`` connects to an address that was checked, never to a fresh lookup (so a name that
  resolves differently the second time cannot steer the connection), sends the hostname as
  ``Host`` and as TLS SNI and verifies the certificate against it, follows no redirect,
  reads at most a few KB of the answer, and gives up at a wall-clock deadline.

``allow_loopback`` exists for local development and tests only.
"""

from __future__ import annotations

import functools
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2000
RESPONSE_READ_BYTES = 2048
SNIPPET_CHARS = 500
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class OutboundError(Exception):
    """An attempt that got no HTTP response. ``code`` is stable; the message names no secret."""

    code = "transport_error"


class UnsafeUrl(OutboundError):
    code = "unsafe_url"


class RefusedDestination(OutboundError):
    code = "refused_destination"


class ResolutionFailed(OutboundError):
    code = "dns_error"


class ConnectFailed(OutboundError):
    code = "connection_error"


class TlsFailed(OutboundError):
    code = "tls_error"


class TimedOut(OutboundError):
    code = "timeout"


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # an ASCII hostname or an IP literal (without brackets)
    port: int
    path: str  # path and query, at least "/"


@dataclass(frozen=True)
class Response:
    status: int
    retry_after: str | None
    body_snippet: str  # at most SNIPPET_CHARS characters


def address_refusal(address: IPAddress, *, allow_loopback: bool) -> str | None:
    """Why ``address`` may not be called, or None when it may."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return "an IPv4-mapped IPv6 address"
        if address.sixtofour is not None or address.teredo is not None or any(address in n for n in _NAT64):
            return "an IPv6 address that embeds an IPv4 address"
    if address.is_loopback:
        return None if allow_loopback else "a loopback address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_private:
        return "a private address"
    if address.is_reserved or not address.is_global:
        return "not a globally routable address"
    return None


def target_parse(url: str, *, allow_loopback: bool) -> Target:
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeUrl(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise UnsafeUrl("The URL contains whitespace or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
        hostname = parts.hostname
    except ValueError as exc:
        raise UnsafeUrl("The URL is not valid.") from exc
    if parts.scheme != "https" and not (parts.scheme == "http" and allow_loopback):
        raise UnsafeUrl("The URL must use https.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeUrl("The URL must not contain credentials.")
    if not hostname:
        raise UnsafeUrl("The URL has no host.")
    try:
        host = hostname.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise UnsafeUrl("The URL's host is not a valid hostname.") from exc
    literal = _ip_literal(host)
    if literal is not None and (refusal := address_refusal(literal, allow_loopback=allow_loopback)):
        raise RefusedDestination(f"The URL's host is {refusal}.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme=parts.scheme, host=host, port=port or (443 if parts.scheme == "https" else 80), path=path)


def _ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def resolve(target: Target, *, allow_loopback: bool) -> tuple[str, ...]:
    """The host's addresses, looked up once; refused unless every one of them may be called."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise ResolutionFailed(f"{target.host} did not resolve.") from exc
    addresses = tuple(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise ResolutionFailed(f"{target.host} did not resolve.")
    for address in addresses:
        parsed = _ip_literal(address)
        refusal = "not an IP address" if parsed is None else address_refusal(parsed, allow_loopback=allow_loopback)
        if refusal:
            raise RefusedDestination(f"{target.host} resolves to {address}, {refusal}.")
    return addresses


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
