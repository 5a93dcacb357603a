"""Which network destinations a customer-supplied URL may reach. Framework-free.

Customers give us URLs that our servers call (webhook endpoints, an organization's own model
provider). A URL must never make us call our own network, so every outbound call:

- checks the URL with ``target_parse`` (https unless loopback is allowed, no credentials, an
  IP literal must be global), when the URL is set and again when it is called;
- resolves the host once with ``resolve``, refused unless every address is globally
  routable: loopback, RFC 1918, link-local (cloud metadata at 169.254.169.254), shared
  100.64.0.0/10, fc00::/7, multicast, unspecified, reserved, and IPv6 forms that embed an
  IPv4 address (v4-mapped, 6to4, Teredo, NAT64) are refused;
- then connects to one of the checked addresses, never to a fresh lookup (so a name that
  resolves differently the second time cannot steer the connection), and follows no redirect.
  The clients that do this are ``apps.webhooks.ssrf`` and ``apps.providers.outbound``.

``allow_loopback`` exists for local development and tests only.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2000
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class OutboundError(Exception):
    """An outbound call that was refused or got no HTTP response. ``code`` is stable; the
    message names no secret."""

    code = "transport_error"


class UnsafeUrl(OutboundError):
    code = "unsafe_url"


class RefusedDestination(OutboundError):
    code = "refused_destination"


class ResolutionFailed(OutboundError):
    code = "dns_error"


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # an ASCII hostname or an IP literal (without brackets)
    port: int
    path: str  # path and query, at least "/"


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
    literal = ip_literal(host)
    if literal is not None and (refusal := address_refusal(literal, allow_loopback=allow_loopback)):
        raise RefusedDestination(f"The URL's host is {refusal}.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme=parts.scheme, host=host, port=port or (443 if parts.scheme == "https" else 80), path=path)


def ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def host_addresses(host: str, port: int) -> tuple[str, ...]:
    """Every address ``host`` resolves to now, in the resolver's order (one lookup)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return tuple(dict.fromkeys(str(info[4][0]) for info in infos))


def resolve(target: Target, *, allow_loopback: bool) -> tuple[str, ...]:
    """The host's addresses, looked up once; refused unless every one of them may be called."""
    try:
        addresses = host_addresses(target.host, target.port)
    except (OSError, UnicodeError) as exc:
        raise ResolutionFailed(f"{target.host} did not resolve.") from exc
    if not addresses:
        raise ResolutionFailed(f"{target.host} did not resolve.")
    for address in addresses:
        parsed = ip_literal(address)
        refusal = "not an IP address" if parsed is None else address_refusal(parsed, allow_loopback=allow_loopback)
        if refusal:
            raise RefusedDestination(f"{target.host} resolves to {address}, {refusal}.")
    return addresses


@dataclass(frozen=True)
class AddressPolicy:
    """The policy a caller applies to every call of a customer's URL."""

    allow_loopback: bool = False

    def checked(self, url: str) -> tuple[Target, tuple[str, ...]]:
        """``url`` parsed and its host resolved once, or ``UnsafeUrl``, ``RefusedDestination``,
        ``ResolutionFailed``."""
        target = target_parse(url, allow_loopback=self.allow_loopback)
        return target, resolve(target, allow_loopback=self.allow_loopback)
