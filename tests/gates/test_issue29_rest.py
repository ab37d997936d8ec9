"""Issue 29, the rest (7, 9, 11 and what the last session noticed): the decision page says
what was asked and what was given in words a reviewer reads, the auditor sees the trail's
checkpoints, and the reviewer's pages count, keep and say what happened."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from evidence.demo import FOLDER as DEMO_DOCUMENTS
from tests.decisions.conftest import cite

pytestmark = pytest.mark.django_db

# The README's curl example: the answer names the division head, who approves it.
TRIP = "Who approves a 700,000 yen business trip?"
HEAD = "Any expense over 500,000 yen needs the division head approval in advance."
DEMO_POLICY = DEMO_DOCUMENTS / "expense-policy.md"


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_answer_naming_who_approves_gives_what_a_who_question_asks(
    ingest: Callable[..., Any],
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    person: Callable[..., Any],
) -> None:
    # given the demo's expense policy, one sentence a paragraph, and the README's question
    # answered with the role it names
    from evidence.models import Paragraph

    ingest(DEMO_POLICY.read_text(encoding="utf-8"), title="Expense policy", key="expense")
    approval = Paragraph.objects.get(text__contains="by the division head", current=True)
    set_policy(tau=0.99, refusal_floor=0.0)
    body = submit(
        [{"text": HEAD, "citations": [cite(approval)]}], question=TRIP, answer=HEAD
    ).json()
    # when a reviewer opens its page
    page = login(person("ann", Role.REVIEWER, "G1.U1.P1")).get(f"/queue/decisions/{body['id']}/")
    html = page.content.decode()
    table = html.split('id="asked-given"', 1)[1].split("</table>", 1)[0]
    # then the asked item is the role the question asks for, in the question's own words,
    # and the answer naming the division head gives it
    assert "a person or role (who approves a 700,000 yen business trip)" in table
    assert 'class="ok"' in table
    assert 'class="bad"' not in table
    assert "given by claim 1, which names division head" in table
    assert "not given" not in table
    # and the sentence under it reads as one, not as a list of the question's tokens
    said = html.split("</table>", 1)[1].split("</p>", 1)[0]
    assert "the answer addresses the question: a person or role (who approves" in said
    assert "approves, 700 000 yen" not in html


def test_an_answer_naming_a_role_for_another_act_does_not_give_it() -> None:
    from evidence.questions import addresses

    # a role, but for another act: the question is not answered
    other = addresses(TRIP, ["The division head approves leave requests."])
    assert other.mode == "off_topic"
    assert other.reason == (
        "the question asks for a person or role (who approves a 700,000 yen business trip); "
        "the answer gives division head (about leave, requests)"
    )
    # in Japanese, the role that approves answers 誰が承認しますか
    ja = addresses("出張の申請は誰が承認しますか？", ["出張の申請は部長の承認が必要です。"])
    assert ja.mode == "full", ja
