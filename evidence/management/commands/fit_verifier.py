"""`manage.py fit_verifier --corpus PATH... --out FILE`: fit the claim verifier's model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evidence import corpora
from evidence.verifier import DEFAULT_MODEL
from evidence.verifier_fit import fit


class Command(BaseCommand):
    help = (
        "Fit the claim verifier on labelled corpora (a folder of SummEdits files, a JNLI "
        ".jsonl, the reviews export of GET /api/v1/reviews/export/, the grounding corpus "
        "JSON) and write the model as JSON: its weights, "
        "calibration, the corpora's hashes, the date and the held-out figures."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", nargs="+", required=True, type=Path, metavar="PATH")
        parser.add_argument("--out", type=Path, default=DEFAULT_MODEL, metavar="FILE")

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[Path] = options["corpus"]
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise CommandError(f"no such corpus: {', '.join(missing)}")
        examples = [example for path in paths for example in corpora.read(path)]
        try:
            model = fit(examples, sources=paths)
        except ValueError as error:
            raise CommandError(str(error)) from error
        out: Path = options["out"]
        out.write_text(json.dumps(model.as_json(), indent=1, ensure_ascii=False) + "\n")
        provenance = model.provenance
        self.stdout.write(
            f"fitted on {provenance['fitted_on']} examples, measured on "
            f"{provenance['measured_on']}; wrote {out}"
        )
        for corpus, figures in provenance["held_out"].items():
            self.stdout.write(f"  {corpus}: {json.dumps(figures)}")
