"""Refusals reach the user in their language: the API answers a client that asks for Japanese
(Accept-Language or the language cookie) with the catalogue's Japanese, and everyone else
with the English the rest of the suite asserts; field paths stay identifiers in both."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.utils import translation
from rest_framework.test import APIClient

from coordinates.models import Role
from tests.decisions.conftest import (  # noqa: F401  (fixtures the tests below use)
    GOOD,
    ZONE,
    cite,
    policy_doc,
    set_policy,
    submit,
)

pytestmark = pytest.mark.django_db

JAPANESE: dict[str, Any] = {"HTTP_ACCEPT_LANGUAGE": "ja"}


@pytest.fixture(autouse=True)
def _language_restored() -> Iterator[None]:
    """LocaleMiddleware leaves the request's language active in the test's thread."""
    before = translation.get_language()
    yield
    translation.activate(before or settings.LANGUAGE_CODE)


def japanese(msgid: str) -> str:
    """The compiled catalogue's Japanese for `msgid`. A message without one fails the test:
    a Japanese reader would get English (tests/maria/test_catalogue.py keeps the .mo in step
    with the .po)."""
    with translation.override("ja"):
        text = translation.gettext(msgid)
    assert text != msgid, f"locale/ja has no compiled translation of {msgid!r}"
    return text


@pytest.fixture
def queued(
    policy_doc: Any,  # noqa: F811  (the fixtures imported above)
    set_policy: Callable[..., Any],  # noqa: F811
    submit: Callable[..., Any],  # noqa: F811
) -> int:
    """A decision waiting in the compliance zone's queue."""
    set_policy(tau=0.99, refusal_floor=0.05)
    body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    assert body["state"] == "approval_required"
    return int(body["id"])


@pytest.fixture
def ann(person: Callable[..., Any], client_for: Callable[[Any], APIClient]) -> APIClient:
    return client_for(person("ann", Role.REVIEWER, "G1.U1.P1"))


@pytest.fixture
def ben(person: Callable[..., Any], client_for: Callable[[Any], APIClient]) -> APIClient:
    return client_for(person("ben", Role.REVIEWER, ZONE))


def reject(client: APIClient, decision_id: int, reason: str, **headers: Any) -> Any:
    body = {"reason": reason, "claims": [{"index": 0, "supported": False}]}
    return client.post(f"/api/v1/decisions/{decision_id}/reject/", body, format="json", **headers)


def test_a_rejection_without_a_reason_is_refused_in_english_by_default(
    queued: int, ann: APIClient
) -> None:
    response = reject(ann, queued, "  ")
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid",
        "message": "a reason is required",
        "field": "reason",
    }


def test_a_rejection_without_a_reason_is_refused_in_japanese_for_a_japanese_reviewer(
    queued: int, ann: APIClient
) -> None:
    wanted = japanese("a reason is required")
    response = reject(ann, queued, "  ", **JAPANESE)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"] == wanted != "a reason is required"
    assert error["field"] == "reason"  # an identifier: never translated
    # the next request without the header is English again
    assert reject(ann, queued, "").json()["error"]["message"] == "a reason is required"


def test_a_decision_claimed_by_someone_else_names_the_holder_in_either_language(
    queued: int, ann: APIClient, ben: APIClient
) -> None:
    assert ann.post(f"/api/v1/decisions/{queued}/claim/", {}, format="json").status_code == 200

    english = ben.post(f"/api/v1/decisions/{queued}/approve/", {}, format="json")
    assert english.status_code == 409
    assert english.json()["error"]["message"] == f"decision {queued} is claimed by ann"

    wanted = japanese("decision %(id)s is claimed by %(user)s") % {"id": queued, "user": "ann"}
    response = ben.post(f"/api/v1/decisions/{queued}/approve/", {}, format="json", **JAPANESE)
    assert response.status_code == 409
    assert response.json()["error"]["message"] == wanted
    assert wanted != f"decision {queued} is claimed by ann"
    assert "ann" in wanted
    assert str(queued) in wanted


def test_a_policy_change_outside_ones_role_is_forbidden_in_the_cookies_language(
    org: Any, ben: APIClient
) -> None:
    url = f"/api/v1/zones/{ZONE}/policy/"
    body = {"tau": 0.8, "reason": "tighter"}
    english = ben.put(url, body, format="json")
    assert english.status_code == 403
    assert english.json()["error"]["message"] == (
        f"only a zone admin of {ZONE} or above may change its policy"
    )

    wanted = japanese("only a zone admin of %(zone)s or above may change its policy") % {
        "zone": ZONE
    }
    ben.cookies[settings.LANGUAGE_COOKIE_NAME] = "ja"
    response = ben.put(url, body, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["message"] == wanted
    assert ZONE in wanted  # the coordinate is kept as it is


def test_a_graph_import_refusal_is_japanese_for_a_japanese_admin(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    # Given a zone admin whose client asks for Japanese
    admin = client_for(person("zed", Role.ZONE_ADMIN, ZONE))
    url = f"/api/v1/graph/import/?zone={ZONE}"
    # When an import row gives a weight that is no number, and a key too long to keep
    bad_number = '{"source": "a", "target": "b", "type": "depends_on", "weight": [1]}'
    long_key = '{"source": "%s", "target": "b", "type": "depends_on"}' % ("k" * 201)
    answers = [
        admin.post(url, data=body, content_type="application/x-ndjson", **JAPANESE).json()
        for body in (bad_number, long_key)
    ]
    # Then each refusal is said in Japanese, the field names kept as sent
    assert [a["error"]["message"] for a in answers] == [
        "1 行目: weight は数値でなければなりません",
        "1 行目: source が 200 文字を超えています",
    ]
