from __future__ import annotations

from pathlib import Path

from mirix_saas.settings.env import env_bool, env_list, env_str

BASE_DIR = Path(__file__).resolve().parents[3]

SECRET_KEY = env_str("DJANGO_SECRET_KEY")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "apps.platform",
    "apps.tenancy",
    "apps.graph",
    "apps.jobs",
    "apps.audit",
    "apps.evaluation",
    "apps.memory",
    "apps.providers",
    "apps.vault",
    "apps.resources",
    "apps.webhooks",
    "apps.consent",
    "apps.erasure",
    "apps.dream",
    "apps.procedural",
    "apps.usage",
    "apps.console",
]

MIDDLEWARE = [
    "apps.platform.middleware.ServerTimingMiddleware",
    "apps.platform.middleware.RequestIdMiddleware",
    "apps.platform.middleware.RequestLineMiddleware",
    "apps.platform.middleware.RequestBudgetMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "mirix_saas.urls"
WSGI_APPLICATION = "mirix_saas.wsgi.application"
ASGI_APPLICATION = "mirix_saas.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
