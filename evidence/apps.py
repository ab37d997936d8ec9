from django.apps import AppConfig


class EvidenceConfig(AppConfig):
    name = "evidence"
    verbose_name = "Evidence: documents, bundles, scoring"

    def ready(self) -> None:
        from evidence import (
            tasks,  # noqa: F401 - connects its version_stored receiver
            verifier,
        )

        # Read once per process, at start-up: a missing or corrupt model file stops the
        # start with a message naming the file, never a silent fallback.
        verifier.model()
