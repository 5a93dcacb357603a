import os

from django.core.wsgi import get_wsgi_application

from mirix_saas.bootstrap import prepare_environment
from mirix_saas.observability import init_sentry

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mirix_saas.settings.local")
prepare_environment()
application = get_wsgi_application()
init_sentry()
