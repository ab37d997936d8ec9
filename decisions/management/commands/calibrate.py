"""`manage.py calibrate --zone COORD`: propose a new calibration version for a zone from its
reviewers' verdicts and print its reliability before and after on the held-back verdicts.
It judges nothing until a zone admin adopts it (the zone's calibration page or the API)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from coordinates.coordinate import CoordinateError, Level, parse
from coordinates.models import Zone
from decisions.calibration import calibration_propose
from evidence import calibration

FIGURES = ("brier", "log_loss", "ece")


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


class Command(BaseCommand):
    help = (
        "Propose a calibration of the claim verifier for a zone from its reviewers' per-claim "
        "verdicts, and print its reliability on the held-back verdicts before and after."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--zone", required=True, help="a zone-tree node, G to G.U.P.Z")
        parser.add_argument(
            "--minimum",
            type=int,
            default=calibration.MIN_VERDICTS,
            help="verdicts needed before anything is proposed (default %(default)s)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            coordinate = parse(options["zone"])
        except CoordinateError as error:
            raise CommandError(f"--zone: {error}") from error
        if coordinate.level == Level.AGENT:
            raise CommandError(f"--zone: {coordinate} is an agent, not a zone")
        zone = Zone.objects.filter(coordinate=str(coordinate)).first()
        if zone is None:
            raise CommandError(f"--zone: unknown zone {coordinate}")
        if options["minimum"] < 2:
            raise CommandError("--minimum: at least 2 (one to fit on, one to measure)")
        proposal = calibration_propose(
            zone=zone, fitted_by="manage.py calibrate", minimum=options["minimum"]
        )
        row = proposal.calibration
        if row is None:
            raise CommandError(f"nothing proposed: {proposal.why_not}")
        self.stdout.write(
            f"Proposed calibration v{row.version} for {zone.coordinate} ({row.method}: "
            f"a={row.params['a']:.4f}, b={row.params['b']:.4f}), fitted on {row.verdicts} "
            f"verdicts from {row.window_from:%Y-%m-%d %H:%M} to {row.window_until:%Y-%m-%d %H:%M}."
        )
        held = row.reliability_before["n"]
        self.stdout.write(f"Reliability on the {held} held-back verdicts (lower is better):")
        self.stdout.write(f"  {'':<10} {'before':>10} {'after':>10}")
        for name in FIGURES:
            before = _figure(row.reliability_before[name])
            after = _figure(row.reliability_after[name])
            self.stdout.write(f"  {name:<10} {before:>10} {after:>10}")
        self.stdout.write(
            f"It judges nothing until a zone admin adopts it: /zones/{zone.coordinate}/calibration/"
        )
