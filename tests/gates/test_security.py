"""Untrusted text renders inert; CSP with a nonce; CSRF on writes; sessions rotate and die."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role

pytestmark = pytest.mark.django_db

HOSTILE = (
    '<script>alert(1)</script><img src=x onerror="alert(2)">'
    '<a href="javascript:alert(3)">x</a><div hx-get="/queue/" hx-trigger="load">y</div>'
)


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_hostile_answers_and_questions_render_inert(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one(answer=HOSTILE, question=HOSTILE)
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    auditor = login(person("olga", Role.AUDITOR, "G1"))
    pages = [
        ann.get("/queue/").content.decode(),
        ann.get(f"/queue/decisions/{decision_id}/").content.decode(),
        auditor.get(f"/audit/decisions/{decision_id}/").content.decode(),
        auditor.get("/audit/").content.decode(),
    ]
    for page in pages:
        assert "<script>alert" not in page
        assert "<img src=x" not in page
        assert 'onerror="' not in page
        assert '<a href="javascript:' not in page
        assert '<div hx-get="/queue/"' not in page
        # every <script> on the page is ours: it has a src on this site and the nonce
        for tag in re.findall(r"<script[^>]*>", page):
            assert 'src="/static/' in tag
            assert "nonce=" in tag
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[1]


def test_every_page_sends_a_nonce_csp_without_unsafe_inline(
    person: Callable[..., Any], org: Any
) -> None:
    client = login(person("ann", Role.REVIEWER, "G1"))
    for url in ("/", "/queue/", "/accounts/login/"):
        response = client.get(url)
        policy = response["Content-Security-Policy"]
        assert "unsafe-inline" not in policy
        assert "unsafe-eval" not in policy
        nonce = re.search(r"'nonce-([^']+)'", policy)
        assert nonce is not None
        assert f'nonce="{nonce.group(1)}"' in response.content.decode()
    first = client.get("/queue/")["Content-Security-Policy"]
    assert first != client.get("/queue/")["Content-Security-Policy"]  # fresh per request


def test_writes_need_the_csrf_token(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    user = person("ann", Role.REVIEWER, "G1.U1.P1")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(f"/queue/decisions/{decision_id}/claim/").status_code == 403
    page = client.get(f"/queue/decisions/{decision_id}/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    # htmx sends the same token as a header (hx-headers on <body>)
    assert '"X-CSRFToken": "' in page
    ok = client.post(f"/queue/decisions/{decision_id}/claim/", HTTP_X_CSRFTOKEN=token.group(1))
    assert ok.status_code == 302


def test_login_rotates_the_session_and_logout_ends_it(person: Callable[..., Any], org: Any) -> None:
    person("ann", Role.REVIEWER, "G1")
    client = Client()
    client.get("/accounts/login/")
    client.session.save()
    before = client.session.session_key
    response = client.post("/accounts/login/", {"username": "ann", "password": "pw-ann"})
    assert response.status_code == 302
    after = client.cookies["sessionid"].value
    assert after != before
    assert client.get("/queue/").status_code == 200
    client.post("/accounts/logout/")
    from django.contrib.sessions.models import Session

    assert not Session.objects.filter(session_key=after).exists()
    assert client.get("/queue/").status_code == 302
