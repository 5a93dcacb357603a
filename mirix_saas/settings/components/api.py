from __future__ import annotations

from apps.platform.openapi_tags import TAGS
from mirix_saas.settings.env import env_int, env_optional, env_str

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.tenancy.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.tenancy.permissions.HasRequiredScopes"],
    "DEFAULT_THROTTLE_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["apps.platform.renderers.TimedJSONRenderer"],
    # JSON only; the memory write view adds multipart for documents (a form body anywhere else is a 415).
    "DEFAULT_PARSER_CLASSES": ["apps.platform.parsers.StrictJSONParser"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "apps.platform.exception_handler.api_exception_handler",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_PAGINATION_CLASS": None,
}

# The base URL clients reach the API at; the OpenAPI document's `servers` (a generated client's default).
API_PUBLIC_URL = (
    env_optional("MIRIX_API_PUBLIC_URL") or f"http://127.0.0.1:{env_optional('MIRIX_PORT') or '8000'}"
).rstrip("/")

SPECTACULAR_SETTINGS = {
    "TITLE": "MIRIX SaaS API",
    "DESCRIPTION": "Hosted memory for LLM agents: typed evidence stores, a provenance hypergraph, bounded cited retrieval.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVERS": [{"url": API_PUBLIC_URL, "description": "This deployment (MIRIX_API_PUBLIC_URL)."}],
    # Operations are tagged by the resource their operationId starts with (apps.platform.openapi).
    "TAGS": [{"name": name, "description": text} for name, text in TAGS.items()],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.platform.openapi.add_error_responses",
        "apps.platform.openapi.add_response_headers",
        "apps.platform.openapi.tag_by_resource",
        "apps.platform.openapi.add_examples",
    ],
    # The documentation pages' assets are served by the project (air-gapped installs), not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Swagger UI would send the document to an online validator for its badge: not from here.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
}

# Server pepper for API-key HMACs. Changing it invalidates every key.
API_KEY_PEPPER = env_str("MIRIX_API_KEY_PEPPER")
API_KEY_PREFIX = env_optional("MIRIX_API_KEY_PREFIX") or "mx_live_"
# Per-key requests per minute and the default per-organization monthly request quota.
API_KEY_RATE_PER_MINUTE = env_int("MIRIX_API_KEY_RATE_PER_MINUTE", 600)
ORGANIZATION_DEFAULT_MONTHLY_QUOTA = env_int("MIRIX_ORGANIZATION_MONTHLY_QUOTA", 1_000_000)
API_KEY_ROTATION_OVERLAP_SECONDS = env_int("MIRIX_API_KEY_ROTATION_OVERLAP_SECONDS", 24 * 3600)
