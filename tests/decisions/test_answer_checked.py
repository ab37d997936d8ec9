"""The answer the user reads is the answer that was checked, and it answers the question
(issue 17, points 0-2): the engine cuts the answer text into its claims itself, checks what
no submitted claim says against the cited sources, leaves out of the score what the answer
does not say, measures each item's relevance to the question, and sends an answer to
another question to a person. Each case was released without a person before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from decisions.models import Decision
from evidence.models import Paragraph
from evidence.validation import regrade_stored
from tests.decisions.conftest import cite

pytestmark = pytest.mark.django_db

POLICY = (
    "# Remote work\n\n"
    "Employees may request to work remotely up to 3 days per week.\n\n"
    "Requests for remote work are approved by the line manager."
)
TRAVEL = (
    "# Travel\n\n"
    "Business travel expenses above 500,000 yen require prior approval by the division head."
)
DAYS = "Employees may request to work remotely up to 3 days per week."
APPROVER = "Business travel expenses above 500,000 yen require prior approval by the division head."
ASKED = "How many days per week may employees work remotely?"
RELEASED = ("auto", "flagged")


@pytest.fixture
def documents(ingest: Callable[..., Any]) -> dict[str, Paragraph]:
    ingest(POLICY, title="Remote work policy", key="remote")
    ingest(TRAVEL, title="Travel policy", key="travel")
    return {
        "days": Paragraph.objects.get(text=DAYS),
        "approver": Paragraph.objects.get(text=APPROVER),
    }


def _report(done: Any) -> Any:
    return Decision.objects.get(pk=done.json()["id"]).report


def _answer(report: Any) -> list[dict[str, Any]]:
    return list(report.body["answer"]["claims"])


def test_the_control_an_answer_that_is_its_claim_and_answers_the_question_is_released(
    documents: dict[str, Paragraph], submit: Callable[..., Any]
) -> None:
    done = submit([{"text": DAYS, "citations": [cite(documents["days"])]}], question=ASKED)
    report = _report(done)
    assert report.gate == "auto"
    assert report.mode == "full"
    (said,) = _answer(report)
    assert (said["covered"], said["claim"]) == ("claim", 0)
    assert report.body["addressing"]["mode"] == "full"
    assert report.body["at_least"] == {"gate": "auto", "reasons": []}


@pytest.mark.parametrize(
    ("answer", "unchecked"),
    [
        (
            "Employees may work remotely 5 days per week; formally, employees may request to "
            "work remotely up to 3 days per week.",
            "Employees may work remotely 5 days per week",
        ),
        (
            "Employees may request to work remotely up to 3 days per week. The company also "
            "pays for home internet.",
            "The company also pays for home internet",
        ),
        (
            "Employees may request to work remotely up to 3 days per week. Requests for remote "
            "work are approved by HR.",
            "Requests for remote work are approved by HR",
        ),
    ],
    ids=["a wrong number beside the claim", "an added promise", "an added actor"],
)
def test_what_the_answer_says_beyond_its_claims_is_checked_against_the_sources(
    documents: dict[str, Paragraph], submit: Callable[..., Any], answer: str, unchecked: str
) -> None:
    # the claim cites the days paragraph; the answer cites the approver's paragraph too
    manager = Paragraph.objects.get(text__startswith="Requests for remote work")
    done = submit(
        [{"text": DAYS, "citations": [cite(documents["days"]), cite(manager)]}],
        question=ASKED,
        answer=answer,
    )
    report = _report(done)
    assert report.gate not in RELEASED
    assert done.json()["state"] != "completed"
    # the sentence is marked on the answer, checked by the engine itself, and unsupported
    by_text = {c["text"]: c for c in _answer(report)}
    assert by_text[unchecked]["covered"] == "sources"
    added = report.body["claims"][by_text[unchecked]["claim"]]
    assert added["text"] == unchecked
    assert added["supported"] is False
    assert f"the answer says {unchecked}; no cited evidence says so" in added["reasons"]
    assert added["answer_span"] == [
        answer.index(unchecked),
        answer.index(unchecked) + len(unchecked),
    ]
    # it decides the answer's sufficiency, as any unsupported claim does (min over claims)
    assert report.sufficiency == pytest.approx(min(report.body["score"]["claim_sufficiency"]))
    assert added["sufficiency"] == pytest.approx(report.sufficiency)


def test_an_answer_sentence_the_sources_say_is_supported_though_no_claim_lists_it(
    documents: dict[str, Paragraph], submit: Callable[..., Any]
) -> None:
    manager = "Requests for remote work are approved by the line manager."
    answer = f"{DAYS} {manager}"
    cited = [cite(documents["days"]), cite(Paragraph.objects.get(text=manager))]
    done = submit(
        [{"text": DAYS, "citations": cited}],
        question=ASKED,
        answer=answer,
    )
    report = _report(done)
    added = [c for c in report.body["claims"] if "answer_span" in c]
    assert [c["text"] for c in added] == [
        "Requests for remote work are approved by the line manager"
    ]
    assert added[0]["supported"] is True
    assert not any("no cited evidence" in r for r in added[0]["reasons"])
    # its evidence is the paragraph that says it, not every source the answer cites
    assert [e["span"] for e in added[0]["evidence"]] == [manager]


def test_a_submitted_claim_the_answer_does_not_say_is_reported_and_not_scored(
    documents: dict[str, Paragraph], submit: Callable[..., Any]
) -> None:
    alone = _report(
        submit([{"text": DAYS, "citations": [cite(documents["days"])]}], question=ASKED)
    )
    padded = _report(
        submit(
            [
                {"text": DAYS, "citations": [cite(documents["days"])]},
                {"text": APPROVER, "citations": [cite(documents["approver"])]},
            ],
            question=ASKED,
            answer=DAYS,
            key="padded",
        )
    )
    assert padded.body["answer"]["not_in_answer"] == [1]
    extra = padded.body["claims"][1]
    assert extra["in_answer"] is False
    assert extra["sufficiency"] is None
    assert any("not part of the answer" in r for r in extra["reasons"])
    # the well-cited claim beside the answer raises neither its score nor its completeness
    assert padded.sufficiency == pytest.approx(alone.sufficiency)
    assert padded.completeness == pytest.approx(alone.completeness)
    assert padded.body["score"]["claim_sufficiency"] == pytest.approx(
        alone.body["score"]["claim_sufficiency"]
    )


def test_a_true_well_cited_claim_for_another_question_goes_to_a_person(
    documents: dict[str, Paragraph], submit: Callable[..., Any]
) -> None:
    claims = [{"text": DAYS, "citations": [cite(documents["days"])]}]
    control = _report(submit(claims, question=ASKED))
    other = submit(
        claims, question="What is the nightly hotel limit for business trips to Tokyo?", key="b"
    )
    report = _report(other)
    assert control.gate == "auto"
    assert report.gate in ("required", "blocked")
    assert other.json()["state"] == "approval_required" or report.gate == "blocked"
    addressing = report.body["addressing"]
    assert addressing["mode"] == "off_topic"
    assert addressing["reason"].startswith(
        "the question asks for a number (What is the nightly hotel limit"
    )
    assert "the answer gives 3 days" in addressing["reason"]
    # r_j: the span that answers is fully relevant; for the other question it is not
    (item,) = control.body["claims"][0]["evidence"]
    (off,) = report.body["claims"][0]["evidence"]
    assert item["signals"]["question_relevance"] == pytest.approx(1.0)
    assert off["signals"]["question_relevance"] < 0.5
    assert off["relevance"] == pytest.approx(off["signals"]["question_relevance"])
    assert report.sufficiency < control.sufficiency


def test_a_two_part_question_answered_in_part_is_partial_and_names_the_missing_part(
    documents: dict[str, Paragraph], submit: Callable[..., Any]
) -> None:
    done = submit(
        [{"text": DAYS, "citations": [cite(documents["days"])]}],
        question="How many days per week may employees work remotely, and who pays for "
        "home internet?",
    )
    report = _report(done)
    assert report.mode == "partial"
    assert report.gate != "auto"
    addressing = report.body["addressing"]
    assert addressing["mode"] == "partial"
    assert [p["answered"] for p in addressing["parts"]] == [True, False]
    assert addressing["reason"].startswith("the answer gives")
    assert " but not " in addressing["reason"]
    assert "internet" in addressing["reason"].split(" but not ")[1]


def test_a_japanese_answer_to_another_question_on_the_same_subject_goes_to_a_person(
    ingest: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    ingest(
        "# 出張\n\n宿泊費の上限は1泊15,000円とする。\n\n出張の申請は部長が承認する。",
        title="出張規程",
        key="travel-ja",
    )
    limit = Paragraph.objects.get(text="宿泊費の上限は1泊15,000円とする。")
    claims = [{"text": "宿泊費の上限は1泊15,000円とする。", "citations": [cite(limit)]}]
    asked = _report(submit(claims, question="出張の宿泊費の上限はいくらですか？"))
    other = _report(submit(claims, question="出張の申請は誰が承認しますか？", key="ja-other"))
    assert asked.gate in RELEASED
    assert other.gate in ("required", "blocked")
    assert other.body["addressing"]["mode"] == "off_topic"


def test_the_what_if_replays_what_the_findings_asked_of_the_gate(
    documents: dict[str, Paragraph], submit: Callable[..., Any]
) -> None:
    report = _report(
        submit(
            [{"text": DAYS, "citations": [cite(documents["days"])]}],
            question="What is the nightly hotel limit for business trips to Tokyo?",
        )
    )
    assert regrade_stored(report.body, report.policy, None) == report.gate
    # the threshold advice and the what-if read the same finding from the stored report
    from gates.selectors import stored_scores

    (score,) = stored_scores(Decision.objects.filter(report=report)).values()
    assert score.at_least == report.body["at_least"]["gate"]


def test_the_decision_page_marks_the_answer_and_shows_what_was_asked_beside_what_was_given(
    documents: dict[str, Paragraph],
    submit: Callable[..., Any],
    person: Callable[..., Any],
    client: Any,
) -> None:
    from coordinates.models import Role

    answer = f"{DAYS} The company also pays for home internet."
    done = submit(
        [{"text": DAYS, "citations": [cite(documents["days"])]}],
        question="How many days per week may employees work remotely, and who approves it?",
        answer=answer,
    )
    client.force_login(person("ann", Role.REVIEWER, "G1.U1.P1.Z1"))
    page = client.get(f"/queue/decisions/{done.json()['id']}/").content.decode()
    # the answer as the user read it, each claim marked with its check
    assert '<span class="said said-verified"' in page
    assert '<span class="said said-unverified"' in page
    assert "The company also pays for home internet<sup>2</sup>" in page
    # what the question asks, part by part, beside what the answer gives
    assert 'id="asked-given"' in page
    assert "given by claim 1" in page
    assert "not given" in page


REACHABLE = "Employees who work remotely must be reachable during core hours."
ALLOWED = "Remote work is allowed up to 3 days per week for each employee."


def test_an_answer_beside_the_sentence_of_its_paragraph_that_answers_goes_to_a_person(
    ingest: Callable[..., Any],
    submit: Callable[..., Any],
    person: Callable[..., Any],
    client: Any,
) -> None:
    """The cited paragraph answers the question in a sentence the answer does not state:
    the answer shares the question's subject but not what it asks. Citing the sentence
    alone, nothing shows the answer missed (the control)."""
    ingest(f"# Remote work\n\n{REACHABLE} {ALLOWED}", title="Remote rules", key="rules")
    ingest(f"# Hours\n\n{REACHABLE}", title="Core hours", key="hours")
    both = Paragraph.objects.get(text=f"{REACHABLE} {ALLOWED}")
    alone = Paragraph.objects.get(text=REACHABLE)

    done = submit([{"text": REACHABLE, "citations": [cite(both)]}], question=ASKED, key="a")
    beside = _report(done)
    answering = _report(
        submit([{"text": ALLOWED, "citations": [cite(both)]}], question=ASKED, key="b")
    )
    control = _report(
        submit([{"text": REACHABLE, "citations": [cite(alone)]}], question=ASKED, key="c")
    )

    assert beside.gate in ("required", "blocked")
    assert beside.body["addressing"]["mode"] == "off_topic"
    assert answering.gate in RELEASED
    assert answering.body["addressing"]["mode"] == "full"
    assert control.body["addressing"]["mode"] == "full"
    # The reviewer is shown where the cited evidence answers it.
    (part,) = beside.body["addressing"]["parts"]
    assert part["answered_elsewhere"] == ALLOWED
    assert any(ALLOWED in r and "leaves out" in r for r in beside.body["at_least"]["reasons"])
    assert answering.body["addressing"]["parts"][0]["answered_elsewhere"] is None
    from coordinates.models import Role

    client.force_login(person("ann", Role.REVIEWER, "G1.U1.P1.Z1"))
    page = client.get(f"/queue/decisions/{done.json()['id']}/").content.decode()
    table = page[page.index('id="asked-given"') : page.index("</table>", page.index("asked-given"))]
    assert "the cited evidence says it here:" in table
    assert f'<q class="untrusted">{ALLOWED}</q>' in table


def test_a_span_cited_by_its_offsets_leaves_the_rest_of_its_paragraph_as_the_evidence_around(
    ingest: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    ingest(f"# Remote work\n\n{REACHABLE} {ALLOWED}", title="Remote rules", key="rules")
    both = Paragraph.objects.get(text=f"{REACHABLE} {ALLOWED}")
    later = len(REACHABLE) + 1
    first = cite(both, start=0, end=len(REACHABLE))
    second = cite(both, start=later, end=later + len(ALLOWED))

    beside = _report(submit([{"text": REACHABLE, "citations": [first]}], question=ASKED, key="a"))
    answering = _report(submit([{"text": ALLOWED, "citations": [second]}], question=ASKED, key="b"))

    assert beside.body["addressing"]["parts"][0]["answered_elsewhere"] == ALLOWED
    assert beside.gate in ("required", "blocked")
    assert answering.body["addressing"]["mode"] == "full"
    assert answering.body["addressing"]["parts"][0]["answered_elsewhere"] is None
