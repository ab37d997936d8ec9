from django.apps import AppConfig


class TrailConfig(AppConfig):
    name = "trail"
    verbose_name = "The trail: the append-only ledger"

    def ready(self) -> None:
        # coordinates sits below the trail and writes its events through it (coordinates.events).
        from coordinates import events as coordinate_events
        from trail import ledger

        coordinate_events.ledger_use(ledger)
