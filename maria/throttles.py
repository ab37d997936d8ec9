"""Rate limits on the API: one per principal (its API token, or the person of a session) and
one per client address for anonymous requests, counted in Django's shared cache; and the
page of the login lockout (django-axes), which answers 429 with Retry-After as they do."""

from __future__ import annotations

import logging
import math
from typing import Any, cast

from axes.helpers import get_cool_off, get_failure_limit
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


class _Limit(SimpleRateThrottle):
    """DRF's sliding window (one timestamp per request, kept in the cache for the window),
    with the rate read per request and a refusal that names the limit."""

    # Who the limit is counted for, in the refusal's words; set with the cache key.
    who = "from this client"
    num_requests: int | None  # parsed from the rate by DRF (not in its stubs)
    duration: int | None

    def get_rate(self) -> str | None:
        # Read each time a request builds its throttles, not copied at import as DRF's
        # THROTTLE_RATES is, so that a changed setting (and override_settings) applies.
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(str(self.scope))
        return None if rate is None else str(rate)

    def allow_request(self, request: Any, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except RedisError:
            # A limit that cannot be counted is not enforced: a cache outage must not take
            # the whole API down with it.
            logger.warning("rate limit %r not checked: the cache is unreachable", self.scope)
            return True

    def wait(self) -> float:
        """Seconds until the window holds fewer than `num_requests` requests: until the
        oldest one that must leave it does (the history is newest first)."""
        # Both are set whenever a rate is: without one, allow_request returns before this.
        limit, window = self.num_requests or 0, self.duration or 0
        if 0 < limit <= len(self.history):
            return float(self.history[limit - 1] + window - self.now)
        return float(window)

    def throttle_failure(self) -> bool:
        raise RateLimited(
            who=self.who,
            limit=self.num_requests or 0,
            period=self.duration or 0,
            wait=max(1, math.ceil(self.wait())),
        )


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
