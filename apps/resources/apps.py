from django.apps import AppConfig


class ResourcesConfig(AppConfig):
    name = "apps.resources"
    label = "resources"
    verbose_name = "Resources"
