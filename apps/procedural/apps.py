from django.apps import AppConfig


class ProceduralConfig(AppConfig):
    name = "apps.procedural"
    label = "procedural"
    verbose_name = "Verified procedural memory"

    def ready(self) -> None:
        from apps.procedural import erasers
        from apps.procedural.api.hooks import skills_search_extension
        from apps.procedural.suite import executors
        from apps.retrieval.extensions import search_extension_register

        erasers.register_procedural_erasers()
        executors.register_suite_executors()
        search_extension_register(skills_search_extension)
