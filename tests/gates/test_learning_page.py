"""The learned-models page (`/zones/{coordinate}/learned/`): the confidence weights fitted on
the zone's verdicts beside the current ones with held-back figures, adopted and rolled back
from the page; and the requery model of seed 000 §8.1, fitted on the zone's refusals as the
KPI counts requeries."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from django.test import Client

from coordinates.models import Role, Zone
from coordinates.selectors import effective_policy
from evidence import weights_fit
from gates import requery_model
from tests.decisions.conftest import GOOD, WRONG_NUMBER, ZONE, cite
from tests.decisions.test_confidence_weights import verdicts  # noqa: F401  (a fixture)

OTHER = "G1.U1.P1.Z2"
PAGE = f"/zones/{ZONE}/learned/"
START = datetime(2026, 11, 10, 9, tzinfo=UTC)

pytestmark = pytest.mark.django_db


def _browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_page_shows_learned_weights_with_held_back_figures_and_adopts_them(
    org: Any,
    verdicts: Any,  # noqa: F811  (the fixture imported above)
    person: Callable[..., Any],
) -> None:
    verdicts(400)
    admin = _browser(person("ada", Role.ZONE_ADMIN, ZONE))
    page = admin.get(PAGE)
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="weights-table"' in text
    assert 'data-figure="brier"' in text
    assert "On 100 held-back verdicts (fitted on 300)" in text
    fit = page.context["proposal"].fit
    # adopting from the page makes the learned weights the zone's
    response = admin.post(
        f"{PAGE}weights/adopt/",
        {"reason": "reviewers weigh coverage", "fingerprint": page.context["proposal"].fingerprint},
    )
    assert response.status_code == 302
    values = effective_policy(Zone.objects.get(coordinate=ZONE).coord).values
    assert (values.w1, values.w2, values.w3, values.w4) == fit.weights
    # a blank reason is shown on the page, naming the field
    blank = admin.post(f"{PAGE}weights/rollback/", {"reason": " ", "version": "1"})
    assert blank.status_code == 400
    assert 'data-field="reason"' in blank.content.decode()


def test_too_few_verdicts_and_refusals_say_why_on_the_page_in_japanese(
    org: Any, person: Callable[..., Any]
) -> None:
    admin = _browser(person("ada", Role.ZONE_ADMIN, ZONE))
    text = admin.get(PAGE, HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert 'id="weights-why-not" data-verdicts="0"' in text
    assert 'id="requery-why-not" data-refusals="0"' in text
    assert "too few" not in text  # said in Japanese
    assert str(weights_fit.MIN_WEIGHT_VERDICTS) in text


def test_another_zones_admin_and_a_reviewer_get_404(org: Any, person: Callable[..., Any]) -> None:
    for outsider in (person("sam", Role.ZONE_ADMIN, OTHER), person("rita", Role.REVIEWER, ZONE)):
        client = _browser(outsider)
        assert client.get(PAGE).status_code == 404
        assert client.post(f"{PAGE}weights/adopt/", {"reason": "x"}).status_code == 404
    auditor = _browser(person("otto", Role.AUDITOR, ZONE))
    assert auditor.get(PAGE).status_code == 200
    assert 'id="weights-rollback"' not in auditor.get(PAGE).content.decode()


# --- the requery model -------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    ticking = Clock()
    with mock.patch("django.utils.timezone.now", ticking):
        yield ticking


def test_refusals_are_labelled_as_the_kpi_counts_requeries(
    org: Any, clock: Clock, policy_doc: Any, submit: Callable[..., Any]
) -> None:
    def answer(minutes: int, text: str) -> None:
        clock.now = START + timedelta(minutes=minutes)
        submit([{"text": text, "citations": [cite(policy_doc)]}])

    answer(0, WRONG_NUMBER)  # refused, and the agent asks again 4 minutes later: a requery
    answer(4, GOOD)
    answer(60, WRONG_NUMBER)  # refused; the next query 20 minutes later is a new question
    answer(80, GOOD)
    answer(120, WRONG_NUMBER)  # refused 2 minutes ago: its requery minutes are not over
    clock.now = START + timedelta(minutes=122)
    examples = requery_model.requery_examples(Zone.objects.get(coordinate=ZONE))
    assert [again for _, again in examples] == [True, False]
    assert all(0.0 <= s <= 1.0 for s, _ in examples)
    # and the sibling zone has none of them
    assert requery_model.requery_examples(Zone.objects.get(coordinate=OTHER)) == []
    model = requery_model.requery_model(Zone.objects.get(coordinate=ZONE))
    assert model.fit is None
    assert model.refusals == 2
    fitted = requery_model.requery_model(Zone.objects.get(coordinate=ZONE), minimum=2)
    assert fitted.fit is not None
    assert fitted.fit.fitted_on == 1
    assert fitted.fit.model.n == 1


def test_the_requery_model_api_reads_like_the_page_and_only_for_the_zones_readers(
    org: Any,
    clock: Clock,
    policy_doc: Any,
    submit: Callable[..., Any],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    clock.now = START
    submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}])
    clock.now = START + timedelta(hours=1)
    url = f"/api/v1/zones/{ZONE}/requery-model/"
    body = client_for(person("otto", Role.AUDITOR, ZONE)).get(url).json()
    assert body["refusals"] == 1
    assert body["fit"] is None
    assert f"needs {weights_fit.MIN_REFUSALS}" in body["why_not"]
    assert body["requery_seconds"] == 300.0
    stranger = client_for(person("sam", Role.ZONE_ADMIN, OTHER)).get(url)
    assert stranger.status_code == 404
    assert stranger.json()["error"]["field"] == "coordinate"
