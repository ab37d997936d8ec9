"""The demo documents that `manage.py seed_demo` ingests: (file, zone, kind, title)."""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "demo_documents"

DOCUMENTS: list[tuple[str, str, str, str]] = [
    ("expense-policy.md", "G1.U1.P1.Z1", "policy", "Travel and Expense Policy"),
    ("compliance-minutes.md", "G1.U1.P1.Z1", "minutes", "Compliance Committee Minutes"),
    ("support-faq.txt", "G1.U1.P1.Z2", "policy", "Customer Support FAQ"),
    ("maintenance-contract-ja.txt", "G1.U1.P2.Z1", "contract", "業務委託契約書"),
]

# Answers the demo agent submits when the demo is seeded, so that each demo reviewer's queue
# has work on the first visit: (idempotency key, question, answer, [(document key, paragraph
# number)]). The compliance zone sends every one of them to people (tau 0.85, two approvals);
# the key makes a restart submit none twice, nor again once a reviewer decided it.
WAITING: list[tuple[str, str, str, list[tuple[str, int]]]] = [
    (
        "demo-waiting-1",
        "Who approves a 600,000 yen equipment purchase?",
        # Said in other words than the policy's, so the engine cannot vouch for it alone
        # (in the policy's own words it is verified and released without a person).
        "Purchases over 500,000 yen need the division head's sign-off beforehand.",
        [("demo/expense-policy.md", 2)],
    ),
    (
        "demo-waiting-2",
        "Who signs off a 300,000 yen training course?",
        "Expenses of 500,000 yen or less are approved by the team manager, within 30 days.",
        [("demo/expense-policy.md", 3)],
    ),
    (
        "demo-waiting-3",
        "How often are large vendors reviewed?",
        "Vendors with annual spend above 10 million yen must be reviewed every 12 months.",
        [("demo/compliance-minutes.md", 3)],
    ),
]
