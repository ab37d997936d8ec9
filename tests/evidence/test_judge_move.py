"""`evidence.validation.judge_move`: what a plug-in judge may make of a claim, by the zone's
policy (judge_moves, judge_confidence). Pure: no model, no network."""

from __future__ import annotations

import pytest

from coordinates.policy import PolicyValues, check_overrides
from evidence.judge import JudgeVerdict
from evidence.validation import judge_move

SAYS_YES = JudgeVerdict(True, 0.95, "", "m")
SAYS_NO = JudgeVerdict(False, 0.95, "", "m", refutes=True)
NOT_SUPPORTED = JudgeVerdict(False, 0.95, "", "m")  # an LLM judge: no support, no refutation
FAILED = JudgeVerdict(None, None, "", "m", error="timed out")
BOTH = PolicyValues(judge_moves=("verify", "refute"), judge_confidence=0.9)


@pytest.mark.parametrize(
    ("verdict", "judged", "values", "moved"),
    [
        ("unverified", SAYS_YES, BOTH, "verified"),
        ("unverified", SAYS_NO, BOTH, "refuted"),
        ("unverified", NOT_SUPPORTED, BOTH, None),
        ("unverified", FAILED, BOTH, None),
        ("unverified", None, BOTH, None),
        # by default nothing moves
        ("unverified", SAYS_YES, PolicyValues(), None),
        ("unverified", SAYS_NO, PolicyValues(), None),
        # each move needs its own permission
        ("unverified", SAYS_YES, PolicyValues(judge_moves=("refute",)), None),
        ("unverified", SAYS_NO, PolicyValues(judge_moves=("verify",)), None),
        # what the rules show stands
        ("refuted", SAYS_YES, BOTH, None),
        ("verified", SAYS_NO, BOTH, None),
        # the confidence the zone asks, inclusive
        ("unverified", JudgeVerdict(True, 0.9, "", "m"), BOTH, "verified"),
        ("unverified", JudgeVerdict(True, 0.8999, "", "m"), BOTH, None),
        ("unverified", JudgeVerdict(True, None, "", "m"), BOTH, None),
    ],
)
def test_a_judge_moves_only_an_unverified_claim_and_only_as_the_zone_allows(
    verdict: str, judged: JudgeVerdict | None, values: PolicyValues, moved: str | None
) -> None:
    found = judge_move(verdict, judged, values)  # type: ignore[arg-type]
    assert (found[0] if found else None) == moved
    if found:
        assert "judge m (confidence 0." in found[1]


def test_the_policy_takes_no_move_as_a_value_and_refuses_unknown_ones() -> None:
    assert PolicyValues().judge_moves == ()
    assert check_overrides({"judge_moves": []}) == []
    assert check_overrides({"judge_moves": ["verify", "refute"]}) == []
    assert check_overrides({"judge_moves": ["approve"]})
    assert check_overrides({"judge_moves": ["verify", "verify"]})
    assert check_overrides({"judge_confidence": 1.01})
