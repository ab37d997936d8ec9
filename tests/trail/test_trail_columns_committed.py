"""On committed rows (verify_trail as an operator runs it, outside any transaction) the
column check runs beside the PostgreSQL fast path on its own connection: it must still name
an edited column."""

from __future__ import annotations

import pytest
from django.db import connection

from tests.trail_support import triggers_bypassed
from trail import ledger, verify
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db(transaction=True)

ZONE = "G1.U1.P1.Z1"


def test_an_edited_reason_column_is_named_when_the_trail_is_committed() -> None:
    for i in range(4):
        ledger.append(kind="test.step", chain=ZONE, actor="system", reason="ok", payload={"i": i})
    target = TrailEvent.objects.get(chain=ZONE, seq=3)
    with triggers_bypassed():
        TrailEvent.objects.filter(pk=target.pk).update(reason="approved after a call")
    report = verify.verify_database()
    assert not report.intact
    assert report.broken[0].verdict.broken_seq == 3
    assert "the 'reason' column says 'approved after a call'" in report.summary()
    # and an untouched trail is intact both ways
    with triggers_bypassed():
        TrailEvent.objects.filter(pk=target.pk).update(reason="ok")
    assert verify.verify_database().intact


ODD_REASONS = [
    'approved: "looks right"',
    "a backslash \\ and a tab\there",
    "two\nlines",
    "control \x01 character",
    "日本語の理由、絵文字 🚀",
    "",
]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the server-side column check")
def test_the_server_finds_odd_columns_equal_to_their_bodies() -> None:
    """Quotes, backslashes, newlines, control characters and non-ASCII text in the columns,
    and events with and without a decision, match their bodies on the server: the check's
    byte comparison or its jsonb comparison, never a chain sent to the slow walk for
    nothing."""
    for i, reason in enumerate(ODD_REASONS):
        ledger.append(kind="test.step", chain=ZONE, actor="system", reason=reason, payload={"i": i})
    ledger.append(kind="test.step", chain=ZONE, actor='agent "7"', reason="ok", payload={})
    assert verify._columns_differing() == set()
    assert verify.verify_database().intact


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the server-side column check")
@pytest.mark.parametrize(
    ("written", "edited"),
    [
        ('said "yes"', 'said \\"yes\\"'),  # the body's escaped form, read back as the value
        ("ok", "ok "),
        ("ok", "OK"),
        ("two\nlines", "two\\nlines"),
    ],
)
def test_the_server_finds_a_reason_column_that_differs_by_an_escape(
    written: str, edited: str
) -> None:
    ledger.append(kind="test.step", chain=ZONE, actor="system", reason="first", payload={})
    target = ledger.append(kind="test.step", chain=ZONE, actor="system", reason=written, payload={})
    with triggers_bypassed():
        TrailEvent.objects.filter(pk=target.pk).update(reason=edited)
    assert verify._columns_differing() == {ZONE}
    report = verify.verify_database()
    assert not report.intact
    assert report.broken[0].verdict.broken_seq == 2
