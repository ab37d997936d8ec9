"""Japanese paraphrase the engine may vouch for, and what it must not (evidence.japanese).

Each verified case was unverified before the rule it names: the claim says nothing the
span does not, in other words. Each guard keeps a claim that adds or turns content from
being verified.
"""

from __future__ import annotations

import pytest

from evidence.grounding import check_claim
from evidence.japanese import synonyms


def verdict(claim: str, evidence: str) -> str:
    return check_claim(claim, evidence).verdict


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # synonyms from SudachiDict's synonym dictionary
        ("机の上にパソコンが２台あります。", "デスクの上にパソコンが２台あります。"),
        ("バイクに人が乗っています。", "オートバイに人が乗っています。"),
        # the honorific prefix お adds nothing: お皿 is 皿
        ("白いお皿にパスタが盛られています。", "白い皿にパスタが盛られています。"),
        # a plural suffix: 象たち is 象
        ("象たちが水辺に立っています。", "象が水辺に立っています。"),
        # a counter after a number, read by the number check: 二匹 / ２頭, 四つ / ４本
        ("シマウマの横に二匹の動物がいます。", "シマウマの横に２頭の動物がいます。"),
        ("丸めたネクタイが四つあります。", "４本のネクタイが丸めてあります。"),
        # a kanji numeral before a counter is a number: 2階建て / 二階建て
        ("赤い2階建てバスが停まっています。", "赤い二階建てバスが停まっています。"),
        # 人 for a person the span names
        (
            "フリスビーを持ってジャンプしている人がいます。",
            "男性がフリスビーを持ってジャンプしています。",
        ),
        # a kind of what the claim names: 少年 are 子供
        ("芝生で野球をしている子供たちがいます。", "芝生で少年たちが野球をしています。"),
        # words for "many"
        ("空港の通路にたくさんの人が歩いています。", "空港の通路を多くの人が歩いています。"),
        # words for "beside"
        ("洗面台の隣に洋式トイレがあります。", "洗面台の横に洋式トイレがあります。"),
        # a colour as a noun or an adjective
        ("黒色の馬が草原で草を食べています。", "黒い馬が草原で草を食べています。"),
        ("岩の上に茶色いクマがいます。", "岩の上に茶色のクマがいます。"),
        # a compound names a kind of its last part: マグカップ is a カップ
        ("机の上にカップがあります。", "机の上にマグカップがあります。"),
        # 置く for a thing that is there
        ("机の上にパソコンが置かれています。", "机の上にパソコンがあります。"),
        # a verb in kana against its kanji, inflected otherwise (おかれる / 置いてある)
        ("机の上にパソコンがおかれています。", "机の上にパソコンが置いてあります。"),
        # a passive's が is what is acted on, and nouns joined by と act together: no other actor
        ("白い皿の上に野菜と肉が盛られています。", "白い皿には肉と野菜がたくさん盛られています。"),
    ],
)
def test_japanese_said_in_other_words_is_verified(claim: str, evidence: str) -> None:
    assert verdict(claim, evidence) == "verified"


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # the claim adds a word the span lacks in every form
        ("机の上に赤いパソコンが置かれています。", "机の上にパソコンがあります。"),
        ("道で人が走っています。", "道で犬が走っています。"),
        # a position, a size, many against few, a mood: said the other way
        ("キリンが、木の上で舌を出しています。", "キリンが、木の下で舌を出しています。"),
        ("大きな標識が立っている。", "路地に小さな標識が立っています。"),
        ("板の上にニンジンがたくさん置かれている。", "ニンジンが少しだけ板の上に置かれている。"),
        ("駐車場にバスが止まろうとしています。", "駐車場にバスが止まっています。"),
        ("駐車場にバスが止まっています。", "駐車場にバスが止まろうとしています。"),
        # ている is aspect, not the verb ある: 置く is not said by 並べられている
        ("ネクタイが置かれています。", "ネクタイが並べられています。"),
    ],
)
def test_japanese_that_adds_or_turns_content_is_not_verified(claim: str, evidence: str) -> None:
    assert verdict(claim, evidence) != "verified"


def test_the_approver_swap_stays_refuted() -> None:
    # the active voice still names the actor: the passive rule leaves it alone
    assert verdict("部長が経費を承認する。", "課長が経費を承認する。") == "refuted"


def test_a_synonym_expands_only_from_words_the_dictionary_expands_from() -> None:
    # 机 is flag 2 (never expanded from): a span's 机 does not say デスク, a span's デスク says 机
    assert "デスク" in synonyms("机")
    assert "机" not in synonyms("デスク")
