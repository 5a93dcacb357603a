from django.apps import AppConfig


class ErasureConfig(AppConfig):
    name = "apps.erasure"
    label = "erasure"
    verbose_name = "Erasure"

    def ready(self) -> None:
        from apps.erasure import erasers

        erasers.register_builtin_erasers()
