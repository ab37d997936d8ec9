from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_home_page_links_the_api_docs_and_login() -> None:
    response = Client().get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'href="/api/v1/docs/"' in html
    assert 'href="/accounts/login/"' in html


def test_the_login_page_renders_a_form_with_csrf() -> None:
    response = Client().get("/accounts/login/")
    assert response.status_code == 200
    assert "csrfmiddlewaretoken" in response.content.decode()


def test_login_rotates_the_session_and_logout_ends_it(django_user_model: Any) -> None:
    django_user_model.objects.create_user(username="rita", password="pw-rita-123")
    client = Client()
    client.get("/accounts/login/")
    before = client.session.session_key
    response = client.post("/accounts/login/", {"username": "rita", "password": "pw-rita-123"})
    assert response.status_code == 302
    after = client.session.session_key
    assert after
    assert after != before
    client.post("/accounts/logout/")
    assert "_auth_user_id" not in client.session


def test_a_path_no_api_url_matches_is_a_json_404_and_a_page_elsewhere() -> None:
    # `<int:pk>` does not match "abc": the resolver's 404, which was Django's HTML page.
    api = Client().get("/api/v1/decisions/abc/")
    assert api.status_code == 404
    assert api["Content-Type"] == "application/json"
    assert api.json()["error"]["code"] == "not_found"
    page = Client().get("/no-such-page/")
    assert page.status_code == 404
    assert page["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("debug", [True, False], ids=["DEBUG on", "DEBUG off"])
@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_a_path_no_api_url_matches_is_a_json_404_in_every_mode(
    settings: Any, debug: bool, method: str
) -> None:
    # With DEBUG on this was Django's HTML page listing every URL pattern of the project.
    settings.DEBUG = debug
    for path in ("/api/v1/decisions/abc/", "/api/v1/no-such-thing/", "/api/v2/", "/api/"):
        response = getattr(Client(), method)(path)
        assert response.status_code == 404, path
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"] == {
            "code": "not_found",
            "message": f"no such path {path}",
            "field": None,
        }
        assert b"URLconf" not in response.content


@pytest.mark.parametrize("debug", [True, False], ids=["DEBUG on", "DEBUG off"])
def test_an_api_path_without_its_trailing_slash_says_which_path_is_meant(
    settings: Any, debug: bool
) -> None:
    # A POST there was a 500 with DEBUG on (CommonMiddleware will not redirect a POST) and a
    # 301 that most clients follow as a GET, losing the body, with DEBUG off.
    settings.DEBUG = debug
    response = Client().post(
        "/api/v1/decisions", {"question": "?"}, content_type="application/json"
    )
    assert response.status_code == 404
    assert response.json()["error"]["message"] == (
        "no such path /api/v1/decisions; did you mean /api/v1/decisions/?"
    )
