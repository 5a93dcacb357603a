from django.apps import AppConfig


class ConsentConfig(AppConfig):
    name = "apps.consent"
    label = "consent"
    verbose_name = "Consent"

    def ready(self) -> None:
        from apps.consent.services import consent_erase
        from apps.erasure.registry import Eraser, eraser_register

        eraser_register(Eraser(name="consent_records", erase=consent_erase, keys=("consent_records",), order=810))
