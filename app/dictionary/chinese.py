"""Chinese lookup in CC-CEDICT: longest match, simplified or traditional, pinyin with tone marks."""

from __future__ import annotations

import json
import re
import sqlite3

from app.dictionary.models import Entry, Sense
from app.dictionary.text import MAX_MATCH, is_han

MAX_ENTRIES = 12
_TONE_MARKS = {"a": "āáǎàa", "e": "ēéěèe", "i": "īíǐìi", "o": "ōóǒòo", "u": "ūúǔùu", "ü": "ǖǘǚǜü"}
_SYLLABLE = re.compile(r"^([A-Za-zü:]+)([1-5])$")


def syllable_with_mark(syllable: str) -> str:
    """`zhong1` -> `zhōng`, `lu:4` -> `lǜ`, `ma5` -> `ma`; anything else is returned unchanged."""
    m = _SYLLABLE.match(syllable)
    if not m:
        return syllable.replace("u:", "ü").replace("U:", "Ü")
    letters, tone = (
        m.group(1).replace("u:", "ü").replace("U:", "Ü").replace("v", "ü"),
        int(m.group(2)),
    )
    if tone == 5:
        return letters
    lower = letters.lower()
    # the standard placement: a or e takes the mark; in "ou" the o does; otherwise the last vowel
    if "a" in lower:
        pos = lower.index("a")
    elif "e" in lower:
        pos = lower.index("e")
    elif "ou" in lower:
        pos = lower.index("o")
    else:
        pos = max((i for i, ch in enumerate(lower) if ch in "iouü"), default=-1)
    if pos < 0:
        return letters  # e.g. "r5", "m2": no vowel to mark
    vowel = lower[pos]
    marked = _TONE_MARKS[vowel][tone - 1]
    if letters[pos].isupper():
        marked = marked.upper()
    return letters[:pos] + marked + letters[pos + 1 :]


def pinyin_with_marks(numbered: str) -> str:
    return " ".join(syllable_with_mark(s) for s in numbered.split())


def window(text: str, start: int) -> str:
    out = []
    for ch in text[start : start + MAX_MATCH]:
        if not (is_han(ch) or ch.isalnum()):
            break
        out.append(ch)
    return "".join(out)


def lookup(con: sqlite3.Connection, text: str, start: int) -> list[Entry]:
    """Entries for every prefix found (simplified or traditional), longest first, file order within."""
    win = window(text, start)
    if not win:
        return []
    prefixes = [win[:n] for n in range(len(win), 0, -1)]
    marks = ",".join("?" * len(prefixes))
    rows = con.execute(
        f"SELECT rowid, trad, simp, pinyin, glosses FROM cedict WHERE simp IN ({marks}) OR trad IN ({marks})",
        prefixes + prefixes,
    ).fetchall()
    found = []
    for rowid, trad, simp, pinyin, glosses in rows:
        length = max(len(w) for w in (trad, simp) if w in prefixes)
        found.append((-length, rowid, trad, simp, pinyin, json.loads(glosses)))
    found.sort()
    entries = []
    for neg_len, _rowid, trad, simp, pinyin, glosses in found[:MAX_ENTRIES]:
        match = win[:-neg_len]
        headword = simp if match == simp else trad
        marked = pinyin_with_marks(pinyin)
        # each /slash/ field of CC-CEDICT is one sense; "; " separates near-synonyms inside it
        senses = [
            Sense(glosses=[g.strip() for g in gloss.split("; ") if g.strip()], pos=[])
            for gloss in glosses
        ]
        entries.append(
            Entry(
                headword=headword,
                reading=marked,
                readings=[marked],
                pos=[],
                senses=senses,
                source="cedict",
                match=match,
                pinyin=marked,
                simplified=simp,
                traditional=trad,
            )
        )
    return entries
