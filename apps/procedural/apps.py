from django.apps import AppConfig


class ProceduralConfig(AppConfig):
    name = "apps.procedural"
    label = "procedural"
    verbose_name = "Verified procedural memory"

    def ready(self) -> None:
        from apps.procedural import erasers
        from apps.procedural.suite import executors

        erasers.register_procedural_erasers()
        executors.register_suite_executors()
