"""Fixtures of the page tests: the decision-pipeline fixtures, and a queued decision."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.decisions.conftest import GOOD, cite, policy_doc, set_policy, submit

__all__ = ["policy_doc", "set_policy", "submit"]


@pytest.fixture
def queue_one(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> Callable[..., int]:
    """Submit an answer that needs a person (tau above what it reaches) and return its id."""
    # No floor: even an answer nothing supports (a hostile one) waits for a person.
    set_policy(tau=0.99, refusal_floor=0.0)

    def run(answer: str | None = None, question: str | None = None, **extra: Any) -> int:
        body: dict[str, Any] = dict(extra)
        if answer is not None:
            body["answer"] = answer
        if question is not None:
            body["question"] = question
        result = submit([{"text": GOOD, "citations": [cite(policy_doc)]}], **body).json()
        assert result["state"] == "approval_required"
        return int(result["id"])

    return run
