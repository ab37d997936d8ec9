"""Sample documents written for the tests, in English and Japanese."""

POLICY_EN = """Travel and Expense Policy

1. Scope
This policy applies to all employees of the finance division.

2. Approval
Expenses above 500,000 yen require prior approval by the division head.
Expenses of 500,000 yen or less are approved by the team manager.

3. Reimbursement
Approved expenses are reimbursed within 30 days of submission.
"""

CONTRACT_JA = """業務委託契約書

第1条 目的
本契約は、甲が乙に対してシステム保守業務を委託することを目的とする。

第2条 委託料
甲は乙に対し、委託料として月額120万円を支払う。

第3条 支払期日
委託料は翌月末日までに支払うものとする。
"""
