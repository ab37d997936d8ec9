from django.apps import AppConfig


class CoordinatesConfig(AppConfig):
    name = "coordinates"
    verbose_name = "Coordinates, zones and roles"
