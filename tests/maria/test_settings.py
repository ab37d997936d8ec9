"""Production mode is strict: it refuses to start half-configured and passes check --deploy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOOD_KEY = "k" * 20 + "Xy7#pQ2!vR9@mN4$" + "z" * 30


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    return subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_production_refuses_to_start_without_a_secret_key() -> None:
    result = manage("check", DJANGO_DEBUG="0", DJANGO_ALLOWED_HOSTS="maria.example")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_production_refuses_to_start_without_allowed_hosts() -> None:
    result = manage("check", DJANGO_DEBUG="0", DJANGO_SECRET_KEY=GOOD_KEY)
    assert result.returncode != 0
    assert "DJANGO_ALLOWED_HOSTS must be set" in result.stderr


def test_check_deploy_is_clean_in_production_mode() -> None:
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=GOOD_KEY,
        DJANGO_ALLOWED_HOSTS="maria.example",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
