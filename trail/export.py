"""The trail as JSON Lines, and verifying such an export offline."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from typing import Any

from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from coordinates.coordinate import Coordinate, CoordinateError, parse
from coordinates.selectors import beneath
from maria.wording import gettext_noop, said
from trail import witness
from trail.chain import (
    GENESIS,
    ChainLink,
    ChainVerdict,
    chain_hash,
)
from trail.ledger import CHECKPOINT_TYPE, EXPORT_FORMAT, LANE_MARK, chain_node, iso_time
from trail.models import TrailCheckpoint, TrailEvent
from trail.signing import PublicKey
from trail.verify import (
    ChainResult,
    CheckpointEntry,
    Mismatch,
    TrailReport,
    checked_with,
    checkpoint_entries,
    columns_checked,
    signature_problems,
    verify_segment,
    with_mismatch,
)

# --- export ------------------------------------------------------------------------------

SEALED_TYPE = "trail.sealed"  # one line per checkpoint: seq, prev_hash, hash, signature


def _scope_filter(scopes: Sequence[Coordinate] | None) -> Q:
    if scopes is None:
        return Q()
    condition = Q(pk__in=[])
    for scope in scopes:
        condition |= beneath(scope, "chain") | Q(chain__startswith=f"{scope}{LANE_MARK}")
    return condition


def _in_scope(chain: str, scopes: Sequence[Coordinate] | None) -> bool:
    if scopes is None:
        return True
    try:
        coordinate = parse(chain_node(chain))
    except CoordinateError:
        return False
    return any(scope.covers(coordinate) for scope in scopes)


def _json_line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


Appendix = Callable[[list[dict[str, Any]]], Iterable[dict[str, Any]]]
# Checks an export's appendix records against its events' bodies: (problems, rows checked).
AppendixCheck = Callable[[list[dict[str, Any]], list[dict[str, Any]]], tuple[list[str], int]]


def export_lines(
    *,
    scopes: Sequence[Coordinate] | None,
    since: datetime | None = None,
    label: str = "",
    appendix: Appendix | None = None,
) -> Iterator[str]:
    """The trail as JSON Lines: a header, the latest checkpoint's seal, every checkpoint's
    seq, hashes and signature, the latest checkpoint's entries for these chains,
    every event (whole chains, or each chain from its first event at or after `since`), an
    end line with the count. `verify_trail --file` checks it without the database.

    Each event line carries chain, seq, prev_hash, hash and `canonical`: the exact hashed
    bytes as a JSON string, which round-trips to the same UTF-8 bytes. `appendix`, given the
    exported events' bodies, yields records (typed "evidence.*": the evidence the events
    name, audit.integrity) written after the events, before the end line.
    """
    yield _json_line(
        {
            "type": "trail.export",
            "format": EXPORT_FORMAT,
            "scope": label or "all",
            "since": iso_time(since) if since is not None else None,
            "exported_at": iso_time(timezone.now()),
        }
    )
    checkpoint = TrailCheckpoint.objects.order_by("-seq").first()
    if checkpoint is not None:
        # The whole seal with its signature, so `verify_trail --file --public-key` can check
        # the entries below were signed (a seal lists every chain; the entries, these).
        yield _json_line(witness.statement(checkpoint))
        # Every checkpoint, compactly: with `verify_trail --witness`, each one the witness holds
        # must be here unchanged, and they must run from 1 without a gap.
        sealed = (
            TrailCheckpoint.objects.filter(seq__lte=checkpoint.seq).order_by("seq")
        ).values_list("seq", "prev_hash", "hash", "signature", "key_id")
        for seq, prev_hash, sealed_hash, signature, key_id in sealed.iterator(chunk_size=2000):
            yield _json_line(
                {
                    "type": SEALED_TYPE,
                    "checkpoint": seq,
                    "prev_hash": prev_hash,
                    "hash": sealed_hash,
                    "signature": signature or "",
                    "key_id": key_id or "",
                }
            )
        for chain, entry in sorted(checkpoint_entries(checkpoint).items()):
            if _in_scope(chain, scopes):
                yield _json_line(
                    {
                        "type": CHECKPOINT_TYPE,
                        "checkpoint": checkpoint.seq,
                        "checkpoint_hash": checkpoint.hash,
                        "created_at": iso_time(checkpoint.created_at),
                        "chain": chain,
                        "seq": entry.seq,
                        "hash": entry.hash,
                        "digest": entry.digest,
                    }
                )
    rows = TrailEvent.objects.filter(_scope_filter(scopes))
    if since is not None:
        first_since = (
            TrailEvent.objects.filter(chain=OuterRef("chain"), created_at__gte=since)
            .order_by("seq")
            .values("seq")[:1]
        )
        # From each chain's first event since then on, so every chain is one whole segment.
        rows = rows.filter(seq__gte=Subquery(first_since))
    count = 0
    bodies: list[dict[str, Any]] = []
    columns = ("pk", "chain", "seq", "prev_hash", "hash", "canonical")
    for pk, chain, seq, prev_hash, event_hash, canonical in (
        rows.order_by("chain", "seq").values_list(*columns).iterator(chunk_size=2000)
    ):
        count += 1
        if appendix is not None:
            bodies.extend(_body(bytes(canonical)))
        yield _json_line(
            {
                "type": "trail.event",
                "id": pk,
                "chain": chain,
                "seq": seq,
                "prev_hash": prev_hash,
                "hash": event_hash,
                # Stored bytes are UTF-8 by construction; bytes that are not were tampered
                # with, and any stand-in fails the hash check just as well.
                "canonical": bytes(canonical).decode("utf-8", errors="replace"),
            }
        )
    records = 0
    if appendix is not None:
        for record in appendix(bodies):
            records += 1
            yield _json_line(record)
    yield _json_line({"type": "trail.end", "events": count, "records": records})


def _body(canonical: bytes) -> list[dict[str, Any]]:
    """The decoded body, or nothing when the bytes are not a JSON object (the chain's own
    verification reports them as altered)."""
    try:
        body = json.loads(canonical)
    except ValueError:
        return []
    return [body] if isinstance(body, dict) else []


# --- verifying an export -----------------------------------------------------------------


class _ExportFormatError(ValueError):
    """The export cannot be read on; its one argument says where and why (`said`)."""

    def __init__(self, number: int, template: str, parts: Mapping[str, object] | None = None):
        what = said(template, parts)
        super().__init__(
            said(gettext_noop("line %(line)s: %(what)s"), {"line": number, "what": what})
        )

    @property
    def problem(self) -> str:
        return self.args[0]  # type: ignore[no-any-return]


def _records(lines: Iterable[str | bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            raise _ExportFormatError(
                number, gettext_noop("not JSON (%(error)s)"), {"error": error}
            ) from None
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise _ExportFormatError(number, gettext_noop("not a trail record"))
        yield number, record


def _event_link(number: int, record: Mapping[str, Any]) -> tuple[str, ChainLink]:
    try:
        chain, seq = record["chain"], record["seq"]
        prev_hash, event_hash, canonical = record["prev_hash"], record["hash"], record["canonical"]
    except KeyError as error:
        raise _ExportFormatError(
            number, gettext_noop("event without %(field)s"), {"field": repr(error.args[0])}
        ) from None
    if not (
        isinstance(chain, str)
        and isinstance(seq, int)
        and isinstance(prev_hash, str)
        and isinstance(event_hash, str)
        and isinstance(canonical, str)
    ):
        raise _ExportFormatError(number, gettext_noop("an event field has the wrong type"))
    # surrogatepass: escapes such as \ud800 in a doctored file become bytes that simply fail
    # the hash check instead of stopping the verifier.
    body = canonical.encode("utf-8", errors="surrogatepass")
    return chain, ChainLink(seq, prev_hash, event_hash, body)


@dataclass(slots=True)
class _ExportState:
    trusted_start: bool = False
    entries: dict[str, CheckpointEntry] = field(default_factory=dict)
    checkpoints: set[tuple[Any, Any]] = field(default_factory=set)
    events: int = 0
    end: dict[str, Any] | None = None
    records: list[dict[str, Any]] = field(default_factory=list)  # the appendix
    bodies: list[dict[str, Any]] | None = None  # decoded events, for an appendix check
    seal: dict[str, Any] | None = None
    sealed: list[witness.Seal] = field(default_factory=list)  # every checkpoint, compactly
    watch: dict[str, int] = field(default_factory=dict)  # chain -> seq the witness sealed
    hash_at: dict[str, str] = field(default_factory=dict)  # the hash found at that seq


def _export_events(
    records: Iterator[tuple[int, dict[str, Any]]], state: _ExportState
) -> Iterator[tuple[str, ChainLink, dict[str, Any]]]:
    """Event links in file order; checkpoint and end records update `state` on the way."""
    for number, record in records:
        kind = record["type"]
        if state.end is not None:
            raise _ExportFormatError(number, gettext_noop("records after the end line"))
        if kind == SEALED_TYPE:
            if state.events or state.entries:
                raise _ExportFormatError(
                    number, gettext_noop("a checkpoint list line out of place")
                )
            try:
                state.sealed.append(
                    witness.Seal(
                        int(record["checkpoint"]),
                        str(record["prev_hash"]),
                        str(record["hash"]),
                        str(record.get("signature") or ""),
                        str(record.get("key_id") or ""),
                    )
                )
            except (KeyError, TypeError, ValueError):
                raise _ExportFormatError(
                    number, gettext_noop("malformed checkpoint line")
                ) from None
        elif kind == "trail.seal":
            if state.events or state.entries:
                raise _ExportFormatError(number, gettext_noop("the seal must come before the rest"))
            state.seal = record
        elif kind == CHECKPOINT_TYPE:
            if state.events:
                raise _ExportFormatError(number, gettext_noop("a checkpoint after the events"))
            try:
                entry = CheckpointEntry(
                    int(record["seq"]), str(record["hash"]), str(record["digest"])
                )
                state.entries[str(record["chain"])] = entry
            except (KeyError, TypeError, ValueError):
                raise _ExportFormatError(number, gettext_noop("malformed checkpoint")) from None
            state.checkpoints.add((record.get("checkpoint"), record.get("checkpoint_hash")))
        elif kind == "trail.event":
            if state.records:
                raise _ExportFormatError(
                    number, gettext_noop("an event after the evidence records")
                )
            chain, link = _event_link(number, record)
            state.events += 1
            if state.watch.get(chain) == link.seq:
                state.hash_at[chain] = link.hash
            if state.bodies is not None:
                state.bodies.extend(_body(link.canonical))
            # The line's chain and seq are what the verifier groups and orders by; the body
            # is what was hashed. They must agree, or a renamed chain would verify.
            yield chain, link, {"chain": chain, "seq": link.seq}
        elif kind == "trail.end":
            state.end = record
        elif kind.startswith("evidence."):
            state.records.append(record)
        else:
            raise _ExportFormatError(
                number, gettext_noop("unknown record type %(type)s"), {"type": repr(kind)}
            )


def verify_export(
    lines: Iterable[str | bytes],
    *,
    source: str,
    appendix_check: AppendixCheck | None = None,
    public_keys: Sequence[PublicKey] = (),
    witnessed: witness.WitnessLog | None = None,
) -> TrailReport:
    """Verify a JSON Lines export offline (no database): every chain segment, the body's
    own chain and seq against the line's, the checkpoint entries it carries, and the end
    line's count (a cut-off file has none). With `public_keys`, the export's seal must be
    signed by one of them and hold exactly its checkpoint entries. `appendix_check` re-checks
    the evidence records an `?include=evidence` export carries against the events' hashes
    (audit.integrity).

    A `since` export starts chains mid-way: their first prev_hash is taken on trust and the
    report says so. A full export must start every chain at seq 1. The checkpoint entries
    come from the server that made the export: compare the checkpoint hash in the report
    with one you kept.
    """
    started = time.perf_counter()
    report = TrailReport(source=source)
    state = _ExportState(bodies=[] if appendix_check is not None else None)
    if witnessed is not None:
        state.watch = {chain: seq for chain, (seq, _) in witnessed.latest_chains.items()}
    records = _records(lines)
    done: set[str] = set()
    try:
        first = next(records, None)
        if first is None or first[1]["type"] != "trail.export":
            raise _ExportFormatError(1, gettext_noop("not a trail export (no trail.export header)"))
        header = first[1]
        if header.get("format") != EXPORT_FORMAT:
            raise _ExportFormatError(
                1, gettext_noop("unknown format %(format)s"), {"format": repr(header.get("format"))}
            )
        state.trusted_start = header.get("since") is not None
        for chain, group in groupby(_export_events(records, state), key=itemgetter(0)):
            if chain in done:
                report.problems.append(
                    said(
                        gettext_noop("chain %(chain)s appears in more than one place"),
                        {"chain": chain},
                    )
                )
                for _ in group:
                    pass
                continue
            done.add(chain)
            mismatch = Mismatch()
            links = columns_checked(((link, cols) for _, link, cols in group), mismatch)
            result = verify_segment(
                chain,
                links,
                checkpoint=state.entries.get(chain),
                trusted_start=state.trusted_start,
            )
            for _ in links:
                pass
            report.chains.append(with_mismatch(result, mismatch))
        for chain in sorted(set(state.entries) - done):
            entry = state.entries[chain]
            if state.trusted_start:
                # Nothing happened in this chain since then: nothing to check it against.
                empty = ChainVerdict(True, 0, None, GENESIS)
                report.chains.append(ChainResult(chain, empty, checkpoint=entry))
            else:
                # A full export claims a checkpoint for a chain but carries none of its events.
                report.chains.append(verify_segment(chain, [], checkpoint=entry))
        report.problems.extend(_seal_problems(state, public_keys))
        report.problems.extend(_sealed_list_problems(state))
        if witnessed is not None:
            _witness_problems(report, state, witnessed, header, public_keys)
        if public_keys:
            report.signatures = checked_with(public_keys)
        if len(state.checkpoints) > 1:
            report.problems.append(
                said(gettext_noop("the export mixes entries of different checkpoints"))
            )
        elif state.checkpoints:
            number, checkpoint_hash = next(iter(state.checkpoints))
            report.checkpoint = said(
                gettext_noop("#%(seq)s hash %(hash)s (as the export states it)"),
                {"seq": number, "hash": checkpoint_hash},
            )
        if state.end is None:
            report.problems.append(said(gettext_noop("the export has no end line (cut off?)")))
        elif state.end.get("events") != state.events:
            report.problems.append(
                said(
                    gettext_noop(
                        "the end line counts %(counted)s events, the export has %(found)s"
                    ),
                    {"counted": state.end.get("events"), "found": state.events},
                )
            )
        elif state.end.get("records", 0) != len(state.records):
            report.problems.append(
                said(
                    gettext_noop(
                        "the end line counts %(counted)s evidence records, the export has %(found)s"
                    ),
                    {"counted": state.end.get("records"), "found": len(state.records)},
                )
            )
        if appendix_check is not None and state.bodies is not None:
            problems, report.evidence_checked = appendix_check(state.bodies, state.records)
            report.problems.extend(problems)
    except _ExportFormatError as error:
        report.problems.append(error.problem)
    report.chains.sort(key=lambda result: result.chain)
    report.seconds = time.perf_counter() - started
    return report


def _seal_problems(state: _ExportState, keys: Sequence[PublicKey]) -> list[str]:
    seal = state.seal
    if seal is None:
        if keys and state.entries:
            return [said(gettext_noop("the export carries checkpoint entries but no signed seal"))]
        return []
    try:
        canonical = str(seal["canonical"]).encode("utf-8", errors="surrogatepass")
        sealed, prev_hash = str(seal["hash"]), str(seal["prev_hash"])
        chains = json.loads(canonical)["chains"]
        listed = {
            name: CheckpointEntry(int(entry["seq"]), str(entry["hash"]), str(entry["digest"]))
            for name, entry in chains.items()
        }
    except (KeyError, TypeError, ValueError, AttributeError):
        return [said(gettext_noop("the export's seal is malformed"))]
    if chain_hash(prev_hash, canonical) != sealed:
        return [
            said(
                gettext_noop("the export's seal %(seq)s does not hash to its hash"),
                {"seq": seal.get("checkpoint")},
            )
        ]
    for chain, entry in state.entries.items():
        if listed.get(chain) != entry:
            return [
                said(
                    gettext_noop(
                        "the checkpoint entry of chain %(chain)s differs from the sealed one"
                    ),
                    {"chain": chain},
                )
            ]
    return signature_problems(
        [(int(seal.get("checkpoint") or 0), sealed, seal.get("signature"), seal.get("key_id"))],
        keys,
    )


def _sealed_list_problems(state: _ExportState) -> list[str]:
    """The checkpoint list runs from 1 without a gap and ends at the seal."""
    if not state.sealed:
        return []
    problems = witness.seal_link_problems(state.sealed)
    last = max(state.sealed, key=lambda seal: seal.seq)
    seal = state.seal
    if seal is not None and (seal.get("checkpoint"), seal.get("hash")) != (last.seq, last.hash):
        problems.append(
            said(
                gettext_noop(
                    "the export's seal is checkpoint %(seal)s, but its checkpoint list ends at "
                    "%(last)s"
                ),
                {"seal": seal.get("checkpoint"), "last": last.seq},
            )
        )
    return problems


def _witness_problems(
    report: TrailReport,
    state: _ExportState,
    witnessed: witness.WitnessLog,
    header: Mapping[str, Any],
    keys: Sequence[PublicKey],
) -> None:
    report.problems.extend(
        witness.checkpoint_problems(
            witnessed, state.sealed, where=said(gettext_noop("export")), keys=keys
        )
    )
    label = str(header.get("scope") or "all")
    scopes: list[Coordinate] | None = None
    if label != "all":
        try:
            scopes = [parse(part) for part in label.split(",")]
        except CoordinateError:
            scopes = []  # a range this verifier cannot read: only the chains it carries
    present = {result.chain: result for result in report.chains}
    heads: dict[str, int | None] = {}
    for chain in witnessed.latest_chains:
        result = present.get(chain)
        if result is None:
            # A full export must carry every chain of its range; a `since` export leaves
            # out the chains with nothing new.
            if not state.trusted_start and _in_scope(chain, scopes):
                heads[chain] = None
        elif result.intact:
            heads[chain] = result.verdict.head_seq
    report.problems.extend(
        witness.chain_problems(
            witnessed,
            heads=heads,
            hash_at=lambda chain, _seq: state.hash_at.get(chain),
            covers=lambda _chain: True,
        )
    )
    report.witness = witness.behind(witnessed, state.sealed)
