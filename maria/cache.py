"""Django's Redis cache, with one Redis client per connection pool instead of one per call.

Django's `RedisCacheClient.get_client` builds a new `redis.Redis` for every operation, and
each build fills its table of some two hundred response callbacks: under py-spy at 100
answers/s that was the larger part of the CPU every rate-limit count and graph-follow mark
cost on the web side (bench/bench_pipeline.py). A `redis.Redis` is safe to share between
threads (each command borrows a connection from the pool), and its pool notices a fork."""

from __future__ import annotations

import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class SharedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shared: dict[int, Any] = {}
        self._lock = threading.Lock()

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)  # type: ignore[attr-defined]
        client = self._shared.get(index)
        if client is None:
            with self._lock:  # the pools dict is filled on first use, as Django's is
                client = self._shared.get(index)
                if client is None:
                    client = self._shared[index] = super().get_client(key, write=write)
        return client


class RedisCache(DjangoRedisCache):
    """settings.CACHES' backend when REDIS_URL is set."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedClientRedisCacheClient
