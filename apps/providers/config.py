"""Provider configuration as plain values. Framework-free: the registry fills them from settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from apps.platform.netpolicy import AddressPolicy


@dataclass(frozen=True)
class OpenAIConfig:
    """Everything needed to call one OpenAI-compatible endpoint."""

    model: str
    api_key: str = field(repr=False)
    base_url: str | None = None  # None: the SDK's default (api.openai.com)
    timeout_seconds: float = 60.0
    max_attempts: int = 3
    retry_base_delay_seconds: float = 0.5
    # Set for an endpoint an organization chose: every connection is checked against it when
    # made (apps.providers.outbound). None: the operator's endpoint, trusted.
    address_policy: AddressPolicy | None = None


@dataclass(frozen=True)
class ProviderConfig:
    """A per-organization override of the deployment's LLM endpoint; None keeps the deployment value.

    The caller decrypts the organization's stored values and passes them in; this layer never
    reads or stores them.
    """

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
