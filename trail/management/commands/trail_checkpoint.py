"""`manage.py trail_checkpoint`: verify the trail and seal it as a new checkpoint (signed when
a key is configured; refused unsigned once checkpoints are signed)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from trail import checkpoints
from trail.ledger import TrailError
from trail.verify import TrailBroken


class Command(BaseCommand):
    help = (
        "Verify the whole trail, then record every chain's head and the digest of all its "
        "event hashes as a new checkpoint. Refuses when the trail does not verify."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            checkpoint = checkpoints.checkpoint_create()
        except TrailBroken as error:
            for line in error.report.lines():
                self.stderr.write(line)
            raise CommandError(f"not sealed: {error.report.summary()}") from error
        except TrailError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"checkpoint {checkpoint.seq}: {checkpoint.chains} chains, {checkpoint.events} "
            f"events, hash {checkpoint.hash}"
        )
        if not checkpoint.signature:
            self.stdout.write(
                f"unsigned: no signing key is configured ({checkpoints.KEY_SETTINGS}); once one "
                "is set, the next checkpoint is signed and supersedes this one"
            )
        elif covered := checkpoints.superseded(checkpoint):
            span = (
                f"checkpoint {covered[0]}"
                if len(covered) == 1
                else f"checkpoints {covered[0]}..{covered[-1]}"
            )
            self.stdout.write(
                f"signed with key {checkpoint.key_id}; it supersedes the unsigned {span} "
                "(written without the key): the trail is sealed again"
            )
        # The checkpoint only protects against someone who cannot also rewrite this table.
        self.stdout.write(
            "Keep this hash outside the database; `verify_trail --checkpoint HASH` checks it."
        )
