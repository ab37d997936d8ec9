from django.apps import AppConfig


class EvidenceConfig(AppConfig):
    name = "evidence"
    verbose_name = "Evidence: documents, bundles, scoring"

    def ready(self) -> None:
        from evidence import tasks  # noqa: F401 - connects its version_stored receiver
