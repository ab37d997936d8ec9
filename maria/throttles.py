"""Rate limits on the API: one per principal (its API token, or the person of a session) and
one per client address for anonymous requests, counted in Django's shared cache; and the
page of the login lockout (django-axes), which answers 429 with Retry-After as they do."""

from __future__ import annotations

import contextlib
import logging
import math
from typing import Any, cast

from axes.helpers import get_cool_off, get_failure_limit
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache import cache as default_cache
from django.core.cache.backends.redis import RedisCache
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from redis.exceptions import RedisError
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

logger = logging.getLogger(__name__)

PERIOD_NAMES = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}


class RateLimited(exceptions.Throttled):
    """429 naming the limit that was hit; `wait` (whole seconds) becomes the `Retry-After`
    header and maria.errors puts the message into the error shape."""

    def __init__(self, *, who: str, limit: int, period: int, wait: int) -> None:
        per = PERIOD_NAMES.get(period, f"{period} seconds")
        unit = "second" if wait == 1 else "seconds"
        super().__init__(
            detail=f"too many requests {who}: at most {limit} a {per}; try again in {wait} {unit}",
            code="throttled",
        )
        self.wait = wait


def client_address(request: HttpRequest | Request) -> str:
    """The client's address as DRF reads it under NUM_PROXIES: REMOTE_ADDR, or behind our
    proxy (DJANGO_BEHIND_PROXY) the entry it appended last to X-Forwarded-For, never one a
    client wrote itself. The address limit and the login lockout both key on it."""
    # get_ident reads only .headers and .META, which a Django request has as well.
    return str(BaseThrottle().get_ident(cast(Request, request)) or "")


def sliding_count(*, current: int, previous: int, elapsed: float, period: int) -> float:
    """Requests in the window of `period` seconds that ends now, estimated from two fixed
    windows as if the previous one's were spread evenly:
    `current + previous * (1 - elapsed / period)`."""
    return current + previous * (1.0 - elapsed / period)


def seconds_until_allowed(
    *, counted: int, previous: int, elapsed: float, limit: int, period: int
) -> float:
    """How long until one more request fits under `limit` (sliding_count of the request
    included), given `counted` requests let through in the current fixed window so far."""
    if counted + 1 <= limit:
        if not previous:
            return 0.0
        # Later in this window: counted + 1 + previous * (1 - t / period) <= limit.
        t = period * (1.0 - (limit - counted - 1) / previous)
        return max(0.0, t - elapsed)
    # In the next window, where this one's `counted` (at least `limit`) are the previous.
    t_next = period * (1.0 - (limit - 1) / counted)
    return period - elapsed + max(0.0, t_next)


class _Limit(SimpleRateThrottle):
    """A sliding window estimated from two fixed-window counters in the cache, counted with
    the cache's atomic `add` and `incr` (DRF's own list of timestamps is read, appended to
    and written back, so concurrent requests overwrite each other's: 300 requests at once
    against 120/min got 213 answers). Holds on Redis and on the local-memory cache alike;
    the rate is read per request and a refusal names the limit."""

    # Who the limit is counted for, in the refusal's words; set with the cache key.
    who = "from this client"
    num_requests: int | None  # parsed from the rate by DRF (not in its stubs)
    duration: int | None

    def _count(self, current: str, previous: str, period: int) -> tuple[int, int]:
        """This window's count with this request in it, and the previous window's. Both
        windows are kept two periods: the next window reads this one as its previous."""
        # DRF's `cache` is Django's proxy of the default cache; the backend itself is wanted.
        cache = caches[DEFAULT_CACHE_ALIAS] if self.cache is default_cache else self.cache
        if isinstance(cache, RedisCache):
            # One round trip, not three: INCR, EXPIRE and GET pipelined (measured: a third of
            # the CPU of the three calls, bench/bench_pipeline.py). EXPIRE after every INCR
            # rather than SET NX first: a key that expired between the two would be counted
            # on without a lifetime. Django's Redis cache stores an integer as its digits, so
            # INCR and a plain GET read it as the cache does.
            keys = [cache.make_and_validate_key(k) for k in (current, previous)]
            client = cast(Any, cache)._cache.get_client(keys[0], write=True)
            pipe = client.pipeline(transaction=False)
            pipe.incr(keys[0])
            pipe.expire(keys[0], 2 * period)
            pipe.get(keys[1])
            counted, _, before = pipe.execute()
            return int(counted), int(before or 0)
        self.cache.add(current, 0, timeout=2 * period)
        try:
            counted = int(self.cache.incr(current))
        except ValueError:  # it expired between the two calls: this request is its first
            counted = 1
        return counted, int(self.cache.get(previous) or 0)

    def get_rate(self) -> str | None:
        # Read each time a request builds its throttles, not copied at import as DRF's
        # THROTTLE_RATES is, so that a changed setting (and override_settings) applies.
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(str(self.scope))
        return None if rate is None else str(rate)

    def allow_request(self, request: Any, view: Any) -> bool:
        limit, period = self.num_requests, self.duration
        if not (limit and period):
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        now = self.timer()
        window = int(now // period)
        elapsed = now - window * period
        current = f"{key}:{window}"
        try:
            counted, previous = self._count(current, f"{key}:{window - 1}", period)
            estimate = sliding_count(
                current=counted, previous=previous, elapsed=elapsed, period=period
            )
            if estimate <= limit:
                return True
            # A refused request takes its count back, so refusals do not lengthen the wait.
            with contextlib.suppress(ValueError):  # expired meanwhile: nothing to take back
                self.cache.decr(current)
        except RedisError:
            # A limit that cannot be counted is not enforced: a cache outage must not take
            # the whole API down with it.
            logger.warning("rate limit %r not checked: the cache is unreachable", self.scope)
            return True
        wait = seconds_until_allowed(
            counted=counted - 1, previous=previous, elapsed=elapsed, limit=limit, period=period
        )
        raise RateLimited(who=self.who, limit=limit, period=period, wait=max(1, math.ceil(wait)))


class TokenRateThrottle(_Limit):
    """Per principal (MARIA_RATE_PER_TOKEN): each API token counts on its own, so one busy
    agent does not use up another's; a session counts per person."""

    scope = "token"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not (request.user and request.user.is_authenticated):
            return None  # the address limit's
        if isinstance(request.auth, models.Model):  # coordinates.ApiToken, by bearer
            self.who, ident = "for this token", f"token-{request.auth.pk}"
        else:
            self.who, ident = "for this user", f"user-{request.user.pk}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


class AddressRateThrottle(_Limit):
    """Per client address (MARIA_RATE_PER_ADDRESS), for requests that carry no login."""

    scope = "address"
    who = "from this address"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return None  # the token limit's
        return self.cache_format % {"scope": self.scope, "ident": client_address(request)}


def lockout_response(
    request: HttpRequest, original_response: Any = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """The page for a login refused by the lockout (AXES_LOCKOUT_CALLABLE): 429, saying for
    how long, with the same in Retry-After."""
    cool_off = get_cool_off(request)
    seconds = math.ceil(cool_off.total_seconds()) if cool_off else 0
    context = {
        "failure_limit": get_failure_limit(request, credentials),
        "minutes": max(1, math.ceil(seconds / 60)),
    }
    response = render(request, "registration/locked_out.html", context, status=429)
    if seconds:
        response["Retry-After"] = str(seconds)
    return response
