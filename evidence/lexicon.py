"""The word lists behind grounding (evidence.grounding): antonym groups, negation cues,
party and role words, bound words, and the words that restrict or condition a claim.

Pure data: no Django and no app code; grounding builds its indexes and patterns from these.
"""

from __future__ import annotations


def _word_list(words: str) -> list[str]:
    return words.split()


# --- reversal cues ----------------------------------------------------------------------

# Antonym groups: (name, words meaning "yes", words meaning "the opposite"). A side word
# combined with a negation flips: "not required" == "optional", "許可されない" == "禁止".
_GROUPS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    (
        "requirement",
        (
            "required",
            "require",
            "requirement",
            "mandatory",
            "must",
            "need",
            "necessary",
            "compulsory",
            "obligatory",
            "必要",
            "必須",
            "義務",
            "要する",
        ),
        ("optional", "voluntary", "unnecessary", "discretionary", "不要", "任意", "不必要"),
    ),
    (
        "permission",
        (
            "allowed",
            "allow",
            "permitted",
            "permit",
            "may",
            "can",
            "authorised",
            "authorized",
            "許可",
            "可能",
            "認める",
            "出来る",
            "可",
        ),
        (
            "prohibited",
            "prohibit",
            "forbidden",
            "forbid",
            "banned",
            "ban",
            "disallowed",
            "禁止",
            "不可",
            "不可能",
            "不許可",
            "禁ずる",
        ),
    ),
    (
        "approval",
        (
            "approve",
            "approved",
            "approval",
            "accept",
            "accepted",
            "grant",
            "granted",
            "承認",
            "承諾",
            "可決",
            "採用",
            "受理",
            "認可",
        ),
        (
            "reject",
            "rejected",
            "rejection",
            "deny",
            "denied",
            "decline",
            "declined",
            "refuse",
            "却下",
            "否決",
            "否認",
            "不承認",
            "拒否",
            "不採用",
            "拒絶",
        ),
    ),
    (
        "change",
        (
            "increase",
            "increased",
            "rise",
            "raise",
            "grow",
            "growth",
            "higher",
            "more",
            "gain",
            "増加",
            "増額",
            "上昇",
            "増える",
            "増やす",
            "拡大",
            "引き上げる",
            "高い",
            "多い",
        ),
        (
            "decrease",
            "decreased",
            "reduce",
            "reduced",
            "reduction",
            "fall",
            "decline",
            "cut",
            "lower",
            "less",
            "fewer",
            "loss",
            "減少",
            "減額",
            "低下",
            "減る",
            "減らす",
            "縮小",
            "引き下げる",
            "低い",
            "少ない",
        ),
    ),
    (
        "time",
        (
            "before",
            "prior to",
            "in advance",
            # "within 14 days" ends before a deadline; "after 14 days" starts at it.
            "within",
            "beforehand",
            "earlier",
            "事前",
            "前",
            "以前",
            "予め",
            "あらかじめ",
        ),
        (
            "after",
            "afterwards",
            "following",
            "later",
            "retroactively",
            "事後",
            "後",
            "以降",
            "以後",
        ),
    ),
    (
        "bound",
        (
            "at least",
            "more than",
            "above",
            "exceed",
            "exceeds",
            "exceeding",
            "or more",
            "or above",
            "or greater",
            "minimum of",
            "以上",
            "超",
            "越える",
            "超過",
        ),
        (
            "at most",
            "less than",
            "fewer than",
            "below",
            "up to",
            "or less",
            "or fewer",
            "or below",
            "maximum of",
            "以下",
            "未満",
            "以内",
        ),
    ),
    (
        # Whether a bound includes its number: "at least 5" (5 counts) against "more than 5"
        # (it does not), 以上 against 超, 以下 against 未満. A negation flips this as it flips
        # the direction: not (x >= 5) is x < 5.
        "edge",
        (
            "at least",
            "or more",
            "or above",
            "or greater",
            "minimum of",
            "at most",
            "or less",
            "or fewer",
            "or below",
            "up to",
            "maximum of",
            "以上",
            "以下",
            "以内",
        ),
        (
            "more than",
            "above",
            "exceed",
            "exceeds",
            "exceeding",
            "less than",
            "fewer than",
            "below",
            "超",
            "超過",
            "越える",
            "未満",
        ),
    ),
    (
        "limit",
        ("maximum", "max", "upper limit", "cap", "ceiling", "上限", "最大", "最高"),
        ("minimum", "min", "lower limit", "floor", "下限", "最小", "最低"),
    ),
    (
        "scope",
        ("include", "included", "including", "含む", "含める", "対象"),
        ("exclude", "excluded", "excluding", "except", "除く", "除外", "対象外"),
    ),
    (
        "validity",
        ("valid", "effective", "eligible", "有効", "適用"),
        ("invalid", "void", "ineligible", "無効", "適用外"),
    ),
    ("charge", ("charged", "fee", "有料"), ("free", "free of charge", "無料")),
    ("locus", ("internal", "内部", "社内"), ("external", "外部", "社外")),
    ("duration", ("permanent", "indefinite", "無期"), ("temporary", "fixed-term", "有期", "一時")),
]
# Phrases whose "no"/"not" is not a negation of the statement, and what they mean.
_NEUTRAL_PHRASES = [
    # Prohibitions said with a negation mean "prohibited", not "not required".
    (r"\b(?:must|shall|may) not\b|\bmustn't\b", "prohibited"),
    (r"(?:て|で)も?(?:よい|良い|いい|構わない|かまわない)", "ことを許可"),
    (r"(?:て|で)は(?:ならない|ならず|いけない|いけません|なりません)", "ことを禁止"),
    (r"\bno later than\b|\bnot later than\b", "by"),
    (r"\bno earlier than\b|\bnot earlier than\b", "from"),
    (r"\b(?:no|not) more than\b|\bnot exceeding\b|\bnot to exceed\b", "at most"),
    (r"\b(?:no|not) (?:less|fewer) than\b", "at least"),
    (r"\bnot only\b|\bwhether or not\b|\bno one else\b", ""),
]

# Words that negate a statement: English words, Japanese auxiliaries and prefixes.
_EN_NEGATIONS = frozenset(
    {"not", "no", "never", "without", "none", "cannot", "neither", "nor", "non"}
)
_JA_NEGATION_AUX = frozenset({"ない", "ず", "ぬ", "ん"})
_JA_NEGATION_PREFIX = frozenset({"不", "非", "無", "未"})


# --- parties and roles ------------------------------------------------------------------

# Parties whose roles a claim can swap (who pays, who approves).
_EN_PARTIES = _word_list(
    "buyer seller supplier customer client contractor subcontractor vendor purchaser "
    "employee employer licensor licensee landlord tenant lessor lessee lender borrower "
    "manager director board committee applicant requester approver auditor company "
    "consultant agent principal provider recipient member chair ceo cfo head team department"
)
_JA_PARTIES = frozenset(
    _word_list(
        "甲 乙 丙 丁 買主 売主 発注者 受注者 委託者 受託者 貸主 借主 申請者 承認者 従業員 社員 "
        "会社 当社 部長 課長 社長 取締役会 委員会 顧客 供給者 購入者 販売者 本部長 委員長 "
        "買手 売手 賃貸人 賃借人 派遣元 派遣先"
    )
)
# Names of one role: the directors acting together are the board.
_PARTY_ALIASES = {"director": "board"}
# The word before a party that names it the one acting ("paid by the buyer", "from the
# seller"), and the verbs of the passive, after which "by" does so.
_AGENT_MARKERS = frozenset({"by", "from"})
_PASSIVE = frozenset({"is", "are", "was", "were", "be", "been", "being"})
# After a preposition a party is not the subject: "to the seller", "at the board meeting",
# "before the finance team reimburses it" (a subordinate clause's subject).
_NOT_AGENT_MARKERS = frozenset(
    _word_list(
        "of to for with on against at in into during under within after before upon about "
        "between among through via per without"
    )
)


# --- bounds on a number -----------------------------------------------------------------

# A bound belongs to its number: "more than 5 days ... at least two weeks" holds two. Each
# word -> (0 lower / 1 upper bound, 0 inclusive / 1 strict).
_BOUND_KINDS = {
    **dict.fromkeys(
        ("at least", "minimum of", "or more", "or above", "or greater", "以上"), (0, 0)
    ),
    **dict.fromkeys(("more than", "above", "exceed", "exceeds", "exceeding", "超", "超過"), (0, 1)),
    **dict.fromkeys(("at most", "up to", "maximum of", "or less", "or fewer", "or below"), (1, 0)),
    **dict.fromkeys(("以下", "以内"), (1, 0)),
    **dict.fromkeys(("less than", "fewer than", "below", "未満"), (1, 1)),
}


# --- restrictions and conditions --------------------------------------------------------

# Words that restrict or condition a claim. A condition is where a claim can add a fact while
# reusing the paragraph's words ("receipts are only required on international trips"), so it
# is held to more than the claim's overall coverage, unless the paragraph states a condition
# with the same word (then coverage judges). A restriction ("only") must be wholly in the
# paragraph; a condition ("if", 場合) may paraphrase, but not with most of its key terms new
# ("if their manager approves it"; "if an item costs over 5,000 yen" stays a paraphrase).
# English conditions run from the word to the end of the clause; Japanese ones end at the
# word (上長の承認を得た場合).
_RESTRICTIONS = ("only", "solely", "exclusively", "のみ", "だけ", "限り", "限る")
_CONDITIONS = ("if", "when", "whenever", "unless", "provided", "as long as", "subject to")
_CONDITIONS_JA = ("場合", "ときは", "際は")


# --- negating prefixes ------------------------------------------------------------------

# Prefixes that turn a word into its opposite: unpaid, non-refundable, invalid, disallowed.
_NEGATING_PREFIXES = ("un", "non", "in", "dis")


# --- opposites WordNet lacks ------------------------------------------------------------

# The domain table of evidence.wordnet: (words, their opposites, source). Read both ways,
# every word of the first against every word of the second, beside WordNet 3.0's antonym
# links; English words are matched on their WordNet base forms ("approved" is "approve",
# "exceeding" is "exceed"). Only what WordNet does not link: bound words are prepositions
# and phrases, quantifiers and modal verbs are mostly not in it, some everyday pairs are
# missing, and it has no Japanese. The source says where each pair comes from.
OPPOSITES: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    (
        ("over", "above", "exceed", "more than", "at least"),
        ("under", "below", "less than", "fewer than", "at most", "up to"),
        "WordNet lacks: bound words are prepositions and phrases; it links only above/below, "
        "more/less and at least/at most (evidence.lexicon 'bound'; issue examples over/under, "
        "exceeding/under)",
    ),
    (
        ("all", "every", "each"),
        ("some", "none", "no"),
        "WordNet lacks: it links the adjectives all/some/no only; every, each and none have no "
        "links (issue example all/some)",
    ),
    (("some",), ("none",), "WordNet lacks: none is not in it (one or more against not one)"),
    (
        ("always",),
        ("never", "sometimes"),
        "WordNet lacks: it links never/ever only (quantifiers over time, as all/some/none)",
    ),
    (
        ("must", "shall", "required", "mandatory"),
        ("may", "optional"),
        "WordNet lacks: modal verbs are not in it, and it links optional to obligatory only "
        "(evidence.lexicon 'requirement'; issue example must/may)",
    ),
    (
        ("entitled to",),
        ("may request",),
        "issue example: a right against a request that needs granting (the remote-work policy "
        "of tests/decisions/test_answer_checked.py)",
    ),
    (
        ("approve", "approval"),
        ("reject", "rejection"),
        "WordNet links approve/disapprove and accept/reject only (evidence.lexicon 'approval'; "
        "issue example approve/reject)",
    ),
    (
        ("permit", "allow"),
        ("prohibit",),
        "WordNet links permit/forbid and allow/disallow; prohibit, forbid's synonym, has no "
        "link of its own (evidence.lexicon 'permission'; issue example permitted/prohibited)",
    ),
    (
        ("full",),
        ("partial",),
        "WordNet links full/empty and partial/impartial only (issue example full/partial)",
    ),
    (
        ("以上", "超", "超過"),
        ("以下", "未満"),
        "WordNet has no Japanese (evidence.lexicon 'bound'; issue example 以上/未満)",
    ),
    (
        ("承認",),
        ("却下", "否決"),
        "WordNet has no Japanese (evidence.lexicon 'approval'; issue example 承認/却下)",
    ),
    (
        ("増加", "増額"),
        ("減少", "減額"),
        "WordNet has no Japanese (evidence.lexicon 'change'; issue example 増加/減少)",
    ),
    (
        ("必須",),
        ("任意",),
        "WordNet has no Japanese (evidence.lexicon 'requirement'; issue example 必須/任意)",
    ),
    (
        ("全額",),
        ("半額",),
        "WordNet has no Japanese: the full amount against half of it (issue example 全額/半額)",
    ),
    (
        ("会社負担",),
        ("自己負担",),
        "WordNet has no Japanese: the company bears a cost against the employee bears it "
        "(issue example 会社負担/自己負担)",
    ),
)
