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
        # No PII, bodies, cookies, query data, frame variables or source lines; before_send
        # scrubs what integrations attach anyway.
        data_collection={
            "user_info": False,
            "http_bodies": [],
            "cookies": {"mode": "off"},
            "url_query_params": {"mode": "off"},
            "database_query_data": False,
            "queues": False,
            "gen_ai": {"inputs": False, "outputs": False},
            "stack_frame_variables": False,
            "frame_context_lines": 0,
        },
        max_request_body_size="never",
        before_send=scrub_event,  # type: ignore[arg-type]
        traces_sample_rate=0.0,
    )
    return True
