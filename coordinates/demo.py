"""The demo organisation that `manage.py seed_demo` loads: zones, policies, people, an agent."""

from __future__ import annotations

from typing import Any

ZONES: list[tuple[str, str]] = [
    ("G1", "MARIA Holdings"),
    ("G1.U1", "Japan operations"),
    ("G1.U1.P1", "Finance"),
    ("G1.U1.P1.Z1", "Compliance"),
    ("G1.U1.P1.Z2", "Customer support"),
    ("G1.U1.P2", "Legal"),
    ("G1.U1.P2.Z1", "Contracts"),
]

# (zone, overrides, reason): a compliance zone is strict, customer support lenient
# (docs/math.md §11: tau 0.85 vs 0.50).
POLICIES: list[tuple[str, dict[str, Any], str]] = [
    ("G1", {"tau": 0.70, "refusal_floor": 0.40}, "Group baseline"),
    ("G1.U1.P1.Z1", {"tau": 0.85, "delta": 0.08, "approvals_required": 2}, "Regulated answers"),
    ("G1.U1.P1.Z2", {"tau": 0.50, "refusal_floor": 0.30, "review_sla_hours": 4}, "Fast support"),
]

# (username, role, scope, password): local demo logins only, printed by seed_demo.
PEOPLE: list[tuple[str, str, str, str]] = [
    ("reviewer", "reviewer", "G1.U1.P1", "demo-reviewer"),
    ("reviewer2", "reviewer", "G1.U1", "demo-reviewer2"),
    ("zoneadmin", "zone_admin", "G1.U1", "demo-zoneadmin"),
    ("auditor", "auditor", "G1", "demo-auditor"),
]

AGENT = "G1.U1.P1.Z1.A1"
# A fixed key so that seeding twice prints a token that still works. Local demo only:
# seed_demo refuses to run with DEBUG off.
AGENT_DEMO_KEY = "maria_demo_agent_G1U1P1Z1A1_local_only"
