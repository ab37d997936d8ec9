"""The witness: each checkpoint handed to a place outside the database (MARIA_TRAIL_WITNESS),
and read back to check the database or an export against it.

The witness is a file the operator keeps elsewhere (one JSON line a checkpoint, appended) or
an http(s) URL (each checkpoint POSTed as JSON; a GET on the same URL returns them as JSON
lines). A witness that holds checkpoint N shows that the database's copy lost it, or that a
chain's tail after it was removed or rewritten. A failed hand-over leaves the checkpoint
standing (the witness is a copy, not a gate): the next checkpoint hands over every one the
witness lacks, and `verify_trail` says when the witness is behind.
"""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from maria.wording import gettext_noop, said
from trail.chain import GENESIS, chain_hash
from trail.ledger import iso_time

if TYPE_CHECKING:
    from trail.models import TrailCheckpoint
    from trail.signing import PublicKey

log = logging.getLogger(__name__)
TIMEOUT = 5.0
# Reading the witness back is bounded: one statement is a few hundred bytes per chain, so
# this holds years of hourly checkpoints for a few hundred chains.
MAX_BYTES = 256 * 1024 * 1024
STATEMENT_TYPE = "trail.seal"


class WitnessError(Exception):
    """The witness cannot be read back (unreachable, too large, too slow); `why` says so,
    `said` for a page."""

    @property
    def why(self) -> str:
        return self.args[0] if self.args and isinstance(self.args[0], str) else str(self)


@dataclass(frozen=True, slots=True)
class Seal:
    """One checkpoint as the database, an export or the witness records it."""

    seq: int
    prev_hash: str
    hash: str
    signature: str = ""
    key_id: str = ""


@dataclass(slots=True)
class WitnessLog:
    """What the witness holds: every checkpoint it was handed (by seq) and, for the latest,
    the head seq and hash it sealed of each chain."""

    source: str
    seals: dict[int, Seal] = field(default_factory=dict)
    latest_chains: dict[str, tuple[int, str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # statements that do not hold
    unreadable: list[int] = field(default_factory=list)  # line numbers that are no statement

    @property
    def latest(self) -> Seal | None:
        return self.seals[max(self.seals)] if self.seals else None


def statement(checkpoint: TrailCheckpoint) -> dict[str, Any]:
    """What a witness keeps: enough to check the checkpoint and its signature later."""
    return {
        "type": STATEMENT_TYPE,
        "checkpoint": checkpoint.seq,
        "created_at": iso_time(checkpoint.created_at),
        "prev_hash": checkpoint.prev_hash,
        "hash": checkpoint.hash,
        "canonical": bytes(checkpoint.canonical).decode(),
        "signature": checkpoint.signature or "",
        "key_id": checkpoint.key_id or "",
    }


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


# --- handing over -------------------------------------------------------------------------


def hand_over(checkpoint: TrailCheckpoint, target: str | None = None) -> bool:
    """Append one checkpoint's statement to the witness; False (logged) when it failed."""
    target = settings.MARIA_TRAIL_WITNESS if target is None else target
    if not target:
        return False
    line = json.dumps(statement(checkpoint), separators=(",", ":"))
    try:
        if is_url(target):
            request = urllib.request.Request(  # noqa: S310 (the scheme is checked above)
                target,
                data=line.encode(),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=TIMEOUT):  # noqa: S310
                pass
        else:
            with Path(target).open("a+b") as handle:
                # A line cut short (a crash, a full disk) must not swallow this one.
                size = handle.seek(0, os.SEEK_END)
                cut = False
                if size:
                    handle.seek(size - 1)
                    cut = handle.read(1) != b"\n"
                handle.write((b"\n" if cut else b"") + line.encode() + b"\n")
    except (OSError, urllib.error.URLError) as error:
        log.warning(
            "the trail witness did not take checkpoint %s: %s (the next checkpoint hands it "
            "over again)",
            checkpoint.seq,
            error,
            extra={"checkpoint": checkpoint.seq, "witness": target},
        )
        return False
    return True


# --- reading back -------------------------------------------------------------------------


def _raw_lines(target: str, *, timeout: float, max_bytes: int) -> Iterator[bytes]:
    too_large = said(
        gettext_noop("the witness %(target)s holds more than %(bytes)s bytes"),
        {"target": target, "bytes": max_bytes},
    )
    # The timeout bounds each wait on the socket; this bounds the whole read.
    deadline = time.monotonic() + timeout * 4
    if is_url(target):
        request = urllib.request.Request(  # noqa: S310 (the scheme is checked above)
            target, headers={"Accept": "application/x-ndjson, application/json"}, method="GET"
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
                read = 0
                # readline with a limit: one endless line cannot outgrow the bound either.
                while line := response.readline(max_bytes - read + 1):
                    read += len(line)
                    if read > max_bytes:
                        raise WitnessError(too_large)
                    if time.monotonic() > deadline:
                        raise WitnessError(
                            said(
                                gettext_noop("the witness %(target)s answers too slowly"),
                                {"target": target},
                            )
                        )
                    yield line
        except (OSError, urllib.error.URLError) as error:
            raise WitnessError(_unreadable(target, error)) from error
        return
    path = Path(target)
    try:
        if path.stat().st_size > max_bytes:
            raise WitnessError(too_large)
        with path.open("rb") as handle:
            yield from handle
    except OSError as error:
        reason = error.strerror or error
        raise WitnessError(_unreadable(target, reason)) from error


def _unreadable(target: str, error: object) -> str:
    return said(
        gettext_noop("cannot read the witness %(target)s: %(error)s"),
        {"target": target, "error": error},
    )


def read_back(target: str, *, timeout: float = TIMEOUT, max_bytes: int = MAX_BYTES) -> WitnessLog:
    """Every statement the witness holds, each checked to hash to its own hash (raises
    WitnessError when the witness cannot be read at all)."""
    return parse_statements(_raw_lines(target, timeout=timeout, max_bytes=max_bytes), target)


def parse_statements(lines: Iterable[bytes | str], source: str) -> WitnessLog:
    """The witness's JSON lines as a WitnessLog; a line that is not a sound statement is a
    problem, never a stop."""
    witnessed = WitnessLog(source=source)
    latest_canonical: bytes | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            seq = int(record["checkpoint"])
            canonical = str(record["canonical"]).encode("utf-8", errors="surrogatepass")
            seal = Seal(
                seq,
                str(record["prev_hash"]),
                str(record["hash"]),
                str(record.get("signature") or ""),
                str(record.get("key_id") or ""),
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            # A line cut short by a crash, or anything else: it vouches for nothing, and a
            # checkpoint it should have held shows as missing from the witness instead.
            witnessed.unreadable.append(number)
            continue
        if chain_hash(seal.prev_hash, canonical) != seal.hash:
            witnessed.problems.append(
                said(
                    gettext_noop(
                        "witness line %(line)s: checkpoint %(seq)s does not hash to its hash"
                    ),
                    {"line": number, "seq": seq},
                )
            )
            continue
        known = witnessed.seals.get(seq)
        if known is not None and known != seal:
            witnessed.problems.append(
                said(
                    gettext_noop("witness line %(line)s: a second, different checkpoint %(seq)s"),
                    {"line": number, "seq": seq},
                )
            )
            continue
        witnessed.seals[seq] = seal
        if seq == max(witnessed.seals):
            latest_canonical = canonical
    if latest_canonical is not None:
        try:
            chains = json.loads(latest_canonical)["chains"]
            witnessed.latest_chains = {
                str(name): (int(entry["seq"]), str(entry["hash"])) for name, entry in chains.items()
            }
        except (ValueError, TypeError, KeyError, AttributeError):
            witnessed.problems.append(
                said(gettext_noop("witness: the latest checkpoint's body is unreadable"))
            )
    return witnessed


def last_seq(target: str) -> int | None:
    """The seq of the latest checkpoint the witness holds (None: none, or unreadable)."""
    try:
        witnessed = read_back(target)
    except WitnessError:
        return None
    return max(witnessed.seals) if witnessed.seals else 0


# --- comparing (pure) ---------------------------------------------------------------------


def seal_link_problems(recorded: Sequence[Seal]) -> list[str]:
    """Checkpoints must run from 1 without a gap, each naming the previous one's hash."""
    expected_seq, expected_prev = 1, GENESIS
    for seal in sorted(recorded, key=lambda s: s.seq):
        if seal.seq != expected_seq:
            if seal.seq == expected_seq + 1:
                return [
                    said(
                        gettext_noop(
                            "checkpoint %(first)s is missing (the checkpoints jump to %(seq)s)"
                        ),
                        {"first": expected_seq, "seq": seal.seq},
                    )
                ]
            return [
                said(
                    gettext_noop(
                        "checkpoints %(first)s..%(last)s are missing (the checkpoints jump to "
                        "%(seq)s)"
                    ),
                    {"first": expected_seq, "last": seal.seq - 1, "seq": seal.seq},
                )
            ]
        if seal.prev_hash != expected_prev:
            return [
                said(
                    gettext_noop("checkpoint %(seq)s: prev_hash does not name checkpoint %(prev)s"),
                    {"seq": seal.seq, "prev": seal.seq - 1},
                )
            ]
        expected_seq, expected_prev = seal.seq + 1, seal.hash
    return []


def checkpoint_problems(
    witnessed: WitnessLog,
    recorded: Sequence[Seal],
    *,
    where: str,
    keys: Sequence[PublicKey] = (),
    unsound_lines: bool = True,
) -> list[str]:
    """Every checkpoint the witness holds must be in `recorded` (the database's or the
    export's) with the same hash and signature; the first missing or different one is named.
    `unsound_lines`: the witness's own unreadable lines count too."""
    problems = list(witnessed.problems) if unsound_lines else []
    by_id = {key.key_id: key for key in keys}
    for seal in sorted(witnessed.seals.values(), key=lambda s: s.seq):
        key = by_id.get(seal.key_id)
        if seal.signature and key is not None and not key.verifies(seal.hash, seal.signature):
            problems.append(
                said(
                    gettext_noop("witness: checkpoint %(seq)s's signature does not verify"),
                    {"seq": seal.seq},
                )
            )
    by_seq = {seal.seq: seal for seal in recorded}
    missing = [seq for seq in sorted(witnessed.seals) if seq not in by_seq]
    if missing:
        parts = {"seq": missing[0], "where": where, "more": len(missing) - 1}
        problems.append(
            said(
                gettext_noop(
                    "checkpoint %(seq)s is missing from the %(where)s but the witness holds it: "
                    "checkpoints were removed"
                ),
                parts,
            )
            if len(missing) == 1
            else said(
                gettext_noop(
                    "checkpoint %(seq)s is missing from the %(where)s but the witness holds it "
                    "(and %(more)s more the witness holds): checkpoints were removed"
                ),
                parts,
            )
        )
    for seq in sorted(set(witnessed.seals) & set(by_seq)):
        kept, found = witnessed.seals[seq], by_seq[seq]
        if kept.hash != found.hash:
            problems.append(
                said(
                    gettext_noop(
                        "checkpoint %(seq)s differs from the witness's copy: hash %(found)s in "
                        "the %(where)s, %(kept)s at the witness (rewritten)"
                    ),
                    {"seq": seq, "found": found.hash[:16], "where": where, "kept": kept.hash[:16]},
                )
            )
            break
        if kept.signature != found.signature:
            problems.append(
                said(
                    gettext_noop("checkpoint %(seq)s's signature differs from the witness's copy"),
                    {"seq": seq},
                )
            )
            break
    return problems


def chain_problems(
    witnessed: WitnessLog,
    *,
    heads: Mapping[str, int | None],
    hash_at: Callable[[str, int], str | None],
    covers: Callable[[str], bool],
) -> list[str]:
    """Each chain the witness's latest checkpoint sealed at event s with hash h must still
    reach event s (`heads`: the last event of each intact chain, None for no events) and
    hold h there (`hash_at`, None when that event cannot be looked at); chains `covers`
    says are out of range, and chains already reported broken (not in `heads`), are left."""
    latest = witnessed.latest
    if latest is None:
        return []
    problems: list[str] = []
    for chain, (seq, sealed) in sorted(witnessed.latest_chains.items()):
        if not covers(chain) or chain not in heads:
            continue
        head = heads[chain] or 0
        if head < seq:
            problems.append(
                said(
                    gettext_noop(
                        "chain %(chain)s: events %(first)s..%(seq)s are missing, but the "
                        "witness's checkpoint %(checkpoint)s sealed the chain at event %(seq)s "
                        "(a removed tail)"
                    ),
                    {"chain": chain, "first": head + 1, "seq": seq, "checkpoint": latest.seq},
                )
            )
            continue
        found = hash_at(chain, seq)
        if found is not None and found != sealed:
            problems.append(
                said(
                    gettext_noop(
                        "chain %(chain)s: event %(seq)s differs from what the witness's "
                        "checkpoint %(checkpoint)s sealed (hash %(found)s, sealed %(sealed)s: "
                        "rewritten)"
                    ),
                    {
                        "chain": chain,
                        "seq": seq,
                        "checkpoint": latest.seq,
                        "found": found[:16],
                        "sealed": sealed[:16],
                    },
                )
            )
    return problems


def behind(witnessed: WitnessLog, recorded: Sequence[Seal]) -> str:
    """One line on how far the witness has kept up with the recorded checkpoints."""
    held = max(witnessed.seals) if witnessed.seals else 0
    latest = max((seal.seq for seal in recorded), default=0)
    text = said(
        gettext_noop("%(source)s: holds checkpoints up to %(held)s"),
        {"source": witnessed.source, "held": held},
    )
    if witnessed.unreadable:
        lines = ", ".join(str(number) for number in witnessed.unreadable[:5])
        more = ", ..." if len(witnessed.unreadable) > 5 else ""
        text = said(
            gettext_noop("%(text)s; skipped lines that are no checkpoint statement: %(lines)s"),
            {"text": text, "lines": lines + more},
        )
    if latest > held:
        text = said(
            gettext_noop(
                "%(text)s; behind: checkpoints %(first)s..%(last)s were not handed over (the "
                "next checkpoint hands them over)"
            ),
            {"text": text, "first": held + 1, "last": latest},
        )
    return text
