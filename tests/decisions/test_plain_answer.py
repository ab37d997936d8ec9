"""`POST /api/v1/decisions/` with a plain answer and its sources: the engine splits the answer
into claims, honours its `[n]` markers, aligns the rest and validates as usual (issue 15
point 2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from decisions.models import Decision
from tests.decisions.conftest import AGENT, ZONE
from tests.samples import CONTRACT_JA, POLICY_EN

APPROVAL = "Expenses above 500,000 yen require prior approval by the division head."
REIMBURSED = "Approved expenses are reimbursed within 30 days of submission."


@pytest.fixture
def travel(ingest: Callable[..., Any]) -> dict[str, Any]:
    """The travel policy's approval and reimbursement paragraphs, as sources."""
    from evidence.models import Paragraph

    ingest(POLICY_EN, title="Travel policy", key="travel")
    approval = Paragraph.objects.get(text__contains="500,000 yen require", current=True)
    reimbursed = Paragraph.objects.get(text__contains="reimbursed within", current=True)
    return {"approval": approval, "reimbursed": reimbursed}


@pytest.fixture
def post(
    agent_client: Callable[[str], Any], django_capture_on_commit_callbacks: Any
) -> Callable[..., Any]:
    """POST a body as the agent, running validation after commit."""
    client = agent_client(AGENT)

    def run(body: dict[str, Any], *, key: str | None = None) -> Any:
        headers: dict[str, Any] = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
        with django_capture_on_commit_callbacks(execute=True):
            return client.post("/api/v1/decisions/", body, format="json", **headers)

    run.client = client  # type: ignore[attr-defined]
    return run


def plain(answer: str, *sources: Any, **extra: Any) -> dict[str, Any]:
    return {
        "question": "How are large travel expenses handled?",
        "answer": answer,
        "zone": ZONE,
        "agent": AGENT,
        "sources": [
            s if isinstance(s, dict) else {"document": s.version.document_id, "paragraph": s.number}
            for s in sources
        ],
        **extra,
    }


def stored(response: Any) -> list[dict[str, Any]]:
    """The claims of the decision's stored bundle."""
    assert response.status_code in (200, 201), response.content
    return list(Decision.objects.get(pk=response.json()["id"]).bundle.claims)


def aligned_text(paragraph: Any, citation: dict[str, Any]) -> str:
    span = citation["alignment"]
    return str(paragraph.text[span["start"] : span["end"]])


def test_markers_cite_the_sources_they_name_and_say_where_each_claim_aligned(
    travel: dict[str, Any], post: Callable[..., Any]
) -> None:
    # Given an answer whose two sentences name their sources, in the other order
    answer = f"{REIMBURSED} [2] {APPROVAL} [1]"
    # When the agent sends it as a plain answer
    response = post(plain(answer, travel["approval"], travel["reimbursed"]))
    # Then the engine found two claims, where they stand in the answer
    first, second = claims = stored(response)
    assert [answer[c["answer_start"] : c["answer_end"]] for c in claims] == [
        REIMBURSED.rstrip("."),
        APPROVAL.rstrip("."),
    ]
    assert [c["markers"] for c in claims] == [[2], [1]]
    # And each cites the source its marker names, pinned to the current version, with the
    # sentence of the paragraph it aligned to
    (cites_second,) = first["citations"]
    assert (cites_second["source"], cites_second["via"]) == (2, "marker")
    assert cites_second["paragraph"] == travel["reimbursed"].number
    assert cites_second["version"] == 1
    assert aligned_text(travel["reimbursed"], cites_second) == REIMBURSED
    (cites_first,) = second["citations"]
    assert (cites_first["source"], cites_first["via"]) == (1, "marker")
    assert aligned_text(travel["approval"], cites_first) == APPROVAL
    # And it was validated as usual: both claims hold, and the report says where they came
    decision = post.client.get(f"/api/v1/decisions/{response.json()['id']}/").json()  # type: ignore[attr-defined]
    assert decision["state"] != "proposed"
    assert [c["supported"] for c in decision["claims"]] == [True, True]
    cited = decision["claims"][1]["evidence"][0]["cited"]
    assert (cited["source"], cited["via"]) == (1, "marker")


def test_unmarked_claims_are_aligned_to_the_best_span_among_the_sources(
    travel: dict[str, Any], post: Callable[..., Any]
) -> None:
    # Given the same answer without a single marker
    answer = f"{APPROVAL} {REIMBURSED}"
    # When it is sent with its two sources
    response = post(plain(answer, travel["reimbursed"], travel["approval"]))
    # Then each claim cites the source that holds it, chosen by alignment
    approval, reimbursed = stored(response)
    assert [(c["source"], c["via"]) for c in approval["citations"]] == [(2, "alignment")]
    assert [(c["source"], c["via"]) for c in reimbursed["citations"]] == [(1, "alignment")]
    assert aligned_text(travel["approval"], approval["citations"][0]) == APPROVAL
    assert aligned_text(travel["reimbursed"], reimbursed["citations"][0]) == REIMBURSED
    assert approval["citations"][0]["alignment"]["score"] == 1.0
    decision = post.client.get(f"/api/v1/decisions/{response.json()['id']}/").json()  # type: ignore[attr-defined]
    assert [c["supported"] for c in decision["claims"]] == [True, True]


def test_a_claim_with_two_markers_cites_both_sources(
    travel: dict[str, Any], post: Callable[..., Any], ingest: Callable[..., Any]
) -> None:
    from evidence.models import Paragraph

    ingest(POLICY_EN.replace("Travel and Expense", "Mirror"), title="Mirror", key="mirror")
    mirror = Paragraph.objects.filter(text__contains="500,000 yen require").exclude(
        pk=travel["approval"].pk
    )[0]
    response = post(plain(f"{APPROVAL}[1][3]", travel["approval"], travel["reimbursed"], mirror))
    (claim,) = stored(response)
    assert claim["markers"] == [1, 3]
    assert [(c["source"], c["document"], c["via"]) for c in claim["citations"]] == [
        (1, travel["approval"].version.document_id, "marker"),
        (3, mirror.version.document_id, "marker"),
    ]


def test_a_marker_beyond_the_sources_is_a_400_naming_the_answer(
    travel: dict[str, Any], post: Callable[..., Any]
) -> None:
    response = post(
        plain(f"{APPROVAL} [1] {REIMBURSED} [3]", travel["approval"], travel["reimbursed"])
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["field"] == "answer"
    assert "[3]" in error["message"]
    assert not Decision.objects.exists()


def test_claims_and_sources_together_are_a_400_saying_which(
    travel: dict[str, Any], post: Callable[..., Any]
) -> None:
    body = plain(APPROVAL, travel["approval"])
    body["claims"] = [{"text": APPROVAL, "citations": body["sources"]}]
    response = post(body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "sources"
    assert "claims" in error["message"]
    assert "not both" in error["message"]
    assert not Decision.objects.exists()


def test_neither_claims_nor_sources_is_a_400_naming_claims(
    travel: dict[str, Any], post: Callable[..., Any]
) -> None:
    body = plain(APPROVAL)
    del body["sources"]
    response = post(body)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "claims"


def test_the_same_key_and_body_replay_the_decision_another_body_is_refused(
    travel: dict[str, Any], post: Callable[..., Any], ingest: Callable[..., Any]
) -> None:
    body = plain(f"{APPROVAL} [1]", travel["approval"])
    first = post(body, key="plain-1")
    assert first.status_code == 201
    # a new version in between changes nothing for a replay: it is the body that counts
    ingest(POLICY_EN.replace("30 days", "20 days"), title="Travel policy", key="travel")
    again = post(body, key="plain-1")
    assert again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    other = post(plain(f"{REIMBURSED} [1]", travel["reimbursed"]), key="plain-1")
    assert other.status_code == 422
    assert other.json()["error"]["field"] == "Idempotency-Key"
    assert Decision.objects.count() == 1


def test_a_japanese_answer_is_split_into_its_claims_and_each_aligned(
    ingest: Callable[..., Any], post: Callable[..., Any]
) -> None:
    from evidence.models import Paragraph

    # Given the Japanese contract's fee and due-date articles as sources
    ingest(CONTRACT_JA, kind="contract", key="contract")
    fee = Paragraph.objects.get(text__contains="月額120万円")
    due = Paragraph.objects.get(text__contains="翌月末日")
    answer = (
        "委託料は翌月末日までに支払うものとする。甲は乙に対し、委託料として月額120万円を支払う。"
    )
    # When the agent sends it unmarked
    claims = stored(post(plain(answer, fee, due)))
    # Then each sentence is a claim with its offsets, aligned to the article that says it
    assert [c["text"] for c in claims] == [
        "委託料は翌月末日までに支払うものとする",
        "甲は乙に対し、委託料として月額120万円を支払う",
    ]
    assert all(answer[c["answer_start"] : c["answer_end"]] == c["text"] for c in claims)
    assert [c["citations"][0]["source"] for c in claims] == [2, 1]
    assert "翌月末日" in aligned_text(due, claims[0]["citations"][0])
    assert "月額120万円" in aligned_text(fee, claims[1]["citations"][0])


def test_a_source_of_another_zone_reads_as_missing_and_is_never_aligned_to(
    travel: dict[str, Any], post: Callable[..., Any], ingest: Callable[..., Any]
) -> None:
    from evidence.models import Paragraph

    # Given the same policy in a sibling zone
    ingest(POLICY_EN, zone="G1.U1.P1.Z2", title="Sibling policy", key="travel")
    theirs = Paragraph.objects.get(text__contains="500,000 yen require", zone="G1.U1.P1.Z2")
    # When an unmarked answer gives it as its only source
    unmarked = stored(post(plain(APPROVAL, theirs)))
    # Then nothing is aligned to it: the claim cites nothing
    assert unmarked[0]["citations"] == []
    # And when a marker names it, it is cited as given and reported as fabricated, exactly as
    # a document that does not exist
    marked = post(
        plain(f"{APPROVAL} [1] {REIMBURSED} [2]", theirs, {"document": 987654, "paragraph": 1})
    )
    first, _ = stored(marked)
    assert first["citations"][0]["alignment"] is None
    assert "version" not in first["citations"][0]
    decision = post.client.get(f"/api/v1/decisions/{marked.json()['id']}/").json()  # type: ignore[attr-defined]
    reasons = [c["evidence"][0]["reasons"][0] for c in decision["claims"]]
    assert all("does not exist in G1.U1.P1.Z1" in r for r in reasons), reasons
    assert "Sibling" not in str(decision)


def test_a_source_with_a_version_cites_that_version(
    travel: dict[str, Any], post: Callable[..., Any], ingest: Callable[..., Any]
) -> None:
    # Given the policy's second version
    ingest(POLICY_EN.replace("30 days", "20 days"), title="Travel policy", key="travel")
    document = travel["approval"].version.document_id
    # When one source names version 1 and the other leaves it out
    response = post(
        plain(
            f"{REIMBURSED} [1] Approved expenses are reimbursed within 20 days of submission [2].",
            {"document": document, "version": 1, "paragraph": travel["reimbursed"].number},
            {"document": document, "paragraph": travel["reimbursed"].number},
        )
    )
    # Then the first cites version 1 and the second the current one, version 2
    old, new = stored(response)
    assert old["citations"][0]["version"] == 1
    assert new["citations"][0]["version"] == 2


def test_more_sources_than_the_limit_is_a_413_naming_sources(
    travel: dict[str, Any], post: Callable[..., Any]
) -> None:
    response = post(plain(APPROVAL, *[travel["approval"]] * 51))
    assert response.status_code == 413
    assert response.json()["error"]["field"] == "sources"


def test_an_answer_with_no_clause_is_checked_whole(
    travel: dict[str, Any], post: Callable[..., Any]
) -> None:
    # "500,000" has no letter: no clause, but it is still an answer held to evidence
    response = post(plain("500,000 [1]", travel["approval"]))
    (claim,) = stored(response)
    assert claim["text"] == "500,000 [1]"
