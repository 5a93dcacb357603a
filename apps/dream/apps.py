from django.apps import AppConfig


class DreamConfig(AppConfig):
    name = "apps.dream"
    label = "dream"
    verbose_name = "AutoDream"

    def ready(self) -> None:
        from apps.dream.services import register_dream_eraser

        register_dream_eraser()
