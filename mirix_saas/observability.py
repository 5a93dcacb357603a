"""Sentry, initialised only when ``SENTRY_DSN`` is set; nothing of memory content leaves."""

from __future__ import annotations

from django.conf import settings

from apps.platform.sentry_scrub import scrub_event


def init_sentry() -> bool:
    dsn = getattr(settings, "SENTRY_DSN", None)
    if not dsn:
        return False
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=settings.SENTRY_ENVIRONMENT,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        send_default_pii=False,
        max_request_body_size="never",
        include_local_variables=False,
        before_send=scrub_event,  # type: ignore[arg-type]
        traces_sample_rate=0.0,
    )
    return True
