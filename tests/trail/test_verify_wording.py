"""Every problem the trail's verification can report reads in Japanese on a Japanese page
(issue 29: the Verify report was Japanese only while the trail was intact), and stays the
same English for the command line and the API.

Each case makes the problem through the real verifier (trail.chain, trail.verify,
trail.export, trail.witness) and shows it as the Verify page does: `in_language` with
Django's gettext, under the reader's language.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.utils import translation
from django.utils.translation import gettext

from maria.wording import in_language
from trail import chain, witness
from trail.chain import ChainLink, canonical_json, chain_hash, link_events
from trail.export import verify_export
from trail.ledger import EXPORT_FORMAT
from trail.signing import PublicKey
from trail.verify import (
    CHAIN_REASONS,
    ChainResult,
    CheckpointEntry,
    Mismatch,
    TrailReport,
    _check_head,
    _pick_checkpoint,
    columns_checked,
    signature_problems,
    verify_segment,
    with_mismatch,
)

# Two Latin words in a row (the browser walk's oracle, tests/web/test_languages_browser.py):
# what a Japanese reader would see as English left in the sentence.
ENGLISH_RUN = re.compile(
    r"(?<!\w)(?<!\w\.)[A-Za-z]+(?:'[a-z]+)?(?:[ \u00a0]+[A-Za-z]+(?:'[a-z]+)?)+(?!\w|\.\w)"
)
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
CHAIN = "G1.U1.P1.Z1/0"


def in_japanese(text: str) -> str:
    with translation.override("ja"):
        return in_language(text, gettext)


def assert_japanese(problems: list[str]) -> None:
    assert problems, "the case made no problem to show"
    for problem in problems:
        shown = in_japanese(problem)
        assert JAPANESE.search(shown), f"left in English: {problem}"
        assert not ENGLISH_RUN.findall(shown), f"English in {shown!r}: {ENGLISH_RUN.findall(shown)}"
        # the English the command line prints is the problem itself, unchanged
        with translation.override("en"):
            assert in_language(problem, gettext) == str(problem)


def _links(n: int = 5) -> list[ChainLink]:
    bodies = [
        canonical_json({"chain": CHAIN, "seq": i, "kind": "decision.noted"})
        for i in range(1, n + 1)
    ]
    return link_events(bodies)


def _broken(links: list[ChainLink], **checkpoint: Any) -> list[str]:
    if checkpoint:
        verdict = chain.verify_against_checkpoint(links, checkpoint["seq"], checkpoint["digest"])
    else:
        verdict = chain.verify_chain(links)
    assert not verdict.intact
    return [ChainResult(CHAIN, verdict).describe()]


# --- trail.chain's reasons, shown by trail.verify --------------------------------------------


def _gap() -> list[str]:
    links = _links()
    return _broken([links[0], links[2]]) + _broken([links[0], links[3]])


def _out_of_order() -> list[str]:
    links = _links()
    return _broken([links[0], links[1], links[1]])


def _altered() -> list[str]:
    first, second = _links(2)
    return _broken([first, ChainLink(2, second.prev_hash, second.hash, b"{}")])


def _relinked() -> list[str]:
    links = _links(3)
    return _broken(
        [links[0], link_events([links[2].canonical], prev_hash="0" * 64, first_seq=2)[0]]
    )


def _truncated() -> list[str]:
    links = _links()
    digest = chain.checkpoint_digest(link.hash for link in links)
    return _broken(links[:3], seq=5, digest=digest) + _broken([], seq=5, digest=digest)


def _digest() -> list[str]:
    return _broken(_links(), seq=5, digest="0" * 64)


def test_each_of_the_chain_verifiers_templates_is_written_out_the_same_for_the_catalogue() -> None:
    # trail.chain stays free of the wording; trail.verify marks its templates again
    assert all(template == marked for template, marked in CHAIN_REASONS.items())
    reasons = [value for name, value in vars(chain).items() if name.startswith("REASON_")]
    assert sorted(reasons) == sorted(CHAIN_REASONS)


def test_a_sequence_gap_reads_as_before_in_english() -> None:
    links = _links()
    assert _broken([links[0], links[3]])[0].endswith("sequence gap: events 2..3 missing")
    assert "イベント 2〜3 がありません" in in_japanese(_broken([links[0], links[3]])[0])


# --- trail.verify's own -----------------------------------------------------------------


def _export_segment() -> list[str]:
    links = _links()
    entry = CheckpointEntry(5, links[4].hash, "d")
    short = verify_segment(CHAIN, iter(links[2:4]), checkpoint=entry, trusted_start=True)
    moved = CheckpointEntry(4, "f" * 64, "d")
    relinked = verify_segment(CHAIN, iter(links[2:]), checkpoint=moved, trusted_start=True)
    return [short.describe(), relinked.describe()]


def _column_mismatch() -> list[str]:
    mismatch = Mismatch()
    links = columns_checked(((link, {"kind": "decision.approved"}) for link in _links(2)), mismatch)
    result = verify_segment(CHAIN, links, checkpoint=None)
    return [with_mismatch(result, mismatch).describe()]


def _head_row() -> list[str]:
    links = _links(3)
    intact = verify_segment(CHAIN, iter(links), checkpoint=None)
    heads = [
        SimpleNamespace(seq=4, hash="a" * 64),
        SimpleNamespace(seq=6, hash="a" * 64),
        SimpleNamespace(seq=2, hash="a" * 64),
    ]
    described: list[str] = [_check_head(intact, None).describe()]
    for head in heads:
        described.append(_check_head(intact, head).describe())  # type: ignore[arg-type]
    return described


def _signatures() -> list[str]:
    key = Ed25519PrivateKey.generate()
    known = PublicKey(key.public_key())
    stranger = PublicKey(Ed25519PrivateKey.generate().public_key())
    signed = key.sign(b"h1").hex()
    seals: list[tuple[int, str, str | None, str | None]] = [
        (1, "h1", signed, known.key_id),
        (2, "h2", "00" * 64, known.key_id),
        (3, "h3", "00" * 64, stranger.key_id),
        (4, "h4", None, None),
        (5, "h5", None, None),
    ]
    return signature_problems(seals, [known]) + signature_problems([(1, "h1", None, None)], [known])


def _unknown_checkpoint() -> list[str]:
    return _pick_checkpoint([], "c0ffee")[1]


def test_the_report_around_a_problem_is_japanese_too() -> None:
    report = TrailReport(source="test", problems=_unknown_checkpoint())
    shown = [in_japanese(line) for line in report.lines()] + [in_japanese(report.summary())]
    assert "問題: ハッシュ c0ffee のチェックポイントはありません" in "\n".join(shown)
    assert not [run for line in shown for run in ENGLISH_RUN.findall(line)]


# --- trail.export -----------------------------------------------------------------------


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


HEADER = {"type": "trail.export", "format": EXPORT_FORMAT, "since": None}


def _event(link: ChainLink) -> dict[str, Any]:
    return {
        "type": "trail.event",
        "chain": CHAIN,
        "seq": link.seq,
        "prev_hash": link.prev_hash,
        "hash": link.hash,
        "canonical": link.canonical.decode(),
    }


def _verified(*records: dict[str, Any] | str) -> list[str]:
    lines = [r if isinstance(r, str) else _line(r) for r in records]
    return verify_export(lines, source="test").problems


def _export_format() -> list[str]:
    link = _links(1)[0]
    event = _event(link)
    end = {"type": "trail.end", "events": 1, "records": 0}
    seal = {"type": "trail.seal", "canonical": "{}", "hash": "x", "prev_hash": "y"}
    checkpoint = {"type": "trail.checkpoint", "chain": CHAIN, "seq": 1, "hash": "h", "digest": "d"}
    sealed = {"type": "trail.sealed", "checkpoint": 1, "prev_hash": "p", "hash": "h"}
    return [
        *_verified(HEADER, "[1]\n"),
        *_verified({"type": "trail.end"}),
        *_verified({**HEADER, "format": "v0"}),
        *_verified(HEADER, {"type": "trail.mystery"}),
        *_verified(HEADER, end, event),
        *_verified(HEADER, {k: v for k, v in event.items() if k != "hash"}),
        *_verified(HEADER, {**event, "seq": "1"}),
        *_verified(HEADER, event, checkpoint),
        *_verified(HEADER, event, seal),
        *_verified(HEADER, event, sealed),
        *_verified(HEADER, {"type": "trail.checkpoint", "chain": CHAIN}),
        *_verified(HEADER, {"type": "trail.sealed"}),
        *_verified(HEADER, {"type": "evidence.bundle"}, event),
    ]


def _export_counts() -> list[str]:
    links = _links(2)
    other = {**_event(links[0]), "chain": "G1.U1.P1.Z1/1"}
    return [
        *_verified(HEADER, _event(links[0]), {"type": "trail.end", "events": 3, "records": 0}),
        *_verified(HEADER, {"type": "evidence.bundle"}, {"type": "trail.end", "events": 0}),
        *_verified(HEADER, _event(links[0]), other, _event(links[1])),
    ]


def _export_seal() -> list[str]:
    key = PublicKey(Ed25519PrivateKey.generate().public_key())
    entry = {
        "type": "trail.checkpoint",
        "chain": CHAIN,
        "checkpoint": 1,
        "seq": 1,
        "hash": "h",
        "digest": "d",
    }
    canonical = canonical_json({"chains": {CHAIN: {"seq": 1, "hash": "h", "digest": "e"}}})
    good_hash = chain_hash("0" * 64, canonical)
    seal = {
        "type": "trail.seal",
        "checkpoint": 1,
        "prev_hash": "0" * 64,
        "canonical": canonical.decode(),
    }
    end = {"type": "trail.end", "events": 0, "records": 0}
    sealed = {"type": "trail.sealed", "checkpoint": 2, "prev_hash": "0" * 64, "hash": good_hash}

    def with_key(*records: dict[str, Any]) -> list[str]:
        return verify_export([_line(r) for r in records], source="test", public_keys=[key]).problems

    return [
        *with_key(HEADER, entry, end),
        *with_key(HEADER, {"type": "trail.seal"}, entry, end),
        *with_key(HEADER, {**seal, "hash": "f" * 64}, entry, end),
        *with_key(HEADER, {**seal, "hash": good_hash}, entry, end),
        *with_key(HEADER, sealed, {**seal, "hash": good_hash}, end),
    ]


# --- trail.witness ----------------------------------------------------------------------


def _seal(seq: int, prev: str, body: bytes = b"{}") -> tuple[witness.Seal, str]:
    return witness.Seal(seq, prev, chain_hash(prev, body)), body.decode()


def _witness_lines() -> list[str]:
    first, body = _seal(1, "0" * 64)
    lines = [
        json.dumps(
            {"checkpoint": 1, "prev_hash": first.prev_hash, "hash": "f" * 64, "canonical": body}
        ),
        json.dumps(
            {"checkpoint": 1, "prev_hash": first.prev_hash, "hash": first.hash, "canonical": body}
        ),
        json.dumps(
            {
                "checkpoint": 1,
                "prev_hash": "1" * 64,
                "hash": chain_hash("1" * 64, b"{}"),
                "canonical": body,
            }
        ),
    ]
    return witness.parse_statements(lines, "witness.jsonl").problems


def _witness_compared() -> list[str]:
    key = Ed25519PrivateKey.generate()
    public = PublicKey(key.public_key())
    one = witness.Seal(1, "0" * 64, "a" * 64, "00" * 64, public.key_id)
    two = witness.Seal(2, "a" * 64, "b" * 64)
    three = witness.Seal(3, "b" * 64, "c" * 64)
    held = witness.WitnessLog(source="w", seals={1: one, 2: two, 3: three})
    held.latest_chains = {CHAIN: (5, "d" * 64), "G1/0": (4, "e" * 64)}
    where = "export"
    return [
        *witness.seal_link_problems([one, three]),
        *witness.seal_link_problems([witness.Seal(1, "0" * 64, "a"), witness.Seal(4, "a", "b")]),
        *witness.seal_link_problems([witness.Seal(1, "0" * 64, "a"), witness.Seal(2, "x", "b")]),
        *witness.checkpoint_problems(held, [one], where=where, keys=[public]),
        *witness.checkpoint_problems(held, [one, two], where=where),
        *witness.checkpoint_problems(held, [one, witness.Seal(2, "a" * 64, "f" * 64)], where=where),
        *witness.checkpoint_problems(
            held, [witness.Seal(1, "0" * 64, "a" * 64), two, three], where=where
        ),
        *witness.chain_problems(
            held,
            heads={CHAIN: 3, "G1/0": 4},
            hash_at=lambda _chain, _seq: "f" * 64,
            covers=lambda _chain: True,
        ),
    ]


def _witness_unread(tmp_path: Path) -> list[str]:
    big = tmp_path / "big.jsonl"
    big.write_text("x" * 100)
    reasons = []
    for target, limit in ((tmp_path / "absent.jsonl", 10), (big, 10)):
        with pytest.raises(witness.WitnessError) as failed:
            witness.read_back(str(target), max_bytes=limit)
        reasons.append(failed.value.why)
    return reasons


CASES: dict[str, Callable[[], list[str]]] = {
    "sequence gap": _gap,
    "out of order": _out_of_order,
    "altered": _altered,
    "re-linked": _relinked,
    "truncated before the checkpoint": _truncated,
    "checkpoint digest": _digest,
    "an export short of its checkpoint": _export_segment,
    "a column against the body": _column_mismatch,
    "the head row": _head_row,
    "signatures": _signatures,
    "no such checkpoint": _unknown_checkpoint,
    "an export's format": _export_format,
    "an export's counts": _export_counts,
    "an export's seal": _export_seal,
    "the witness's lines": _witness_lines,
    "against the witness": _witness_compared,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_problem_of_the_trail_reads_in_japanese(case: str) -> None:
    assert_japanese(CASES[case]())


def test_a_line_that_is_not_json_is_said_in_japanese_around_the_parsers_words() -> None:
    problem = _verified("{not json\n")[0]
    assert problem.startswith("line 1: not JSON (Expecting property name")
    # the JSON parser's own words stay as it gives them, as the operating system's do
    assert in_japanese(problem).startswith("1 行目: JSON ではありません（Expecting property name")


def test_an_unreadable_witness_says_why_in_japanese(tmp_path: Path) -> None:
    reasons = _witness_unread(tmp_path)
    assert "holds more than 10 bytes" in reasons[1]
    # the operating system's own words for a missing file stay as it gives them
    shown = in_japanese(reasons[0])
    assert shown.startswith("証人 ")
    assert "を読み取れません" in shown
    assert_japanese(reasons[1:])
