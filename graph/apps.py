from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "graph"
    verbose_name = "The knowledge graph"

    def ready(self) -> None:
        from graph import tasks  # noqa: F401 - connects its receivers (trail, evidence, graph)
