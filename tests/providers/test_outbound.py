"""Every connection the OpenAI adapter makes is checked when it is made: no redirect is
followed, an organization's endpoint is resolved once per request, refused unless the policy
allows every address, and connected at the checked address with the hostname kept."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Iterator

import httpx2
import openai
import pytest

from apps.platform import netpolicy
from apps.providers.config import OpenAIConfig
from apps.providers.errors import ProviderError
from apps.providers.interfaces import MeteringContext
from apps.providers.openai_provider import OpenAIMemoryLLM
from apps.providers.outbound import CheckedTransport, RedirectRefused
from apps.providers.schemas import InputMessage, WriterInput
from tests.factories import complete_writes, make_tenant
from tests.metering import RecordingMeter
from tests.providers.openai_stub import OpenAIStub, StubReply, json_reply
from tests.tls_server import TlsServer

PROMPT_CANARY = "canary-3f9e memory of the tenant"
ROUTE = {"memory_types": [], "reason": "small talk"}


class FakeResolver:
    """Stands in for ``netpolicy.host_addresses``: scripted answers, one per lookup."""

    def __init__(self, *answers: tuple[str, ...]) -> None:
        self.answers = list(answers)
        self.lookups: list[str] = []

    def __call__(self, host: str, port: int) -> tuple[str, ...]:
        self.lookups.append(host)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@pytest.fixture
def refused_target() -> Iterator[OpenAIStub]:
    """A listener that must receive nothing: reached as ``0.0.0.0:<port>`` (which Linux
    connects to this host), an address the policy refuses even with loopback allowed."""
    server = OpenAIStub()
    try:
        yield server
    finally:
        server.close()


def _port(stub: OpenAIStub) -> int:
    return int(stub.url.rsplit(":", 1)[1].split("/", 1)[0])


def _redirect_to(target: OpenAIStub) -> StubReply:
    return StubReply(status=307, headers={"location": f"http://0.0.0.0:{_port(target)}/v1/chat/completions"})


def _writer_input() -> WriterInput:
    message = InputMessage(message_id="m1", role="user", content=PROMPT_CANARY, timestamp=dt.datetime.now(dt.UTC))
    return WriterInput(messages=[message])


def _llm(base_url: str, *, policy: netpolicy.AddressPolicy | None) -> OpenAIMemoryLLM:
    return OpenAIMemoryLLM(
        config=OpenAIConfig(
            model="gpt-test",
            api_key="sk-test-key",
            base_url=base_url,
            timeout_seconds=2.0,
            max_attempts=3,
            retry_base_delay_seconds=0.001,
            address_policy=policy,
        )
    )


def _metering() -> MeteringContext:
    return MeteringContext(organization_id=uuid.uuid4(), meter=RecordingMeter())


def test_without_the_checked_client_the_sdk_follows_the_redirect_to_the_refused_target(
    openai_stub: OpenAIStub, refused_target: OpenAIStub
) -> None:
    """The finding, reproduced: the SDK's default client takes the 307 and posts the prompt to
    ``0.0.0.0``. (This is what the fix below must stop; it also proves the listener is reachable.)"""
    openai_stub.queue(_redirect_to(refused_target))
    refused_target.queue(json_reply(ROUTE))
    sdk = openai.OpenAI(base_url=openai_stub.url, api_key="sk-test-key", max_retries=0, timeout=2.0)
    sdk.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": PROMPT_CANARY}])
    assert PROMPT_CANARY in str(refused_target.requests[0].body)


@pytest.mark.parametrize("policy", [netpolicy.AddressPolicy(allow_loopback=True), None])
def test_a_redirect_is_refused_and_nothing_reaches_its_target(
    openai_stub: OpenAIStub, refused_target: OpenAIStub, policy: netpolicy.AddressPolicy | None
) -> None:
    """An organization's endpoint (checked) and the operator's (``None``): neither follows a 3xx."""
    openai_stub.queue(_redirect_to(refused_target), _redirect_to(refused_target), _redirect_to(refused_target))
    refused_target.queue(json_reply(ROUTE))
    with pytest.raises(ProviderError) as raised:
        _llm(openai_stub.url, policy=policy).route(_writer_input(), metering=_metering())
    assert raised.value.details == {"reason": "redirect_refused"}
    assert "HTTP 307" in str(raised.value) and "redirects are not followed" in str(raised.value)
    assert len(openai_stub.requests) == 1  # refused at once, not retried
    assert refused_target.requests == []


def test_a_name_that_later_resolves_to_a_refused_address_is_refused_at_send_time(
    openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Allowed when configured (it resolved to loopback, allowed here), then rebound to the
    cloud metadata address: the next call is refused before any connection."""
    tenant = make_tenant()
    resolver = FakeResolver(("127.0.0.1",))
    monkeypatch.setattr(netpolicy, "host_addresses", resolver)
    base_url = f"http://provider.test:{_port(openai_stub)}/v1"
    configured = tenant.client().put("/v1/provider-config", {"api_key": "sk-org", "base_url": base_url}, format="json")
    assert configured.status_code == 200, configured.content

    openai_stub.queue(json_reply(ROUTE))
    tenant.subject("ana")
    written = tenant.client().post("/v1/subjects/ana/memories", {"text": "I adopted a cat."}, format="json")
    assert written.status_code == 202, written.content
    complete_writes(tenant.id)  # the worker routes (ADR 0054), through the checked address
    assert len(openai_stub.requests) == 1
    assert openai_stub.requests[0].headers["host"] == f"provider.test:{_port(openai_stub)}"

    resolver.answers = [("169.254.169.254",)]
    refused = tenant.client().post("/v1/subjects/ana/memories", {"text": PROMPT_CANARY}, format="json")
    assert refused.status_code == 202, refused.content
    complete_writes(tenant.id)
    job = tenant.client().get(f"/v1/jobs/{refused.json()['job_id']}").json()
    assert "ProviderError" in job["result"]["writing_error"]  # refused before any connection
    assert len(openai_stub.requests) == 1  # nothing more reached the endpoint
    assert resolver.lookups == ["provider.test"] * 3  # configured, first call, refused call


@pytest.mark.parametrize("addresses", [("10.0.0.7",), ("::ffff:127.0.0.1",), ("127.0.0.1", "192.168.1.4")])
def test_every_address_of_the_answer_must_be_allowed(
    openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch, addresses: tuple[str, ...]
) -> None:
    monkeypatch.setattr(netpolicy, "host_addresses", FakeResolver(addresses))
    llm = _llm(f"http://provider.test:{_port(openai_stub)}/v1", policy=netpolicy.AddressPolicy(allow_loopback=True))
    with pytest.raises(ProviderError) as raised:
        llm.route(_writer_input(), metering=_metering())
    assert raised.value.details == {"reason": "refused_destination"}
    assert openai_stub.requests == []


def test_loopback_and_plain_http_only_when_the_settings_allow_them(
    openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolver = FakeResolver(("127.0.0.1",))
    monkeypatch.setattr(netpolicy, "host_addresses", resolver)
    with pytest.raises(ProviderError) as raised:
        _llm(openai_stub.url, policy=netpolicy.AddressPolicy(allow_loopback=False)).route(
            _writer_input(), metering=_metering()
        )
    assert raised.value.details == {"reason": "unsafe_url"}  # http is for loopback development only
    assert openai_stub.requests == []

    openai_stub.queue(json_reply(ROUTE))
    decision = _llm(openai_stub.url, policy=netpolicy.AddressPolicy(allow_loopback=True)).route(
        _writer_input(), metering=_metering()
    )
    assert decision.reason == "small talk" and len(openai_stub.requests) == 1


def test_each_request_is_resolved_once_and_sent_to_the_address_checked(
    openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection goes to the checked address, not to a second lookup by the HTTP stack
    (``provider.test`` has no DNS entry: any other lookup would fail the call)."""
    resolver = FakeResolver(("127.0.0.1",))
    monkeypatch.setattr(netpolicy, "host_addresses", resolver)
    openai_stub.queue(json_reply(ROUTE), json_reply(ROUTE))
    llm = _llm(f"http://provider.test:{_port(openai_stub)}/v1", policy=netpolicy.AddressPolicy(allow_loopback=True))
    llm.route(_writer_input(), metering=_metering())
    llm.route(_writer_input(), metering=_metering())
    assert resolver.lookups == ["provider.test", "provider.test"]
    assert [r.headers["host"] for r in openai_stub.requests] == [f"provider.test:{_port(openai_stub)}"] * 2


def test_tls_to_the_checked_address_keeps_the_hostname_for_sni_and_the_certificate(
    tls_server: TlsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(netpolicy, "host_addresses", FakeResolver(("127.0.0.1",)))
    policy = netpolicy.AddressPolicy(allow_loopback=True)
    inner = httpx2.HTTPTransport(verify=tls_server.client_context(), trust_env=False)
    with httpx2.Client(transport=CheckedTransport(policy=policy, inner=inner)) as client:
        response = client.post(f"https://hooks.test:{tls_server.port}/in", content=b"{}")
        assert response.status_code == 204
        assert tls_server.server_names == ["hooks.test"]
        assert tls_server.hosts == [f"hooks.test:{tls_server.port}"]
        with pytest.raises(httpx2.ConnectError):  # same address, a name the certificate does not cover
            client.post(f"https://other.test:{tls_server.port}/in", content=b"{}")
    assert len(tls_server.hosts) == 1


def test_the_transport_refuses_a_redirect_itself(openai_stub: OpenAIStub, refused_target: OpenAIStub) -> None:
    openai_stub.queue(_redirect_to(refused_target))
    with httpx2.Client(transport=CheckedTransport(policy=None), follow_redirects=True) as client:
        with pytest.raises(RedirectRefused, match=re.escape("redirecting to http://0.0.0.0")):
            client.post(f"{openai_stub.url}/chat/completions", content=b"{}")
    assert refused_target.requests == []
