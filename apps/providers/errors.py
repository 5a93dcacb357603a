from __future__ import annotations

from apps.platform.errors import ApplicationError


class ProviderError(ApplicationError):
    """A model or embedding provider failed after its retries. Never carries model output."""

    status_code = 502
    code = "provider_error"
