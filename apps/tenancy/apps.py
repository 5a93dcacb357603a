from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "apps.tenancy"
    label = "tenancy"
    verbose_name = "Tenancy"

    def ready(self) -> None:
        from apps.tenancy import schema  # noqa: F401  (registers the OpenAPI auth extension)
