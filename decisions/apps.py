from django.apps import AppConfig


class DecisionsConfig(AppConfig):
    name = "decisions"
    verbose_name = "Decisions"

    def ready(self) -> None:
        from decisions import tasks  # noqa: F401 - connects its receivers (decisions.signals)
        from decisions.metrics import DecisionCollector
        from maria.metrics import database_collector_add

        database_collector_add(DecisionCollector())
