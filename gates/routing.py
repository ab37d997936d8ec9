from django.urls import path

from gates.consumers import QueueConsumer

websocket_urlpatterns = [
    path("ws/queue/", QueueConsumer.as_asgi()),
]
