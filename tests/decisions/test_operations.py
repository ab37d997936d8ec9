"""What an operator sees: Prometheus figures at /metrics and one decision's path in the logs."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from coordinates.coordinate import parse
from coordinates.services import token_issue
from decisions import services, tasks
from decisions.models import Decision
from maria.logging import JsonFormatter
from tests.decisions.conftest import GOOD, ZONE, cite
from tests.decisions.helpers import WebhookReceiver, retry_inline, reviewer

pytestmark = pytest.mark.django_db

OTHER_ZONE = "G1.U1.P1.Z2"
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape() -> Samples:
    response = Client().get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def flaky_validation(monkeypatch: pytest.MonkeyPatch, failures: int) -> None:
    """The next `failures` validations raise; the rest work."""
    errors = iter([RuntimeError("database restarting")] * failures)

    def validate(*, decision_id: int, bundle_hash: str, others: int = 0) -> Decision:
        error = next(errors, None)
        if error is not None:
            raise error
        return services.decision_validate(decision_id=decision_id, bundle_hash=bundle_hash)

    monkeypatch.setattr(tasks, "decision_validate", validate)
    retry_inline(monkeypatch)


def test_metrics_count_waiting_decisions_per_zone_and_graded_decisions_per_gate(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a strict zone with two answers waiting, and a blocked answer in another zone
    before = scrape()
    set_policy(tau=0.99, refusal_floor=0.05)
    claims = [{"text": GOOD, "citations": [cite(policy_doc)]}]
    waiting = [submit(claims).response.json()["id"] for _ in range(2)]
    other_agent = f"{OTHER_ZONE}.A1"
    blocked = submit(claims, zone=OTHER_ZONE, agent=other_agent, token_of=other_agent).json()
    assert blocked["gate"] == "blocked"  # it cites a document of another zone

    # when the operator scrapes /metrics
    samples = scrape()

    # then the queue depth is what each zone's reviewers have waiting, 0 where none
    assert value(samples, "maria_queue_depth", zone=ZONE) == 2
    assert value(samples, "maria_queue_depth", zone=OTHER_ZONE) == 0
    assert value(samples, "maria_queue_depth", zone="G1.U1.P2.Z1") == 0
    # and graded decisions are counted per zone and gate
    assert value(samples, "maria_gate_decisions", zone=ZONE, gate="required") == 2
    assert value(samples, "maria_gate_decisions", zone=OTHER_ZONE, gate="blocked") == 1
    assert value(samples, "maria_gate_decisions", zone=ZONE, gate="auto") is None
    # and each validation's latency was observed
    count_before = value(before, "maria_validation_seconds_count") or 0.0
    assert value(samples, "maria_validation_seconds_count") == count_before + 3
    assert value(samples, "maria_validation_seconds_bucket", le="+Inf") == count_before + 3
    # and a validation task delivered again for a judged decision observes nothing more
    judged = Decision.objects.get(pk=waiting[0])
    tasks.validate_decision.apply(args=(judged.pk, judged.bundle.content_hash))
    assert value(scrape(), "maria_validation_seconds_count") == count_before + 3

    # when a reviewer approves one of the waiting answers
    with django_capture_on_commit_callbacks(execute=True):
        services.decision_approve(decision_id=waiting[0], user=reviewer("rita", ZONE))

    # then the queue is one shorter, and the decision keeps the gate that graded it
    samples = scrape()
    assert value(samples, "maria_queue_depth", zone=ZONE) == 1
    assert value(samples, "maria_gate_decisions", zone=ZONE, gate="required") == 2


def test_metrics_count_task_retries(
    policy_doc: Any, submit: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a validation that fails once before it works
    before = value(scrape(), "maria_task_retries_total", task="validate_decision") or 0.0
    flaky_validation(monkeypatch, failures=1)

    # when an answer is submitted
    submit([{"text": GOOD, "citations": [cite(policy_doc)]}])

    # then /metrics shows the retry
    after = value(scrape(), "maria_task_retries_total", task="validate_decision")
    assert after == before + 1


def test_every_log_line_on_one_decisions_path_names_the_decision(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a strict zone, an agent whose webhook fails once, and a validation that fails once
    set_policy(tau=0.99, refusal_floor=0.05)
    flaky_validation(monkeypatch, failures=1)
    caplog.set_level(logging.INFO)
    with WebhookReceiver((500, 200)).running() as receiver:
        token_issue(agent=parse("G1.U1.P1.Z1.A1"), webhook_url=receiver.url)

        # when an answer is submitted, validated, routed, claimed, approved and delivered
        decision_id = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()["id"]
        rita = reviewer("rita", ZONE)
        with django_capture_on_commit_callbacks(execute=True):
            services.decision_claim(decision_id=decision_id, user=rita)
        with django_capture_on_commit_callbacks(execute=True):
            services.decision_approve(decision_id=decision_id, user=rita, reason="fine")
    assert Decision.objects.get(pk=decision_id).state == "completed"

    # then every line the pipeline logged names the decision
    records = [r for r in caplog.records if r.name.startswith("decisions.")]
    assert [getattr(r, "decision_id", None) for r in records] == [decision_id] * len(records)
    messages = [r.getMessage() for r in records]
    # in the order things happened, each step once the change committed
    steps = [
        "decision submitted",
        "validation retry",
        "decision validated",
        "decision routed",
        "decision claimed",
        "decision approved",
        "answer released",
        "webhook retry",
        "delivery confirmed",
    ]
    assert [m for m in messages if m in steps] == steps, messages
    # and in production's JSON lines it is a field of its own
    line = json.loads(JsonFormatter().format(records[0]))
    assert line["decision_id"] == decision_id
    assert line["logger"] == "decisions.services"
