"""The MIRIX memory service's Python client: ``Mirix`` (sync) and ``AsyncMirix`` (asyncio)."""

__version__ = "0.1.0"

from mirix.client import AsyncMirix, Mirix  # noqa: E402
from mirix.errors import (  # noqa: E402
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequest,
    ConfigurationError,
    Conflict,
    JobFailed,
    MirixError,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    UnprocessableEntity,
    ValidationError,
    WaitTimeout,
)
from mirix.webhooks import WebhookVerificationError, verify as verify_webhook  # noqa: E402

__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AsyncMirix",
    "AuthenticationError",
    "BadRequest",
    "ConfigurationError",
    "Conflict",
    "JobFailed",
    "Mirix",
    "MirixError",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "RateLimited",
    "ServerError",
    "UnprocessableEntity",
    "ValidationError",
    "WaitTimeout",
    "WebhookVerificationError",
    "verify_webhook",
]
