"""ASGI entry point: Django for HTTP, Channels for websockets (origin-checked, session auth)."""

from __future__ import annotations

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")

# Django must be set up before anything imports models (the consumers do).
django.setup(set_prefix=False)

from maria.handlers import SyncChainASGIHandler  # noqa: E402

django_asgi_app = SyncChainASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from gates.routing import websocket_urlpatterns  # noqa: E402
from maria.origins import SameOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # A socket whose Origin is missing or not its own (scheme, host and port) nor
        # trusted is refused before any session is read, so another site, or another port
        # of this host, cannot ride a reviewer's cookie (maria.origins).
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

from maria.startup import freeze_startup_objects  # noqa: E402

freeze_startup_objects()
