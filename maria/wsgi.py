"""WSGI entry point: pages and the REST API under a WSGI server (gunicorn, README:
Production). Per request it costs about a third less CPU than the same Django under ASGI,
where each request crosses from the event loop to a thread and back. The live queue's
websockets need ASGI: maria.asgi serves them (and can serve everything, as `make run` does).
"""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")

application = get_wsgi_application()

from maria.startup import freeze_startup_objects  # noqa: E402

freeze_startup_objects()
