"""Build evidence/ja_synonyms.tsv from SudachiDict's synonym dictionary.

Source: WorksApplications/SudachiDict, src/main/text/synonyms.txt (Apache License 2.0, the
licence of the tokenizer's own dictionary), commit 2c7cbcf2914edaccab53a28ae0d3e4befb524053.
Run: python bench/build_ja_synonyms.py PATH/TO/synonyms.txt > evidence/ja_synonyms.tsv

Each line of the source is one word of a synonym group: group id, part of speech (1 noun,
2 predicate), expansion flag (0 expand, 1 ambiguous: the word is not used to expand, 2 never
expanded), lexeme number, form kind, abbreviation, spelling variant, field, the word. Kept:
Japanese words that Sudachi (mode B, as evidence.text reads) takes as one morpheme, so that a
claim's term can be looked up (words of every flag: evidence.japanese expands only from flag
0); each is written as its Sudachi normalised form, the form
evidence.text's terms have. Output: one group a line, `field<TAB>form:flag form:flag ...`.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict

from evidence.text import has_japanese, japanese_morphemes, normalise

_ASCII_WORD = re.compile(r"^[\x00-\x7f]+$")


def main(path: str) -> None:
    groups: dict[str, dict[str, int]] = defaultdict(dict)
    fields: dict[str, str] = {}
    with open(path, encoding="utf-8") as source:
        for line in source:
            cells = line.rstrip("\n").split(",")
            if len(cells) < 9 or not cells[0].isdigit():
                continue
            group, flag, field, word = cells[0], int(cells[2]), cells[7], cells[8]
            if _ASCII_WORD.match(word) or not has_japanese(word):
                continue
            morphemes = list(japanese_morphemes(normalise(word)))
            if len(morphemes) != 1:
                continue
            form = morphemes[0].normalized.lower()
            # An ambiguous spelling of a word the group also holds unambiguously stays usable.
            groups[group][form] = min(flag, groups[group].get(form, flag))
            fields[group] = field.strip("()")
    print("# SudachiDict synonyms (Apache-2.0), one group a line: field<TAB>form:flag ...")
    for group, forms in groups.items():
        if len(forms) > 1:
            words = " ".join(f"{form}:{flag}" for form, flag in forms.items())
            print(f"{fields[group]}\t{words}")


if __name__ == "__main__":
    main(sys.argv[1])
