"""The SSRF-safe client: what it refuses, where it connects, TLS to a checked address, no redirects."""

from __future__ import annotations

import ipaddress
import socket
import time
from typing import Any

import pytest

from apps.platform import netpolicy
from apps.webhooks import ssrf
from tests.tls_server import TlsServer
from tests.webhooks.support import Receiver, Reply

pytestmark = pytest.mark.unit

PUBLIC = "93.184.216.34"


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "::1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "fe80::1",
        "100.64.0.1",
        "fc00::1",
        "fd12:3456::1",
        "::ffff:127.0.0.1",
        "::ffff:8.8.8.8",
        "2002:7f00:1::1",
        "64:ff9b::7f00:1",
        "224.0.0.1",
        "ff02::1",
        "0.0.0.0",  # noqa: S104 - an address to refuse, not one to bind
        "::",
        "240.0.0.1",
        "255.255.255.255",
        "::127.0.0.1",
        "198.18.0.1",
        "2001:db8::1",
    ],
)
def test_non_global_addresses_are_refused(address: str) -> None:
    assert netpolicy.address_refusal(ipaddress.ip_address(address), allow_loopback=False) is not None


@pytest.mark.parametrize("address", ["8.8.8.8", PUBLIC, "2606:4700:4700::1111"])
def test_global_addresses_are_allowed(address: str) -> None:
    assert netpolicy.address_refusal(ipaddress.ip_address(address), allow_loopback=False) is None


def test_loopback_is_allowed_only_when_switched_on_and_never_in_disguise() -> None:
    assert netpolicy.address_refusal(ipaddress.ip_address("127.0.0.1"), allow_loopback=True) is None
    assert netpolicy.address_refusal(ipaddress.ip_address("::1"), allow_loopback=True) is None
    assert netpolicy.address_refusal(ipaddress.ip_address("::ffff:127.0.0.1"), allow_loopback=True) is not None
    assert netpolicy.address_refusal(ipaddress.ip_address("10.0.0.1"), allow_loopback=True) is not None


@pytest.mark.parametrize(
    ("url", "error"),
    [
        # Loopback hosts, refused as well: each is refused by its own rule first (UnsafeUrl).
        ("http://127.0.0.1:9/x", netpolicy.UnsafeUrl),
        ("ftp://127.0.0.1:9/x", netpolicy.UnsafeUrl),
        ("https://user:pw@127.0.0.1:9/x", netpolicy.UnsafeUrl),
        ("https://127.0.0.1:99999/x", netpolicy.UnsafeUrl),
        ("https://127.0.0.1:9/a b", netpolicy.UnsafeUrl),
        ("https:///nohost", netpolicy.UnsafeUrl),
        ("https://127.0.0.1:9/" + "a" * 2000, netpolicy.UnsafeUrl),
        ("https://10.0.0.5/x", netpolicy.RefusedDestination),
        ("https://169.254.169.254/latest/meta-data", netpolicy.RefusedDestination),
        ("https://[::ffff:127.0.0.1]/x", netpolicy.RefusedDestination),
        ("https://127.0.0.1/x", netpolicy.RefusedDestination),
    ],
)
def test_urls_are_checked_before_anything_is_resolved(url: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        netpolicy.target_parse(url, allow_loopback=False)


def test_a_good_url_parses() -> None:
    target = netpolicy.target_parse("https://Hooks.Mirix.Test/in?x=1", allow_loopback=False)
    assert target == netpolicy.Target(scheme="https", host="hooks.mirix.test", port=443, path="/in?x=1")
    assert netpolicy.target_parse("http://127.0.0.1:8080", allow_loopback=True).path == "/"


class FakeDns:
    """``socket.getaddrinfo`` answering from a script of addresses, one answer per lookup."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)
        self.lookups: list[str] = []

    def __call__(self, host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        self.lookups.append(host)
        addresses = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses
        ]


@pytest.mark.parametrize(
    "addresses",
    [["10.0.0.7"], ["169.254.169.254"], ["::ffff:127.0.0.1"], ["127.0.0.1"], [PUBLIC, "192.168.0.10"]],
)
def test_a_name_resolving_to_a_refused_address_is_refused(
    addresses: list[str], receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", FakeDns(addresses))
    with pytest.raises(netpolicy.RefusedDestination):
        ssrf.post_checked("https://hooks.test/x", headers={}, body=b"{}", timeout=2, allow_loopback=False)
    assert receiver.requests == []


def test_the_local_receiver_is_refused_unless_loopback_is_allowed(receiver: Receiver) -> None:
    with pytest.raises(netpolicy.UnsafeUrl):  # plain http is only for loopback development
        ssrf.post_checked(receiver.url(), headers={}, body=b"{}", timeout=2, allow_loopback=False)
    with pytest.raises(netpolicy.RefusedDestination):
        netpolicy.resolve(
            netpolicy.Target("http", "localhost", receiver.server.server_address[1], "/hook"), allow_loopback=False
        )
    assert receiver.requests == []
    response = ssrf.post_checked(receiver.url(), headers={}, body=b"{}", timeout=2, allow_loopback=True)
    assert response.status == 200 and len(receiver.requests) == 1


def test_a_second_lookup_cannot_steer_the_connection(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS rebinding: checked as public, then re-resolving to 127.0.0.1. There is no second
    lookup: the connection goes to the address that was checked."""
    dns = FakeDns([PUBLIC], ["127.0.0.1"])
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    connected: list[tuple[str, int]] = []

    def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        connected.append(address)
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(socket, "create_connection", create_connection)
    port = receiver.server.server_address[1]
    with pytest.raises(ssrf.ConnectFailed):
        ssrf.post_checked(f"http://rebind.example:{port}/hook", headers={}, body=b"{}", timeout=2, allow_loopback=True)
    assert dns.lookups == ["rebind.example"]
    assert connected == [(PUBLIC, port)]
    assert receiver.requests == []

    # The other order: the first (and only) answer is loopback, refused before any connection.
    monkeypatch.setattr(socket, "getaddrinfo", FakeDns(["127.0.0.1"], [PUBLIC]))
    with pytest.raises(netpolicy.RefusedDestination):
        ssrf.post_checked("https://rebind.example/hook", headers={}, body=b"{}", timeout=2, allow_loopback=False)
    assert connected == [(PUBLIC, port)]


def test_redirects_are_not_followed(receiver: Receiver) -> None:
    receiver.script(Reply(302, {"Location": receiver.url("/elsewhere")}))
    response = ssrf.post_checked(receiver.url(), headers={}, body=b"{}", timeout=2, allow_loopback=True)
    assert response.status == 302
    assert [r.path for r in receiver.requests] == ["/hook"]


def test_the_answer_is_cut_to_a_snippet_and_retry_after_is_read(receiver: Receiver) -> None:
    receiver.script(Reply(503, {"Retry-After": "7"}, b"x" * 5000))
    response = ssrf.post_checked(receiver.url(), headers={}, body=b"{}", timeout=2, allow_loopback=True)
    assert response.status == 503 and response.retry_after == "7" and len(response.body_snippet) == 500


def test_a_silent_server_times_out_at_the_deadline() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    try:
        started = time.monotonic()
        with pytest.raises(ssrf.TimedOut):
            ssrf.post_checked(f"http://127.0.0.1:{port}/", headers={}, body=b"{}", timeout=1, allow_loopback=True)
        assert time.monotonic() - started < 3
    finally:
        listener.close()


def test_tls_goes_to_the_checked_address_with_sni_and_certificate_checks_for_the_hostname(
    tls_server: TlsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", FakeDns(["127.0.0.1"]))
    response = ssrf.post_checked(
        f"https://hooks.test:{tls_server.port}/in",
        headers={},
        body=b"{}",
        timeout=3,
        allow_loopback=True,
        tls_context=tls_server.client_context(),
    )
    assert response.status == 204
    assert tls_server.server_names == ["hooks.test"]
    assert tls_server.hosts == [f"hooks.test:{tls_server.port}"]

    # Same address, another name: the certificate does not match it.
    with pytest.raises(ssrf.TlsFailed):
        ssrf.post_checked(
            f"https://other.test:{tls_server.port}/in",
            headers={},
            body=b"{}",
            timeout=3,
            allow_loopback=True,
            tls_context=tls_server.client_context(),
        )
    # An untrusted certificate fails verification.
    with pytest.raises(ssrf.TlsFailed):
        ssrf.post_checked(
            f"https://hooks.test:{tls_server.port}/in", headers={}, body=b"{}", timeout=3, allow_loopback=True
        )
    assert len(tls_server.hosts) == 1
