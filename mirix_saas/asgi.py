import os

from django.core.asgi import get_asgi_application
from django.urls import get_resolver

from mirix_saas.bootstrap import prepare_environment
from mirix_saas.observability import init_sentry

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mirix_saas.settings.local")
prepare_environment()
application = get_asgi_application()
init_sentry()
# Import every view now, not on the first request: readiness then means ready to serve.
get_resolver().url_patterns  # noqa: B018
