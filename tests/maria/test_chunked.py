"""A chunked request body without a Content-Length is refused with 411, not read as empty."""

from __future__ import annotations

from django.http import HttpResponse
from django.test import RequestFactory

from maria.bodies import LengthRequiredMiddleware


def _through(meta: dict[str, str]) -> int:
    request = RequestFactory().post(
        "/api/v1/decisions/", data=b"{}", content_type="application/json"
    )
    request.META.pop("CONTENT_LENGTH", None)
    request.META.update(meta)
    return LengthRequiredMiddleware(lambda r: HttpResponse(status=201))(request).status_code


def test_a_chunked_body_without_its_length_is_a_411() -> None:
    assert _through({"HTTP_TRANSFER_ENCODING": "chunked"}) == 411


def test_a_body_with_its_length_goes_through() -> None:
    assert _through({"CONTENT_LENGTH": "2"}) == 201
    assert _through({"HTTP_TRANSFER_ENCODING": "chunked", "CONTENT_LENGTH": "2"}) == 201
