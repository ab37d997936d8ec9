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
