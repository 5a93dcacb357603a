"""The HTTP client of the OpenAI adapter: every connection checked when it is made.

An organization may bring its own OpenAI-compatible endpoint, a URL we did not choose. The
SDK on its own resolves the host again for every connection and follows redirects, so a
host that is public when configured can later resolve to our own network, or answer 307 to
``http://169.254.169.254/`` and receive the prompt (with the tenant's memories). So the SDK
is given this client:

- ``CheckedTransport`` checks every request's URL against the address policy
  (``apps.platform.netpolicy``) at send time, resolves the host once, and connects to a
  checked address, with the hostname kept as ``Host`` and as TLS SNI (the certificate is
  verified against it). Environment proxies are not used for these calls: a proxy would
  resolve the host itself.
- No redirect is followed, for any endpoint: a 3xx answer becomes ``RedirectRefused`` (the
  operator's endpoint has no reason to redirect either).

The deployment's own endpoint (``MIRIX_OPENAI_BASE_URL``) is the operator's choice and may
sit on a private network: it gets no address policy, only the redirect refusal.
"""

from __future__ import annotations

import httpx2
import openai

from apps.platform import netpolicy


class RedirectRefused(netpolicy.OutboundError):
    code = "redirect_refused"


class CheckedTransport(httpx2.BaseTransport):
    """Sends each request to an address the policy checked, and refuses every redirect.

    ``policy`` None: the operator's endpoint, connected as the SDK would (redirects still refused).
    """

    def __init__(self, *, policy: netpolicy.AddressPolicy | None, inner: httpx2.BaseTransport | None = None) -> None:
        self._policy = policy
        self._inner = inner or httpx2.HTTPTransport(trust_env=policy is None)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self._pinned_send(request) if self._policy is not None else self._inner.handle_request(request)
        if response.is_redirect:
            response.close()
            location = response.headers.get("location", "")
            raise RedirectRefused(
                f"The endpoint answered HTTP {response.status_code}"
                + (f" redirecting to {location[:200]}" if location else "")
                + "; redirects are not followed. Configure the final URL as base_url."
            )
        return response

    def _pinned_send(self, request: httpx2.Request) -> httpx2.Response:
        assert self._policy is not None
        target, addresses = self._policy.checked(str(request.url))
        extensions = dict(request.extensions)
        if target.scheme == "https":
            extensions["sni_hostname"] = target.host
        failure: httpx2.ConnectError | None = None
        for address in addresses:
            # The Host header was set from the URL when the request was built; only the
            # connection's address changes.
            pinned = httpx2.Request(
                request.method,
                request.url.copy_with(host=address),
                headers=request.headers,
                stream=request.stream,
                extensions=extensions,
            )
            try:
                return self._inner.handle_request(pinned)
            except httpx2.ConnectError as exc:  # nothing was sent: the next checked address
                failure = exc
        assert failure is not None
        raise failure

    def close(self) -> None:
        self._inner.close()


def provider_http_client(*, policy: netpolicy.AddressPolicy | None) -> httpx2.Client:
    """The SDK's own client defaults, with the checked transport and redirects off."""
    return openai.DefaultHttpxClient(
        transport=CheckedTransport(policy=policy), follow_redirects=False, trust_env=policy is None
    )
