from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.coordinate import parse
from coordinates.selectors import effective_policy
from evidence import reasons as why
from evidence.models import Paragraph
from evidence.services import bundle_create
from evidence.validation import validate_bundle
from tests.samples import CONTRACT_JA, POLICY_EN

pytestmark = pytest.mark.django_db
ZONE = "G1.U1.P1.Z1"


def paragraph_with(text: str) -> Paragraph:
    return Paragraph.objects.get(text__contains=text, current=True)


def cite(paragraph: Paragraph, **extra: Any) -> dict[str, Any]:
    return {
        "document": paragraph.version.document_id,
        "paragraph": paragraph.number,
        **extra,
    }


def validate(claims: list[dict[str, Any]], zone: str = ZONE) -> Any:
    bundle = bundle_create(zone=parse(zone), claims=claims)
    return validate_bundle(bundle, effective_policy(parse(zone)))


@pytest.fixture
def documents(ingest: Callable[..., Any]) -> None:
    ingest(POLICY_EN, title="Travel policy", key="travel")
    ingest(CONTRACT_JA, title="業務委託契約書", key="contract", kind="contract")


def test_a_faithful_claim_is_supported_with_every_signal_recorded(documents: None) -> None:
    approval = paragraph_with("500,000 yen require")
    report = validate(
        [
            {
                "text": "Expenses over 500,000 yen need prior approval from the division head.",
                "citations": [cite(approval, confidence=0.9)],
            }
        ]
    )
    claim = report.body["claims"][0]
    assert claim["supported"] is True
    item = claim["evidence"][0]
    assert item["kept"] is True
    assert item["submitted_confidence"] == 0.9
    assert set(item["signals"]) == {
        "similarity",
        "coverage",
        "recency",
        "authority",
        "probability",
        "calibrated_probability",
        "question_relevance",
    }
    assert item["signals"]["calibrated_probability"] is None  # no calibration adopted
    assert item["signals"]["question_relevance"] is None  # validated without a question
    # the learned verifier's probability is recorded with the model that gave it
    assert 0.0 <= item["signals"]["probability"] <= 1.0
    assert report.body["verifier"]
    assert 0 < item["confidence"] <= 1
    assert report.sufficiency > 0
    assert report.policy_label
    assert report.policy["tau"] == 0.7


def test_a_wrong_number_is_rejected_with_a_reason(documents: None) -> None:
    approval = paragraph_with("500,000 yen require")
    report = validate(
        [
            {
                "text": "Expenses above 300,000 yen require prior approval by the division head.",
                "citations": [cite(approval, confidence=1.0)],
            }
        ]
    )
    claim = report.body["claims"][0]
    assert claim["supported"] is False
    assert claim["evidence"][0]["vetoed_by"] == "numbers"
    assert any("300,000" in reason for reason in claim["reasons"])
    assert report.sufficiency == 0.0
    assert report.gate == "blocked"
    assert report.mode == "refusal"


def test_a_reversed_japanese_claim_is_rejected(documents: None) -> None:
    fee = paragraph_with("120万円")
    report = validate(
        [{"text": "乙は甲に対し、委託料として月額120万円を支払う。", "citations": [cite(fee)]}]
    )
    claim = report.body["claims"][0]
    assert claim["supported"] is False
    assert report.gate == "blocked"


@pytest.mark.parametrize(
    ("citation", "fragment"),
    [
        ({"document": 99999, "paragraph": 1}, "document 99999 does not exist"),
        ("no-paragraph", "has no paragraph 99"),
        ("no-version", "version 7 does not exist"),
        ("bad-offsets", "outside paragraph"),
    ],
)
def test_fabricated_citations_score_zero_and_say_which_part_is_missing(
    documents: None, citation: Any, fragment: str
) -> None:
    approval = paragraph_with("500,000 yen require")
    if citation == "no-paragraph":
        citation = cite(approval) | {"paragraph": 99}
    elif citation == "no-version":
        citation = cite(approval) | {"version": 7}
    elif citation == "bad-offsets":
        citation = cite(approval) | {"start": 5, "end": 10_000}
    report = validate(
        [
            {
                "text": "Expenses above 500,000 yen require prior approval by the division head.",
                "citations": [citation | {"confidence": 1.0}],
            }
        ]
    )
    item = report.body["claims"][0]["evidence"][0]
    assert item["fabricated"] is True
    assert item["confidence"] == 0
    assert fragment in item["dropped"]
    assert report.gate == "blocked"


def test_a_missing_paragraph_s_reason_counts_every_paragraph_of_the_version(
    documents: None,
) -> None:
    # Only cited paragraphs are read to resolve citations; the count still covers them all.
    approval = paragraph_with("500,000 yen require")
    total = Paragraph.objects.filter(version=approval.version).count()
    report = validate(
        [
            {
                "text": "Expenses above 500,000 yen require prior approval by the division head.",
                "citations": [cite(approval), cite(approval) | {"paragraph": 99}],
            }
        ]
    )
    evidence = report.body["claims"][0]["evidence"]
    assert evidence[0]["fabricated"] is False
    assert f"has no paragraph 99 (it has {total})" in evidence[1]["dropped"]


def test_a_superseded_version_is_marked_and_scores_lower_on_recency(
    documents: None, ingest: Callable[..., Any]
) -> None:
    old = paragraph_with("within 30 days")
    ingest(POLICY_EN.replace("30 days", "30 calendar days"), title="Travel policy", key="travel")
    new = paragraph_with("30 calendar days")
    claim = "Approved expenses are reimbursed within 30 days of submission."
    old_report = validate([{"text": claim, "citations": [cite(old, version=1)]}])
    new_report = validate([{"text": claim, "citations": [cite(new)]}])
    old_item = old_report.body["claims"][0]["evidence"][0]
    new_item = new_report.body["claims"][0]["evidence"][0]
    assert old_item["superseded"] is True
    assert new_item["superseded"] is False
    assert old_item["signals"]["recency"] < new_item["signals"]["recency"]
    assert any("superseded" in r for r in old_item["reasons"])


def test_an_uncited_claim_decides_the_whole_answer(documents: None) -> None:
    approval = paragraph_with("500,000 yen require")
    report = validate(
        [
            {
                "text": "Expenses above 500,000 yen require prior approval by the division head.",
                "citations": [cite(approval)],
            },
            {"text": "Business class flights are always allowed.", "citations": []},
        ]
    )
    assert report.body["claims"][1]["supported"] is False
    assert report.body["claims"][1]["verdict"] == "unverified"
    assert report.sufficiency == 0.0
    # nothing refutes it: "I could not tell" goes to a person, it is not refused
    assert report.gate == "required"


def test_opinions_and_meta_comments_are_held_to_no_evidence(documents: None) -> None:
    approval = paragraph_with("500,000 yen require")
    report = validate(
        [
            {"text": "Here is a summary of the policy.", "citations": []},
            {
                "text": "Expenses above 500,000 yen require prior approval by the division head.",
                "citations": [cite(approval)],
            },
        ]
    )
    first = report.body["claims"][0]
    assert first["kind"] != "factual"
    assert first["supported"] is True
    assert report.body["claims"][1]["sufficiency"] == report.sufficiency


def test_citing_another_zones_document_counts_for_nothing(
    documents: None, ingest: Callable[..., Any]
) -> None:
    ingest(POLICY_EN, title="Legal travel", key="legal-travel", zone="G1.U1.P2.Z1")
    foreign = Paragraph.objects.get(text__contains="500,000 yen require", zone="G1.U1.P2.Z1")
    report = validate(
        [
            {
                "text": "Expenses above 500,000 yen require prior approval by the division head.",
                "citations": [cite(foreign)],
            }
        ]
    )
    item = report.body["claims"][0]["evidence"][0]
    assert "outside the zone" in item["dropped"]
    assert report.gate == "blocked"


def test_two_paragraphs_that_disagree_are_surfaced_as_a_contradiction(
    documents: None, ingest: Callable[..., Any]
) -> None:
    ingest(
        "Expense memo\n\nExpenses above 800,000 yen require prior approval by the division head.\n",
        title="Old memo",
        key="memo",
        kind="memo",
    )
    right = paragraph_with("500,000 yen require")
    wrong = paragraph_with("800,000 yen require")
    report = validate(
        [
            {
                "text": "Expenses above 500,000 yen require prior approval by the division head.",
                "citations": [cite(right), cite(wrong)],
            }
        ]
    )
    claim = report.body["claims"][0]
    assert claim["contradicted"] is True
    assert any(e["vetoed_by"] == "numbers" for e in claim["evidence"])
    [contradiction] = report.body["contradictions"]
    spans = {item["span"] for item in contradiction["items"]}
    assert spans == {right.text, wrong.text}
    assert report.gate not in ("auto", "flagged")  # a person must look


def test_the_report_is_immutable(documents: None) -> None:
    report = validate([{"text": "Here is a summary.", "citations": []}])
    with pytest.raises(ValueError, match="immutable"):
        report.save()


def test_a_whole_paragraph_cited_is_narrowed_to_the_sentence_that_bears_on_the_claim(
    documents: None,
) -> None:
    approval = paragraph_with("500,000 yen require")
    claim = "Expenses over 500,000 yen need prior approval from the division head."
    report = validate([{"text": claim, "citations": [cite(approval)]}])
    item = report.body["claims"][0]["evidence"][0]
    start, end = item["aligned"]
    sentence = approval.text[start:end]
    # the sentence with the claim's number and words, not the whole paragraph
    assert "500,000 yen" in sentence
    assert "division head" in sentence
    assert "team manager" not in sentence  # the paragraph's other sentence
    # and a citation that names its own offsets keeps them
    given = validate(
        [{"text": claim, "citations": [cite(approval, start=0, end=len(approval.text))]}]
    )
    assert given.body["claims"][0]["evidence"][0]["aligned"] is None


def test_a_claim_copied_word_for_word_from_its_paragraph_is_supported(
    ingest: Callable[..., Any],
) -> None:
    # given a one-sentence paragraph whose float32 embedding has a dot product with itself
    # of 1.0000001 (tests/evidence/test_grounding.py), and a claim that copies it
    text = "Expenses above 50,000 yen require prior approval by the division head."
    ingest(text, title="Approvals", key="approvals")
    paragraph = paragraph_with("50,000 yen require")
    assert paragraph.text == text

    # when the claim is validated
    report = validate([{"text": text, "citations": [cite(paragraph)]}])

    # then it is supported, at a similarity of exactly 1 (it failed validation at 1.0000001)
    claim = report.body["claims"][0]
    assert claim["supported"] is True
    assert claim["evidence"][0]["signals"]["similarity"] == 1.0


LONG_SOURCE = "\n\n".join(
    [
        "Expenses above 500,000 yen require prior approval by the division head.",
        *(
            f"Section {n} describes the office plant rota, the kitchen rules and the car park "
            f"for the {n}th floor of the building."
            for n in range(1, 12)
        ),
    ]
)


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("Expenses above 500,000 yen require prior approval by the division head.", "verified"),
        ("Expenses above 300,000 yen require prior approval by the division head.", "refuted"),
    ],
)
def test_a_claim_citing_a_long_source_is_checked_where_it_is_said(
    ingest: Callable[..., Any], claim: str, verdict: str
) -> None:
    # a claim citing all twelve paragraphs of a memo: checked in full against the closest
    ingest(LONG_SOURCE, title="Office memo", key="memo")
    cited = list(Paragraph.objects.filter(current=True).order_by("number"))
    assert len(cited) == 12
    report = validate([{"text": claim, "citations": [cite(p) for p in cited]}])
    found = report.body["claims"][0]
    assert found["verdict"] == verdict
    # the other paragraphs, which share none of its words, are not read in full
    far = [e for e in found["evidence"] if e["reasons"] == [why.NOT_CLOSEST]]
    assert len(far) == 11
