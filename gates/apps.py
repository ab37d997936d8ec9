from django.apps import AppConfig


class GatesConfig(AppConfig):
    name = "gates"
    verbose_name = "Gates and reviewer queues"

    def ready(self) -> None:
        # Validation (evidence) grades through the gates app's grader, and the decision
        # pipeline's outbox pushes queue events through its websocket groups: both sit below
        # this app, so it registers itself with them.
        from evidence import validation
        from gates import grading, push  # noqa: F401 - push connects its receiver

        validation.grader_use(grading.final_gate)
