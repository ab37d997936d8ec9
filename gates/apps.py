from django.apps import AppConfig


class GatesConfig(AppConfig):
    name = "gates"
    verbose_name = "Gates and reviewer queues"
