"""The MIRIX memory service's Python client: ``Mirix`` (sync) and ``AsyncMirix`` (asyncio)."""

__version__ = "0.1.0"

from mirix.client import AsyncMirix, Mirix
from mirix.errors import (
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
from mirix.webhooks import WebhookVerificationError
from mirix.webhooks import verify as verify_webhook

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
