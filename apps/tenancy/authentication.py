"""API-key authentication: ``Authorization: Bearer <key>``. Revocation takes effect at once."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from apps.tenancy import keys
from apps.tenancy.selectors import api_key_record_by_lookup_id


@dataclass(frozen=True)
class ApiKeyPrincipal:
    """``request.auth``: who is calling and on behalf of which organization."""

    api_key_id: uuid.UUID
    organization_id: uuid.UUID
    scopes: frozenset[str]
    rate_limit_per_minute: int | None
    monthly_request_quota: int | None

    @property
    def is_authenticated(self) -> bool:
        return True


class ApiKeyAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'

    def authenticate(self, request: Request) -> tuple[ApiKeyPrincipal, ApiKeyPrincipal] | None:
        header = get_authorization_header(request).split()
        if not header:
            return None
        if header[0].lower() != self.keyword.lower().encode() or len(header) != 2:
            raise exceptions.AuthenticationFailed("Use the header 'Authorization: Bearer <API key>'.")
        try:
            candidate = header[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed("The API key is malformed.") from exc
        parsed = keys.parse_key(candidate, settings.API_KEY_PREFIX)
        if parsed is None:
            raise exceptions.AuthenticationFailed("The API key is malformed.")
        record = api_key_record_by_lookup_id(lookup_id=parsed.lookup_id)
        if record is None or not keys.hash_matches(parsed.full_key, record.key_hash, settings.API_KEY_PEPPER):
            raise exceptions.AuthenticationFailed("The API key is not valid.")
        if record.revoked_at is not None:
            raise exceptions.AuthenticationFailed("The API key has been revoked.")
        if record.expires_at is not None and record.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("The API key has expired.")
        if not record.organization_active:
            raise exceptions.AuthenticationFailed("The organization is not active.")
        principal = ApiKeyPrincipal(
            api_key_id=record.id,
            organization_id=record.organization_id,
            scopes=frozenset(record.scopes),
            rate_limit_per_minute=record.rate_limit_per_minute,
            monthly_request_quota=record.monthly_request_quota,
        )
        return principal, principal
