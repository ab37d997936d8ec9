"""Abuse limits: the API's rate limits per token and per address (429 in the error shape,
with Retry-After), and the login lockout per username and address (django-axes)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any, cast

import pytest
import redis
from axes.models import AccessAttempt
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from coordinates.services import token_issue
from maria.settings import throttle_rate
from maria.throttles import (
    AddressRateThrottle,
    client_address,
    seconds_until_allowed,
    sliding_count,
)
from tests.decisions.helpers import at_once

PUBLIC = "/api/v1/trail/public-key/"  # open to anyone: the address limit's ground
LOGIN = "/accounts/login/"


@pytest.fixture(autouse=True)
def _fresh_counts() -> Iterator[None]:
    """The throttles keep their windows in the cache, which outlives each test's database."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def rates(settings: Any) -> Callable[..., None]:
    """Set some limits small (scope -> DRF rate), keeping the others."""

    def set_rates(**scopes: str | None) -> None:
        rest = settings.REST_FRAMEWORK
        settings.REST_FRAMEWORK = {
            **rest,
            "DEFAULT_THROTTLE_RATES": {**rest["DEFAULT_THROTTLE_RATES"], **scopes},
        }

    return set_rates


# --- the API's rate limits ----------------------------------------------------------------


def test_a_token_over_its_rate_gets_429_in_the_error_shape_and_others_go_on(
    agent_client: Callable[..., APIClient], rates: Callable[..., None]
) -> None:
    # Given two tokens of one agent, and a limit of 3 requests a minute per token
    busy, other = agent_client(), agent_client()
    rates(token="3/min")
    # When the first sends a fourth request within the minute
    assert [busy.get("/api/v1/zones/").status_code for _ in range(3)] == [200, 200, 200]
    refused = busy.get("/api/v1/zones/")
    # Then it is refused, naming the limit and when to come back, in the project's shape
    assert refused.status_code == 429
    # (the window slides: three at once come back a third of a minute after it turns)
    assert 1 <= int(refused["Retry-After"]) <= 80
    error = refused.json()["error"]
    assert error["code"] == "throttled"
    assert error["field"] is None
    assert "for this token: at most 3 a minute" in error["message"]
    assert f"try again in {refused['Retry-After']} second" in error["message"]
    # And the other token, although the same agent's, has its own count
    assert other.get("/api/v1/zones/").status_code == 200


def test_a_session_counts_per_person(
    person: Callable[..., Any], client_for: Callable[[Any], APIClient], rates: Callable[..., None]
) -> None:
    rates(token="2/min")
    rita, sam = client_for(person("rita")), client_for(person("sam"))
    assert [rita.get("/api/v1/zones/").status_code for _ in range(3)] == [200, 200, 429]
    assert (
        "for this user: at most 2 a minute" in rita.get("/api/v1/zones/").json()["error"]["message"]
    )
    assert sam.get("/api/v1/zones/").status_code == 200


def test_an_address_over_its_anonymous_rate_gets_429_and_another_address_goes_on(
    db: None, rates: Callable[..., None]
) -> None:
    rates(address="2/min")
    stranger = APIClient(REMOTE_ADDR="203.0.113.7")
    assert [stranger.get(PUBLIC).status_code for _ in range(2)] == [404, 404]  # no signing key
    refused = stranger.get(PUBLIC)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert "from this address: at most 2 a minute" in refused.json()["error"]["message"]
    assert APIClient(REMOTE_ADDR="203.0.113.8").get(PUBLIC).status_code == 404


def test_a_forged_forwarded_for_does_not_make_a_new_address(
    db: None, rates: Callable[..., None]
) -> None:
    # Not behind our proxy (DJANGO_BEHIND_PROXY unset): X-Forwarded-For is the client's own
    # word, and a new one on every request must not buy a fresh count.
    rates(address="2/min")
    stranger = APIClient(REMOTE_ADDR="203.0.113.7")
    codes = [stranger.get(PUBLIC, HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code for i in range(3)]
    assert codes == [404, 404, 429]


def test_behind_our_proxy_the_address_is_the_one_it_appended(settings: Any) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    request = Client().get("/").wsgi_request
    request.META.update(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 198.51.100.4")
    assert client_address(request) == "198.51.100.4"  # not 6.6.6.6, which the client wrote


def test_a_limit_set_off_refuses_nothing(db: None, rates: Callable[..., None]) -> None:
    rates(address="2/min")
    stranger = APIClient(REMOTE_ADDR="203.0.113.7")
    assert [stranger.get(PUBLIC).status_code for _ in range(3)] == [404, 404, 429]
    # When the operator turns the limit off ("off" in MARIA_RATE_PER_ADDRESS)
    rates(address=None)
    assert {stranger.get(PUBLIC).status_code for _ in range(5)} == {404}


@pytest.fixture
def slow_cache_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shared cache answers over the network: each read takes a moment, in which the other
    requests of a burst read too (as under uvicorn, where 300 at once against 120/min got 213
    answers)."""
    backend = type(caches["default"])  # each thread has its own instance: slow them all
    read = backend.get

    def get_slowly(self: Any, *args: Any, **kwargs: Any) -> Any:
        value = read(self, *args, **kwargs)
        time.sleep(0.02)
        return value

    monkeypatch.setattr(backend, "get", get_slowly)


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_concurrent_requests_gets_no_more_answers_than_the_limit(
    rates: Callable[..., None], slow_cache_reads: None
) -> None:
    # Given a limit of 10 a minute per address (the local cache here, Redis with REDIS_URL)
    rates(address="10/min")
    # When 40 requests from one address arrive at once
    codes = at_once(40, lambda _: APIClient(REMOTE_ADDR="203.0.113.9").get(PUBLIC).status_code)
    # Then exactly 10 are answered and the rest refused
    assert sorted(codes) == [404] * 10 + [429] * 30
    # And the refused ones did not use up the next window: the count is what was let through
    refused = APIClient(REMOTE_ADDR="203.0.113.9").get(PUBLIC)
    assert refused.status_code == 429
    assert "at most 10 a minute" in refused.json()["error"]["message"]


def test_the_window_slides_over_the_previous_one() -> None:
    wait = seconds_until_allowed
    # 60 of 120 last minute and 30 so far, a quarter into this one: 30 + 60 * 3/4
    assert sliding_count(current=30, previous=60, elapsed=15, period=60) == 75
    # Full this minute: the next fits a tenth into the next one, when 1 + 10 * 9/10 <= 10
    assert wait(counted=10, previous=0, elapsed=20, limit=10, period=60) == pytest.approx(46)
    # Room this minute, but last minute's still weigh: 5 + 1 + 10 * (1 - 36/60) = 10
    assert wait(counted=5, previous=10, elapsed=6, limit=10, period=60) == pytest.approx(30)
    # Room now and nothing before: no wait
    assert wait(counted=3, previous=0, elapsed=6, limit=10, period=60) == 0


def test_rates_come_from_the_environment_and_a_malformed_one_stops_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MARIA_RATE_PER_TOKEN", "50/s")
    assert throttle_rate("MARIA_RATE_PER_TOKEN", default="300/s") == "50/s"
    for off in ("off", "", "OFF"):
        monkeypatch.setenv("MARIA_RATE_PER_TOKEN", off)
        assert throttle_rate("MARIA_RATE_PER_TOKEN", default="300/s") is None
    monkeypatch.delenv("MARIA_RATE_PER_TOKEN")
    assert throttle_rate("MARIA_RATE_PER_TOKEN", default="300/s") == "300/s"
    for bad in ("300", "0/s", "many/min", "300/fortnight"):
        monkeypatch.setenv("MARIA_RATE_PER_TOKEN", bad)
        with pytest.raises(ImproperlyConfigured, match="MARIA_RATE_PER_TOKEN"):
            throttle_rate("MARIA_RATE_PER_TOKEN", default="300/s")


# --- the login lockout --------------------------------------------------------------------


def _log_in(client: Client, password: str, username: str = "rita", url: str = LOGIN) -> Any:
    return client.post(url, {"username": username, "password": password})


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.fixture
def rita(person: Callable[..., Any], settings: Any) -> Any:
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    return person("rita")  # password "pw-rita"


def test_login_is_locked_after_n_failures_even_for_the_right_password(rita: Any) -> None:
    # Given three failed logins for rita from one address
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    assert _log_in(attacker, "guess-1").status_code == 200  # the form again, with its error
    assert _log_in(attacker, "guess-2").status_code == 200
    locked = _log_in(attacker, "guess-3")
    # Then the third answers with the lockout page
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert "Try again in 15 minutes" in locked.content.decode()
    assert locked["Retry-After"] == "900"
    # And the right password from there is refused too
    refused = _log_in(attacker, "pw-rita")
    assert refused.status_code == 429
    assert not _logged_in(attacker)


def test_the_lockout_ends_after_the_cool_off(rita: Any, settings: Any) -> None:
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    for i in range(3):
        _log_in(attacker, f"guess-{i}")
    assert _log_in(attacker, "pw-rita").status_code == 429
    # When the cool-off has passed since the last attempt (the clock, moved by hand)
    AccessAttempt.objects.update(
        attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )
    # Then the right password works again
    assert _log_in(attacker, "pw-rita").status_code == 302
    assert _logged_in(attacker)


def test_a_lockout_holds_for_that_address_only(rita: Any) -> None:
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    for i in range(3):
        _log_in(attacker, f"guess-{i}")
    assert _log_in(attacker, "pw-rita").status_code == 429
    # rita, from her own address, is not locked out by someone failing on her name
    herself = Client(REMOTE_ADDR="198.51.100.20")
    assert _log_in(herself, "pw-rita").status_code == 302
    assert _logged_in(herself)


def test_a_successful_login_resets_the_failures(rita: Any) -> None:
    client = Client(REMOTE_ADDR="198.51.100.20")
    assert [_log_in(client, "typo").status_code for _ in range(2)] == [200, 200]
    assert _log_in(client, "pw-rita").status_code == 302
    client.post("/accounts/logout/")
    # Two more slips count from zero: still under the limit of three
    assert [_log_in(client, "typo").status_code for _ in range(2)] == [200, 200]
    assert _log_in(client, "pw-rita").status_code == 302
    assert _logged_in(client)


def test_the_admin_login_is_locked_too_with_a_page_not_an_error(
    person: Callable[..., Any], settings: Any
) -> None:
    settings.AXES_FAILURE_LIMIT = 2
    person("root")
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    assert _log_in(attacker, "x", username="root", url="/admin/login/").status_code == 200
    locked = _log_in(attacker, "y", username="root", url="/admin/login/")
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()


def test_bearer_tokens_are_not_subject_to_the_lockout(rita: Any) -> None:
    # Given rita locked out of the login form from one address
    _, key = token_issue(user=rita, label="laptop")
    for i in range(3):
        _log_in(Client(REMOTE_ADDR="127.0.0.1"), f"guess-{i}")
    assert _log_in(Client(REMOTE_ADDR="127.0.0.1"), "pw-rita").status_code == 429
    # Then her personal token from that same address still works
    api = APIClient(REMOTE_ADDR="127.0.0.1")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert api.get("/api/v1/zones/").status_code == 200


def test_on_redis_a_window_is_counted_in_one_round_trip_and_every_key_expires(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        pytest.skip("the shared cache is Redis only with REDIS_URL")
    # Given the address limit's counter, and every command batch sent to Redis counted
    sent: list[int] = []
    send = redis.connection.Connection.send_packed_command

    def counted(self: Any, command: Any, *args: Any, **kwargs: Any) -> None:
        sent.append(1)
        send(self, command, *args, **kwargs)

    monkeypatch.setattr(redis.connection.Connection, "send_packed_command", counted)
    limit = AddressRateThrottle()
    # When three requests are counted in this window, the previous one having held seven
    backend.set("throttle_address_203.0.113.5:4", 7, timeout=120)
    sent.clear()
    counts = [
        limit._count("throttle_address_203.0.113.5:5", "throttle_address_203.0.113.5:4", 60)
        for _ in range(3)
    ]
    # Then each count is this window's so far and the previous window's, one round trip each
    assert counts == [(1, 7), (2, 7), (3, 7)]
    assert len(sent) == 3
    # And the window's key lives two periods at most, never forever
    shared = cast(Any, backend)._cache
    client = shared.get_client(write=True)
    lifetime = client.ttl(backend.make_and_validate_key("throttle_address_203.0.113.5:5"))
    assert 0 < lifetime <= 120
    # And the cache hands out one Redis client, not a new one per call
    assert client is shared.get_client(write=True)
