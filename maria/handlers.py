"""Django's ASGI handler with every request's middleware and view run in one thread hop.

Django under ASGI adapts each middleware to async: a `MiddlewareMixin` middleware then costs
two hand-offs between the event loop and the sync thread per request, and a sync-only one
more. With ten of them and sync views only (this project has no async view), the event loop
spent about three times the view's own CPU on those hand-offs (py-spy, bench_pipeline.py).
Here the chain is built synchronously, as under WSGI, and each request enters it once, in
the thread Django would have used for the view (thread-sensitive). Websockets (Channels) are
routed apart and keep their async path.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase


class SyncChainASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)
