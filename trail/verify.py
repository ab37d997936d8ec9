"""Verifying the trail: every chain, the heads, the checkpoints (the PostgreSQL fast path
included)."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from typing import Any

from django.db import DatabaseError, connection, transaction

from maria.wording import Said, gettext_noop, said
from trail import signing
from trail.chain import (
    CHECKPOINT_PREFIX,
    GENESIS,
    REASON_ALTERED,
    REASON_DIGEST,
    REASON_GAP,
    REASON_GAP_RUN,
    REASON_OUT_OF_ORDER,
    REASON_RELINKED,
    REASON_TRUNCATED,
    REASON_TRUNCATED_EMPTY,
    BatchChecker,
    ChainLink,
    ChainVerdict,
    verify_against_checkpoint,
    verify_chain,
)
from trail.ledger import BODY_VERSION, TrailError, iso_time
from trail.models import TrailCheckpoint, TrailEvent, TrailHead
from trail.signing import PublicKey

# Rows per fetch on the fast path: measured best here between 2,000 and 20,000.
_FAST_BATCH = 5000


class TrailBroken(TrailError):
    """Verification failed; `report` says where."""

    def __init__(self, report: TrailReport) -> None:
        super().__init__(report.summary())
        self.report = report


# --- verification results ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckpointEntry:
    """One chain as a checkpoint sealed it."""

    seq: int
    hash: str
    digest: str


@dataclass(frozen=True, slots=True)
class ChainResult:
    chain: str
    verdict: ChainVerdict
    first_seq: int = 1  # where verification began; > 1 for a `since` export
    trusted_prev: str | None = None  # the prev_hash taken on trust at a mid-chain start
    checkpoint: CheckpointEntry | None = None
    checkpoint_checked: bool = False
    digest: str | None = None  # digest of all the chain's hashes, when asked for
    event_id: int | None = None  # the broken event's id, when it exists

    @property
    def intact(self) -> bool:
        return self.verdict.intact

    def describe(self) -> Said:
        verdict = self.verdict
        if not verdict.intact:
            where = (
                said(gettext_noop("event %(seq)s"), {"seq": verdict.broken_seq})
                if self.event_id is None
                else said(
                    gettext_noop("event %(seq)s (id %(id)s)"),
                    {"seq": verdict.broken_seq, "id": self.event_id},
                )
            )
            return said(
                gettext_noop("chain %(chain)s: BROKEN at %(where)s: %(reason)s"),
                {"chain": self.chain, "where": where, "reason": chain_reason(verdict)},
            )
        if verdict.head_seq is None:
            span = said(gettext_noop("no events"))
        else:
            span = said(
                gettext_noop("events %(first)s..%(last)s"),
                {"first": self.first_seq, "last": verdict.head_seq},
            )
        text = said(
            gettext_noop("chain %(chain)s: intact, %(span)s, head %(head)s"),
            {"chain": self.chain, "span": span, "head": verdict.head_hash[:16]},
        )
        more: list[Said] = []
        if self.trusted_prev is not None:
            more.append(
                said(
                    gettext_noop(
                        "starts mid-chain at seq %(seq)s, trusting its prev_hash %(prev)s"
                    ),
                    {"seq": self.first_seq, "prev": self.trusted_prev[:16]},
                )
            )
        if self.checkpoint is not None:
            if self.checkpoint_checked:
                more.append(
                    said(
                        gettext_noop("matches the checkpoint at seq %(seq)s"),
                        {"seq": self.checkpoint.seq},
                    )
                )
            else:
                more.append(
                    said(
                        gettext_noop(
                            "the checkpoint at seq %(seq)s lies before this export and "
                            "cannot be checked"
                        ),
                        {"seq": self.checkpoint.seq},
                    )
                )
        for clause in more:
            text = said(gettext_noop("%(text)s; %(more)s"), {"text": text, "more": clause})
        return text


# The chain verifier's reasons (trail.chain, which stays free of Django and of this wording),
# marked here for the catalogue so that a page shows them in its reader's language: each
# template of trail.chain, written out again (a test holds the two the same).
CHAIN_REASONS = {
    REASON_ALTERED: gettext_noop("hash mismatch (content altered)"),
    REASON_RELINKED: gettext_noop(
        "prev_hash does not match the previous event (deleted or reordered event)"
    ),
    REASON_GAP: gettext_noop("sequence gap: event %(first)s missing"),
    REASON_GAP_RUN: gettext_noop("sequence gap: events %(first)s..%(last)s missing"),
    REASON_OUT_OF_ORDER: gettext_noop(
        "sequence out of order: expected %(expected)s (duplicated or reordered)"
    ),
    REASON_TRUNCATED_EMPTY: gettext_noop(
        "truncated: the trail ends at no events but the checkpoint covers events "
        "%(first)s..%(last)s"
    ),
    REASON_TRUNCATED: gettext_noop(
        "truncated: the trail ends at event %(head)s but the checkpoint covers events "
        "%(first)s..%(last)s"
    ),
    REASON_DIGEST: gettext_noop(
        "checkpoint digest mismatch for events %(first)s..%(last)s "
        "(events deleted, altered or re-linked before the checkpoint)"
    ),
}


def chain_reason(verdict: ChainVerdict) -> str:
    """Why a chain broke, `said` so that a page shows it in its reader's language: the
    reasons made here are said already; trail.chain's are said from their template."""
    if isinstance(verdict.reason, Said):
        return verdict.reason
    template = CHAIN_REASONS.get(verdict.template) or CHAIN_REASONS.get(verdict.reason)
    if template is None:
        return verdict.reason
    return said(template, dict(verdict.parts))


def checked_with(keys: Iterable[PublicKey]) -> Said:
    """What the report says of signatures checked with `keys`."""
    return said(
        gettext_noop("checked with key %(keys)s"), {"keys": ", ".join(k.key_id for k in keys)}
    )


@dataclass(slots=True)
class TrailReport:
    source: str
    chains: list[ChainResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # not tied to one event
    checkpoint: str = field(default_factory=lambda: said(gettext_noop("no checkpoint")))
    seconds: float = 0.0
    evidence_checked: int | None = None  # rows of evidence re-hashed (audit.integrity)
    signatures: str = field(
        default_factory=lambda: said(gettext_noop("not checked (no public key)"))
    )
    witness: str | None = None  # what the witness holds, when it was read back

    @property
    def events(self) -> int:
        return sum(result.verdict.checked for result in self.chains)

    @property
    def intact(self) -> bool:
        return not self.problems and all(result.intact for result in self.chains)

    @property
    def broken(self) -> list[ChainResult]:
        return [result for result in self.chains if not result.intact]

    def lines(self) -> list[str]:
        """The report, a line each (English; `said`, so a page shows it in its language)."""
        return [
            said(gettext_noop("source: %(source)s"), {"source": self.source}),
            said(gettext_noop("checkpoint: %(checkpoint)s"), {"checkpoint": self.checkpoint}),
            said(gettext_noop("signatures: %(signatures)s"), {"signatures": self.signatures}),
            *(
                [said(gettext_noop("witness: %(witness)s"), {"witness": self.witness})]
                if self.witness is not None
                else []
            ),
            *(result.describe() for result in self.chains),
            *(self._problem(problem) for problem in self.problems),
        ]

    @staticmethod
    def _problem(problem: str) -> Said:
        return said(gettext_noop("PROBLEM: %(problem)s"), {"problem": problem})

    def summary(self) -> str:
        rate = (
            said(gettext_noop("%(rate)s events/s"), {"rate": f"{self.events / self.seconds:,.0f}"})
            if self.seconds > 0
            else "-"
        )
        counts = said(
            gettext_noop("%(chains)s chains, %(events)s events in %(seconds)s s (%(rate)s)"),
            {
                "chains": len(self.chains),
                "events": f"{self.events:,}",
                "seconds": f"{self.seconds:.2f}",
                "rate": rate,
            },
        )
        if self.evidence_checked is not None:
            counts = said(
                gettext_noop("%(counts)s, %(rows)s evidence rows re-hashed"),
                {"counts": counts, "rows": f"{self.evidence_checked:,}"},
            )
        if self.intact:
            return said(gettext_noop("trail intact: %(counts)s"), {"counts": counts})
        first = self.broken[0].describe() if self.broken else self._problem(self.problems[0])
        return said(
            gettext_noop(
                "trail BROKEN (%(chains)s chains, %(problems)s other problems); first: "
                "%(first)s; %(counts)s"
            ),
            {
                "chains": len(self.broken),
                "problems": len(self.problems),
                "first": first,
                "counts": counts,
            },
        )


# --- verifying one chain (any source) ----------------------------------------------------


def verify_segment(
    chain: str,
    links: Iterable[ChainLink],
    *,
    checkpoint: CheckpointEntry | None,
    trusted_start: bool = False,
    digest_all: bool = False,
) -> ChainResult:
    """Verify one chain's links in seq order against its checkpoint.

    A full chain starts at seq 1 from GENESIS. With `trusted_start` (a `since` export) it may
    start later, taking its first prev_hash on trust; the checkpoint is then checked by the
    hash at its seq, when the segment reaches back that far.
    """
    iterator = iter(links)
    first = next(iterator, None)
    if first is None:
        if checkpoint is None:
            return ChainResult(chain, ChainVerdict(True, 0, None, GENESIS))
        verdict = verify_against_checkpoint([], checkpoint.seq, checkpoint.digest)
        return ChainResult(chain, verdict, checkpoint=checkpoint, checkpoint_checked=True)

    digest = hashlib.sha256() if digest_all else None
    seen: dict[str, str] = {}

    def stream() -> Iterator[ChainLink]:
        # Side effects while the verifier pulls: the all-hashes digest for a new checkpoint,
        # and the hash at the checkpoint's seq for a mid-chain start.
        link: ChainLink | None = first
        watch = checkpoint.seq if checkpoint is not None else -1
        while link is not None:
            if link.seq == watch:
                seen["at_checkpoint"] = link.hash
            yield link
            link = next(iterator, None)

    def digesting(source: Iterator[ChainLink]) -> Iterator[ChainLink]:
        if digest is None:
            yield from source
            return
        # The same digest as chain.checkpoint_digest, fed as the verifier walks.
        digest.update(CHECKPOINT_PREFIX)
        for link in source:
            digest.update(link.hash.encode())
            yield link

    mid_chain = trusted_start and first.seq > 1
    if not mid_chain:
        if checkpoint is not None:
            verdict = verify_against_checkpoint(
                digesting(stream()), checkpoint.seq, checkpoint.digest
            )
            return ChainResult(
                chain,
                verdict,
                checkpoint=checkpoint,
                checkpoint_checked=True,
                digest=digest.hexdigest() if digest is not None and verdict.intact else None,
            )
        verdict = verify_chain(digesting(stream()))
        return ChainResult(
            chain,
            verdict,
            digest=digest.hexdigest() if digest is not None and verdict.intact else None,
        )

    verdict = verify_chain(stream(), prev_hash=first.prev_hash, first_seq=first.seq)
    checked = False
    if verdict.intact and checkpoint is not None and checkpoint.seq >= first.seq:
        checked = True
        head = verdict.head_seq or 0
        if head < checkpoint.seq:
            verdict = ChainVerdict(
                False,
                verdict.checked,
                verdict.head_seq,
                verdict.head_hash,
                broken_seq=head + 1,
                reason=said(
                    gettext_noop(
                        "truncated: the export ends at event %(head)s but the checkpoint "
                        "covers events 1..%(last)s"
                    ),
                    {"head": head, "last": checkpoint.seq},
                ),
            )
        elif seen.get("at_checkpoint") != checkpoint.hash:
            verdict = ChainVerdict(
                False,
                verdict.checked,
                verdict.head_seq,
                verdict.head_hash,
                broken_seq=checkpoint.seq,
                reason=said(
                    gettext_noop("hash differs from the checkpoint's (the chain was re-linked)")
                ),
            )
    return ChainResult(
        chain,
        verdict,
        first_seq=first.seq,
        trusted_prev=first.prev_hash,
        checkpoint=checkpoint,
        checkpoint_checked=checked,
    )


@dataclass(slots=True)
class Mismatch:
    seq: int | None = None
    reason: str = ""


def columns_checked(
    rows: Iterable[tuple[ChainLink, Mapping[str, Any]]], mismatch: Mismatch
) -> Iterator[ChainLink]:
    """Pass links through, recording the first whose indexed columns disagree with its body."""
    for link, columns in rows:
        if mismatch.seq is None and columns:
            try:
                body = json.loads(link.canonical)
            except ValueError:
                body = None  # not JSON at all: the hash check reports it as altered
            if isinstance(body, dict):
                for name, value in columns.items():
                    if body.get(name) != value:
                        mismatch.seq = link.seq
                        mismatch.reason = said(
                            gettext_noop(
                                "the %(column)s column says %(value)s but the hashed body "
                                "says %(body)s"
                            ),
                            {
                                "column": repr(name),
                                "value": repr(value),
                                "body": repr(body.get(name)),
                            },
                        )
                        break
        yield link


def with_mismatch(result: ChainResult, mismatch: Mismatch) -> ChainResult:
    """Report a column mismatch when it comes before any break in the chain itself."""
    if mismatch.seq is None:
        return result
    broken = result.verdict.broken_seq
    if not result.intact and broken is not None and broken <= mismatch.seq:
        return result
    verdict = ChainVerdict(
        False,
        result.verdict.checked,
        result.verdict.head_seq,
        result.verdict.head_hash,
        broken_seq=mismatch.seq,
        reason=mismatch.reason,
    )
    return ChainResult(
        result.chain,
        verdict,
        first_seq=result.first_seq,
        trusted_prev=result.trusted_prev,
        checkpoint=result.checkpoint,
        checkpoint_checked=result.checkpoint_checked,
    )


# --- checkpoints -------------------------------------------------------------------------


def checkpoint_entries(checkpoint: TrailCheckpoint) -> dict[str, CheckpointEntry]:
    chains: dict[str, Any] = checkpoint.body.get("chains", {})
    return {
        name: CheckpointEntry(int(entry["seq"]), str(entry["hash"]), str(entry["digest"]))
        for name, entry in chains.items()
    }


def _checkpoint_problems(checkpoints: Sequence[TrailCheckpoint]) -> list[str]:
    """Checkpoints form their own hash chain: altered, removed or re-ordered ones show."""
    verdict = verify_chain(cp.link for cp in checkpoints)
    if verdict.intact:
        return []
    return [
        said(
            gettext_noop("checkpoint %(seq)s: %(reason)s"),
            {"seq": verdict.broken_seq, "reason": chain_reason(verdict)},
        )
    ]


def signature_problems(
    seals: Sequence[tuple[int, str, str | None, str | None]],
    keys: Sequence[PublicKey],
    *,
    sealing: bool = False,
) -> list[str]:
    """(seq, hash, signature, key id) of each checkpoint in seq order, against the public
    key: every signature must verify with one of the keys, and the latest checkpoint must be
    signed. A forged or re-sealed checkpoint (a rewritten trail re-hashed to match) has no
    valid signature. An unsigned checkpoint followed by a signed one is superseded: the
    signed one commits to its hash, so it cannot have been slipped in later; checkpoints
    from before signing began stay readable. `sealing` (a new checkpoint is about to be
    signed) leaves out the unsigned latest one, which the new one supersedes."""
    if not keys or not seals:
        return []
    by_id = {key.key_id: key for key in keys}
    problems: list[str] = []
    signed = [seq for seq, _, signature, _ in seals if signature]
    unsigned_tail = [seq for seq, _, _, _ in seals if not signed or seq > signed[-1]]
    if unsigned_tail and not sealing:
        first = unsigned_tail[0]
        span = (
            said(gettext_noop("checkpoint %(seq)s"), {"seq": first})
            if len(unsigned_tail) == 1
            else said(
                gettext_noop("checkpoints %(first)s..%(last)s"),
                {"first": first, "last": unsigned_tail[-1]},
            )
        )
        if signed:
            span = said(
                gettext_noop("%(span)s after signed checkpoint %(signed)s"),
                {"span": span, "signed": signed[-1]},
            )
        problems.append(
            said(
                gettext_noop(
                    "checkpoint %(seq)s: the latest checkpoint is not signed (%(span)s: "
                    "written without the key, or forged); run trail_checkpoint with "
                    "MARIA_TRAIL_SIGNING_KEY or MARIA_TRAIL_SIGNING_KEY_FILE set: the next "
                    "signed checkpoint supersedes it"
                ),
                {"seq": seals[-1][0], "span": span},
            )
        )
    for seq, sealed, signature, key_id in seals:
        if not signature:
            continue
        key = by_id.get(key_id or "")
        if key is None:
            problems.append(
                said(
                    gettext_noop(
                        "checkpoint %(seq)s: signed by key %(key)s, which is not among the "
                        "keys given (%(keys)s)"
                    ),
                    {"seq": seq, "key": key_id, "keys": ", ".join(by_id)},
                )
            )
        elif not key.verifies(sealed, signature):
            problems.append(
                said(
                    gettext_noop(
                        "checkpoint %(seq)s: the signature does not verify (the checkpoint "
                        "was forged or altered)"
                    ),
                    {"seq": seq},
                )
            )
    return problems


def _pick_checkpoint(
    checkpoints: Sequence[TrailCheckpoint], wanted: str | None, *, signed_only: bool = False
) -> tuple[TrailCheckpoint | None, list[str]]:
    """The checkpoint to verify the chains against: the one with the hash asked for, else
    the latest; with `signed_only` (signatures are checked) the latest signed one, since an
    unsigned checkpoint after it proves nothing."""
    if wanted is None:
        if signed_only:
            signed = [checkpoint for checkpoint in checkpoints if checkpoint.signature]
            if signed:
                return signed[-1], []
        return (checkpoints[-1] if checkpoints else None), []
    for checkpoint in checkpoints:
        if checkpoint.hash == wanted:
            return checkpoint, []
    return None, [
        said(
            gettext_noop(
                "no checkpoint has the hash %(hash)s (it was removed, altered, or never existed)"
            ),
            {"hash": wanted},
        )
    ]


# --- verifying the database --------------------------------------------------------------


def verify_database(
    *,
    deep: bool = False,
    checkpoint_hash: str | None = None,
    digests: bool = False,
    fast: bool | None = None,
    public_keys: Sequence[PublicKey] | None = None,
    sealing: bool = False,
) -> TrailReport:
    """Verify every chain in the database, its head row and the chosen checkpoint, and that
    every event's columns (chain, seq, kind, decision, actor, reason, time: what the
    auditor's pages show) agree with its hashed body.

    `deep` hashes every event in this process instead of trusting the server's sha256 on
    the PostgreSQL fast path. `digests` computes each chain's all-hashes digest (for a new
    checkpoint). `fast` forces the fast path on or off (default: on PostgreSQL unless `deep`).
    `public_keys` check the checkpoints' signatures (default: the configured key's public
    half and the previous keys, `signing.public_keys`); with keys, the chains are checked
    against the latest signed checkpoint. `sealing`: a signed checkpoint is about to be
    made, which supersedes an unsigned latest one (not a problem then).
    """
    started = time.perf_counter()
    report = TrailReport(source="database")
    use_fast = (connection.vendor == "postgresql" and not deep) if fast is None else fast
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and outermost:
            # One snapshot for checkpoints, heads and events alike, so appends committed
            # while this runs cannot look like a mismatch between them.
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        checkpoints = list(TrailCheckpoint.objects.order_by("seq"))
        report.problems.extend(_checkpoint_problems(checkpoints))
        keys = list(public_keys) if public_keys is not None else signing.public_keys()
        report.problems.extend(
            signature_problems(
                [(cp.seq, cp.hash, cp.signature, cp.key_id) for cp in checkpoints],
                keys,
                sealing=sealing,
            )
        )
        if keys:
            report.signatures = checked_with(keys)
        chosen, problems = _pick_checkpoint(checkpoints, checkpoint_hash, signed_only=bool(keys))
        report.problems.extend(problems)
        entries: dict[str, CheckpointEntry] = {}
        if chosen is not None:
            try:
                entries = checkpoint_entries(chosen)
            except (ValueError, KeyError, TypeError, AttributeError):
                # Its hash already fails the checkpoint chain; nothing in it can be used.
                report.problems.append(
                    said(gettext_noop("checkpoint %(seq)s: unreadable body"), {"seq": chosen.seq})
                )
            report.checkpoint = said(
                gettext_noop(
                    "#%(seq)s of %(time)s, %(chains)s chains, %(events)s events, hash %(hash)s"
                ),
                {
                    "seq": chosen.seq,
                    "time": chosen.created_at.isoformat(),
                    "chains": chosen.chains,
                    "events": chosen.events,
                    "hash": chosen.hash,
                },
            )
        heads = {head.chain: head for head in TrailHead.objects.all()}

        if use_fast:
            column_check = _column_check_started(outermost)
            results = _verify_fast(entries, digests=digests)
            # The columns, compared by the server; a chain that differs is walked here,
            # which names the event and the column.
            for chain in _column_mismatches(results, column_check()):
                results[chain] = _verify_reference(entries, digests=digests, only=chain)[chain]
        else:
            results = _verify_reference(entries, digests=digests)
        for chain in sorted(set(entries) - set(results)):
            # A chain the checkpoint sealed that has no events left at all.
            results[chain] = verify_segment(chain, [], checkpoint=entries[chain])
        for chain in sorted(set(heads) - set(results)):
            results[chain] = verify_segment(chain, [], checkpoint=None)
        report.chains = [
            _with_event_id(_check_head(results[chain], heads.get(chain)))
            for chain in sorted(results)
        ]
    report.seconds = time.perf_counter() - started
    return report


def _with_event_id(result: ChainResult) -> ChainResult:
    seq = result.verdict.broken_seq
    if result.intact or seq is None:
        return result
    event_id = (
        TrailEvent.objects.filter(chain=result.chain, seq=seq).values_list("pk", flat=True).first()
    )
    if event_id is None:
        return result
    return ChainResult(
        result.chain,
        result.verdict,
        first_seq=result.first_seq,
        trusted_prev=result.trusted_prev,
        checkpoint=result.checkpoint,
        checkpoint_checked=result.checkpoint_checked,
        digest=result.digest,
        event_id=event_id,
    )


def _check_head(result: ChainResult, head: TrailHead | None) -> ChainResult:
    """The head row moves with every append: a head past the last event means the tail was
    deleted (caught even before the next checkpoint)."""
    if not result.intact:
        return result
    verdict = result.verdict
    last_seq = verdict.head_seq or 0
    if head is None:
        if last_seq == 0:
            return result
        reason = said(gettext_noop("the chain has no head row (deleted?)"))
        broken = last_seq
    elif head.seq == last_seq and head.hash == verdict.head_hash:
        return result
    elif head.seq > last_seq:
        if head.seq == last_seq + 1:
            reason = said(
                gettext_noop(
                    "truncated: the head row records seq %(seq)s but event %(seq)s is missing"
                ),
                {"seq": head.seq},
            )
        else:
            reason = said(
                gettext_noop(
                    "truncated: the head row records seq %(seq)s but events %(first)s..%(seq)s "
                    "are missing"
                ),
                {"seq": head.seq, "first": last_seq + 1},
            )
        broken = last_seq + 1
    else:
        reason = said(
            gettext_noop("the head row records seq %(seq)s %(hash)s, not the last event"),
            {"seq": head.seq, "hash": head.hash[:16]},
        )
        broken = last_seq
    return ChainResult(
        result.chain,
        ChainVerdict(False, verdict.checked, verdict.head_seq, verdict.head_hash, broken, reason),
        first_seq=result.first_seq,
        checkpoint=result.checkpoint,
        checkpoint_checked=result.checkpoint_checked,
    )


def _db_links(chain: str | None) -> Iterator[tuple[str, ChainLink, dict[str, Any]]]:
    rows = TrailEvent.objects.order_by("chain", "seq")
    if chain is not None:
        rows = rows.filter(chain=chain)
    fields = ["chain", "seq", "prev_hash", "hash", "canonical"]
    fields += ["kind", "decision_id", "actor", "reason", "created_at"]
    for row in rows.values_list(*fields).iterator(chunk_size=5000):
        link = ChainLink(row[1], row[2], row[3], bytes(row[4]))
        columns = {
            "chain": row[0],
            "seq": row[1],
            "kind": row[5],
            "decision": row[6],
            "actor": row[7],
            "reason": row[8],
            "at": iso_time(row[9]),
        }
        yield row[0], link, columns


def _verify_reference(
    entries: Mapping[str, CheckpointEntry],
    *,
    digests: bool,
    only: str | None = None,
) -> dict[str, ChainResult]:
    """The plain walk (trail.chain) over every chain, or `only` one."""
    results: dict[str, ChainResult] = {}
    for chain, group in groupby(_db_links(only), key=itemgetter(0)):
        mismatch = Mismatch()
        links = columns_checked(((link, columns) for _, link, columns in group), mismatch)
        result = verify_segment(chain, links, checkpoint=entries.get(chain), digest_all=digests)
        # Drain what the verifier left after a break, so groupby moves to the next chain.
        for _ in links:
            pass
        results[chain] = with_mismatch(result, mismatch)
    return results


# The columns an auditor reads, against the hashed body, compared by the server in one pass.
# The ledger writes the body as canonical JSON with sorted keys, so when no text column holds
# a quote or a backslash (JSON then writes each as '"' + value + '"'), the body must start
# with {"actor":"..","at":"..","chain":"..","decision":..,"kind":"..","payload": and end with
# ,"reason":"..","seq":..,"v":1} built from the columns: a byte comparison at lengths computed
# from the columns (1.2-1.6 CPU-s per million events on the server, where parsing every body
# as jsonb took 4.6). A quote or backslash anywhere in them sends the row to the jsonb
# comparison instead (a value like `x\"y` would otherwise pass for the body's `x"y`); a
# control character cannot match raw bytes, so it fails the byte comparison and is then
# compared as jsonb too. IS NOT TRUE: a NULL on either side is a difference, never a pass. A
# body that is not UTF-8 JSON makes the cast fail: then every chain is walked here.
_PREFIX_BYTES = len('{"actor":"","at":"","chain":"","decision":,"kind":"","payload":') + 32
_SUFFIX_BYTES = len(f',"reason":"","seq":,"v":{BODY_VERSION}}}')


def _columns_sql(table: str) -> str:
    """The chains with an event whose columns differ from its body (see above)."""
    at = (
        "pg_catalog.to_char(event.created_at AT TIME ZONE 'UTC', "
        '\'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"\')'
    )
    decision = "COALESCE(event.decision_id::text, 'null')"
    texts = "(event.actor || event.chain || event.kind || event.reason)"
    prefix = (
        f"""'{{"actor":"' || event.actor || '","at":"' || {at} || '","chain":"' || """
        f"""event.chain || '","decision":' || {decision} || ',"kind":"' || event.kind || """
        """'","payload":'"""
    )
    suffix = (
        f"""',"reason":"' || event.reason || '","seq":' || event.seq::text || """
        f"""',"v":{BODY_VERSION}}}'"""
    )
    prefix_length = (
        f"{_PREFIX_BYTES} + octet_length(event.actor) + octet_length(event.chain) "
        f"+ octet_length({decision}) + octet_length(event.kind)"
    )
    suffix_length = f"{_SUFFIX_BYTES} + octet_length(event.reason) + octet_length(event.seq::text)"
    starts = (
        f"substring(event.canonical FROM 1 FOR {prefix_length}) "
        f"= pg_catalog.convert_to({prefix}, 'UTF8')"
    )
    ends = (
        f"substring(event.canonical FROM octet_length(event.canonical) + 1 - ({suffix_length})) "
        f"= pg_catalog.convert_to({suffix}, 'UTF8')"
    )
    parsed = (
        "(SELECT NOT (body.chain IS DISTINCT FROM event.chain "  # noqa: S608 - constants only
        "OR body.seq IS DISTINCT FROM event.seq OR body.kind IS DISTINCT FROM event.kind "
        "OR body.decision IS DISTINCT FROM event.decision_id "
        "OR body.actor IS DISTINCT FROM event.actor OR body.reason IS DISTINCT FROM event.reason "
        f"OR body.at IS DISTINCT FROM {at}) FROM pg_catalog.jsonb_to_record("
        "pg_catalog.convert_from(event.canonical, 'UTF8')::jsonb) AS body(actor text, at text, "
        "chain text, decision bigint, kind text, reason text, seq bigint))"
    )
    return (
        f"SELECT DISTINCT event.chain FROM {table} AS event WHERE (CASE "  # noqa: S608 - constants
        f"""WHEN strpos({texts}, '"') = 0 AND strpos({texts}, '\\') = 0 """
        f"AND {starts} AND {ends} THEN true ELSE {parsed} END) IS NOT TRUE"
    )


def _columns_differing() -> set[str] | None:
    """Chains with an event whose columns differ from its body; None when the bodies could
    not all be read as JSON (every chain must then be walked)."""
    table = connection.ops.quote_name(TrailEvent._meta.db_table)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_columns_sql(table))
            return {row[0] for row in cursor.fetchall()}
    except DatabaseError:
        return None


def _in_own_connection() -> set[str] | None:
    try:
        return _columns_differing()
    finally:
        connection.close()  # this thread's own connection


def _column_check_started(outermost: bool) -> Callable[[], set[str] | None]:
    """Start the column check beside the fast path: on its own connection in a thread when
    this verification is the outermost transaction (the server parses bodies while this
    process checks hashes), else (inside a caller's transaction, whose rows another
    connection could not see) in line, later."""
    if not outermost:
        return _columns_differing
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trail-columns")
    future = pool.submit(_in_own_connection)
    pool.shutdown(wait=False)
    return future.result


def _column_mismatches(results: Mapping[str, ChainResult], differing: set[str] | None) -> list[str]:
    """Chains (found intact by the fast path) whose columns must be walked here."""
    chains = set(results) if differing is None else differing
    return sorted(chain for chain in chains if chain in results and results[chain].intact)


# --- the PostgreSQL fast path ------------------------------------------------------------
#
# The reference walk builds a ChainLink per event and takes ~7 s per million. The fast path
# reads every event in id order in one streamed query and checks the raw values as they come
# (chain.BatchChecker): no Python object per event beyond what the hashing needs.
#
# Id order, not (chain, seq): it reads the table in the order it was written (0.6 s instead
# of 2 s per million rows on the server when zones interleave), and within a chain it is seq
# order, because a chain's next append takes its id only after the previous append
# committed (the head lock). A chain whose rows come otherwise, or fail any check, is walked
# again in seq order by the reference verifier, which names the event and the reason: the
# fast path only has to be exactly as strict, never as eloquent (tests compare the two on
# every kind of tampering).
#
# What costs, per million events, measured here (bench/bench_trail.py): hashing ~0.5 CPU-s in
# this process but ~1.3 on the server (sha256 through SQL sets OpenSSL up per call); a row
# per event costs this process ~0.8 CPU-s in tuples and generator steps alone, so the server
# packs the events of each block of _FAST_BLOCK ids into one row of arrays (in id order),
# which costs it less than that saves here. With every event hashed here this process is the
# slower side, so the server hashes the events with id % 8 < _SERVER_EIGHTHS and sends
# prev_hash and their 32-byte digest instead of prev_hash + canonical. Streaming (libpq 17+)
# lets the server send the next blocks while these are checked, where a server-side cursor
# waits for each FETCH; text columns arrive as their UTF-8 bytes, exactly the bytes hashed.
#
# A digest from the server is still a real verification: the server recomputes sha256 from
# the stored prev_hash and canonical bytes, and this process compares it with the stored hash
# and checks every seq, link, head row and checkpoint itself; a failing chain goes to the
# reference walk, which hashes here again. What it does not guard against is someone who
# controls the database server itself: against that, `verify_trail --file` checks an export
# offline with nothing but Python's hashlib, `verify_trail --deep` hashes every event here,
# and the checkpoints' signatures need a key the database does not hold.

_SERVER_EIGHTHS = 1
_FAST_BLOCK = 256  # ids per block
_FAST_SQL = (
    # Each block starts at the first id at or after the end of the previous one, so a gap in
    # the ids costs one index probe.
    "WITH RECURSIVE start (first) AS (SELECT min(id) FROM {table} UNION ALL "
    "SELECT (SELECT min(id) FROM {table} WHERE id >= start.first + {block}) "
    "FROM start WHERE start.first IS NOT NULL) "
    "SELECT block.* FROM start, LATERAL (SELECT array_agg(chain) AS chains, "
    "array_agg(seq) AS seqs, array_agg(hash) AS hashes, array_agg(hashed) AS hashed, "
    "array_agg(digest) AS digests FROM (SELECT chain, seq, hash, "
    # prev_hash + canonical to hash here, or prev_hash alone with the server's digest; NULL,
    # failing the chain, when prev_hash is not 64 bytes (so `hashed` starts with exactly it).
    "CASE WHEN octet_length(prev_hash) = 64 THEN CASE WHEN id % 8 < {eighths} "
    "THEN pg_catalog.convert_to(prev_hash, 'UTF8') "
    "ELSE pg_catalog.convert_to(prev_hash, 'UTF8') || canonical END END AS hashed, "
    "CASE WHEN id % 8 < {eighths} THEN "
    "pg_catalog.sha256(pg_catalog.convert_to(prev_hash, 'UTF8') || canonical) END AS digest "
    "FROM {table} WHERE id >= start.first AND id < start.first + {block} ORDER BY id"
    ") AS event) AS block WHERE start.first IS NOT NULL"
)


@contextlib.contextmanager
def _fast_rows(batch_size: int) -> Iterator[Iterator[Iterable[tuple[Any, ...]]]]:
    """The events as (chain, seq, hash, hashed, digest) rows, a block at a time, in id order,
    text columns as their UTF-8 bytes."""
    import psycopg
    from psycopg.types.string import ByteaBinaryLoader

    connection.ensure_connection()
    raw = connection.connection
    table = connection.ops.quote_name(TrailEvent._meta.db_table)
    sql = _FAST_SQL.format(eighths=int(_SERVER_EIGHTHS), block=int(_FAST_BLOCK), table=table)
    blocks_per_batch = max(1, batch_size // _FAST_BLOCK)
    if not psycopg.capabilities.has_stream_chunked():  # libpq before 17
        with raw.cursor(name="maria_trail_verify", binary=True) as server_cursor:
            _text_as_bytes(server_cursor, ByteaBinaryLoader)
            server_cursor.itersize = blocks_per_batch
            server_cursor.execute(sql)
            yield (zip(*block, strict=True) for block in server_cursor)
        return
    with psycopg.Cursor(raw) as cursor:
        _text_as_bytes(cursor, ByteaBinaryLoader)
        # One query the server answers without pausing: it sends the next blocks while these
        # are checked (the socket buffers them), where a server-side cursor would wait for
        # each FETCH.
        blocks: Any = cursor.stream(sql, binary=True, size=blocks_per_batch)
        try:
            yield (zip(*block, strict=True) for block in blocks)
        finally:
            blocks.close()  # stopped early: psycopg cancels the query and drains it


def _text_as_bytes(cursor: Any, loader: type) -> None:
    for text in ("varchar", "text"):
        cursor.adapters.register_loader(text, loader)


def _verify_fast(
    entries: Mapping[str, CheckpointEntry], *, digests: bool
) -> dict[str, ChainResult]:
    import psycopg  # only on PostgreSQL: SQLite installs need no psycopg

    checker = BatchChecker(
        {chain.encode(): entry.seq for chain, entry in entries.items()}, digest_all=digests
    )
    # A million rows would trigger full collections that scan every live object again and
    # again; nothing here makes reference cycles.
    collecting = gc.isenabled()
    gc.disable()
    try:
        # A savepoint: ids edited to the ends of bigint make the block arithmetic overflow,
        # and then the reference walk, which needs no ids, checks the whole trail instead.
        with transaction.atomic(), _fast_rows(_FAST_BATCH) as batches:
            for rows in batches:
                checker.feed(rows)
    except (DatabaseError, psycopg.Error):
        return _verify_reference(entries, digests=digests)
    finally:
        if collecting:
            gc.enable()

    results: dict[str, ChainResult] = {}
    for name, progress in checker.chains.items():
        chain = name.decode()
        checkpoint = entries.get(chain)
        head_seq = progress.head_seq
        short_of_checkpoint = checkpoint is not None and (
            head_seq < checkpoint.seq or progress.checkpoint_digest != checkpoint.digest
        )
        if progress.failed or short_of_checkpoint:
            # Let the reference walk say where and why.
            walked = _verify_reference(entries, digests=digests, only=chain)
            results[chain] = walked[chain]
            continue
        digest = progress.digest.hexdigest() if digests and progress.digest is not None else None
        results[chain] = ChainResult(
            chain,
            ChainVerdict(True, head_seq, head_seq or None, progress.prev.decode()),
            checkpoint=checkpoint,
            checkpoint_checked=checkpoint is not None,
            digest=digest,
        )
    return results
