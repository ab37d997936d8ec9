"""On committed rows (verify_trail as an operator runs it, outside any transaction) the
column check runs beside the PostgreSQL fast path on its own connection: it must still name
an edited column."""

from __future__ import annotations

import pytest

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
