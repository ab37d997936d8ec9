from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "graph"
    verbose_name = "The knowledge graph"

    def ready(self) -> None:
        from decisions.signals import graph_gate_wanted
        from graph import tasks  # noqa: F401 - connects its receivers (trail, evidence, graph)
        from graph.queries import answer_graph_gate

        graph_gate_wanted.connect(answer_graph_gate, dispatch_uid="graph.gate_agents_answers")
