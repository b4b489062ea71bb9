"""Japanese lookup: longest match with deinflection, ranking, entries with kanji info."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from app.dictionary.deinflect import Candidate, agrees, deinflect
from app.dictionary.models import Entry, KanjiInfo, Sense
from app.dictionary.text import (
    MAX_MATCH,
    is_han,
    is_hangul,
    is_kana,
    is_katakana,
    to_hiragana,
    variants,
)

MAX_ENTRIES = 12  # words shown in the popup
MAX_NAMES = 3  # JMnedict names shown after the words

# Characters that can be part of a headword; anything else ends the window (punctuation, spaces).
_WORD_PUNCT = set("ー々〆ヶ〇・＝=-‐－～〜")


def _is_word_char(ch: str) -> bool:
    return is_kana(ch) or is_han(ch) or ch.isalnum() or ch in _WORD_PUNCT


def window(text: str, start: int) -> str:
    """The text from `start` up to MAX_MATCH characters, cut at the first non-word character."""
    out = []
    for ch in text[start : start + MAX_MATCH]:
        if not _is_word_char(ch) or is_hangul(ch):
            break
        out.append(ch)
    return "".join(out)


@dataclass
class Hit:
    entry: int
    length: int  # characters of the original text covered
    candidate: Candidate
    form: str  # the dictionary form that matched (kanji spelling or reading)
    by_kana: bool
    form_index: int  # 0: the entry's first spelling/reading
    pri: int  # index.pri_score of that form
    kana_word: bool  # the entry is normally written in kana (particles, uk words)
    context: int = 0  # agreement with the sentence's morphological analysis (tie-break)

    def key(self) -> tuple:
        """Longer match, fewer steps, a real form before a bare stem's verb, common word, kana text
        finds kana words first, agrees with the sentence, primary spelling, finer priority."""
        spelled_differently = self.by_kana and not self.kana_word  # に finds the particle before 二
        return (
            -self.length,
            len(self.candidate.steps),
            self.candidate.guess,
            -(self.pri // 1000),
            spelled_differently,
            -self.context,
            self.form_index,
            -(self.pri % 1000),
            self.by_kana,
            self.entry,
        )


def wanted_forms(text: str, start: int) -> dict[str, list[tuple[int, Candidate]]]:
    """Dictionary-form guess -> [(characters of the text it covers, its deinflection)]."""
    win = window(text, start)
    wanted: dict[str, list[tuple[int, Candidate]]] = {}
    for n in range(len(win), 0, -1):
        for spelling in variants(win[:n]):
            for cand in deinflect(spelling):
                wanted.setdefault(cand.text, []).append((n, cand))
    return wanted


def find_hits(
    con: sqlite3.Connection,
    text: str,
    start: int,
    context: Callable[[], Lemma | None] | None = None,
    wanted: dict[str, list[tuple[int, Candidate]]] | None = None,
) -> list[Hit]:
    """Every (entry, deinflection) matching a prefix of text[start:], best per entry, ranked."""
    if wanted is None:
        wanted = wanted_forms(text, start)
    if not wanted:
        return []
    keys = list(wanted)
    rows = con.execute(
        f"SELECT text, entry, kana, idx, pri, pos, kana_word FROM forms WHERE text IN ({','.join('?' * len(keys))})",
        keys,
    ).fetchall()
    best: dict[int, Hit] = {}
    for form, entry, kana, idx, pri, pos, kana_word in rows:
        pos_set = frozenset(pos.split())
        for n, cand in wanted[form]:
            if not agrees(cand, pos_set):
                continue
            hit = Hit(entry, n, cand, form, bool(kana), idx, pri, bool(kana_word))
            if entry not in best or hit.key() < best[entry].key():
                best[entry] = hit
    hits = sorted(best.values(), key=Hit.key)
    if context is not None and _needs_context(hits):
        lemma = context()
        if lemma:
            _score_context(con, hits, lemma)
            hits.sort(key=Hit.key)
    return hits


def _needs_context(hits: list[Hit]) -> bool:
    """Only ask the morphological analyser when the first two hits tie before the context criterion."""
    return len(hits) > 1 and hits[0].key()[:5] == hits[1].key()[:5]


# (lemma, its reading in hiragana, part of speech): the analyser's word at the looked-up place
Lemma = tuple[str, str, str]

# The analyser's part of speech (UniDic's top level) -> the JMdict codes that agree with it
POS_AGREES = {
    pos: re.compile(codes)
    for pos, codes in {
        "名詞": r"n(-.+)?",
        "代名詞": r"pn",
        "動詞": r"v.+",
        "形容詞": r"adj-ix?",
        "形状詞": r"adj-na",
        "連体詞": r"adj-pn",
        "副詞": r"adv(-to)?",
        "接続詞": r"conj",
        "感動詞": r"int",
        "助詞": r"prt",
        "助動詞": r"aux(-.+)?",
        "接頭辞": r"pref",
        "接尾辞": r"(n-)?suf",
    }.items()
}


def _score_context(con: sqlite3.Connection, hits: list[Hit], lemma: Lemma) -> None:
    """+1 when the entry has the analyser's lemma as a spelling, +1 when it has its reading, +1
    when one of its parts of speech agrees with the analyser's (a lone あ is the interjection)."""
    surface, reading, word_class = lemma
    agrees_with = POS_AGREES.get(word_class)
    top = hits[0].key()[:5]
    tied = [h for h in hits if h.key()[:5] == top]
    ids = [h.entry for h in tied]
    forms: dict[int, set[str]] = {}
    codes: dict[int, list[str]] = {}
    for entry, data, pos in con.execute(
        f"SELECT id, data, pos FROM entries WHERE id IN ({','.join('?' * len(ids))})", ids
    ):
        blob = json.loads(data)
        forms[entry] = {k[0] for k in blob["k"]} | {r[0] for r in blob["r"]}
        codes[entry] = pos.split()
    for h in tied:
        spellings = forms.get(h.entry, set())
        same_class = agrees_with is not None and any(
            agrees_with.fullmatch(code) for code in codes.get(h.entry, [])
        )
        h.context = (surface in spellings) + (bool(reading) and reading in spellings) + same_class


# ------------------------------------------------------------------------------------------ entries


class EntryBuilder:
    """Turns hits into Entry objects (JSON blobs from the index, kanji info cached per character)."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con
        self._kanji: dict[str, KanjiInfo | None] = {}

    def kanji_info(self, char: str) -> KanjiInfo | None:
        if char not in self._kanji:
            row = self.con.execute("SELECT data FROM kanji WHERE char = ?", (char,)).fetchone()
            self._kanji[char] = KanjiInfo(char=char, **json.loads(row[0])) if row else None
        return self._kanji[char]

    def kanji_for(self, headword: str) -> list[KanjiInfo]:
        seen, out = set(), []
        for ch in headword:
            if is_han(ch) and ch not in seen:
                seen.add(ch)
                info = self.kanji_info(ch)
                if info:
                    out.append(info)
        return out

    def build(self, text: str, start: int, hits: list[Hit]) -> list[Entry]:
        if not hits:
            return []
        ids = [h.entry for h in hits]
        blobs = dict(
            self.con.execute(
                f"SELECT id, data FROM entries WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
        )
        return [
            self._entry(text[start : start + h.length], h, json.loads(blobs[h.entry]))
            for h in hits
            if h.entry in blobs
        ]

    def _entry(self, match: str, hit: Hit, data: dict) -> Entry:
        headword, reading, readings = _headword(hit, data)
        senses, pos = _senses(data, headword, reading)
        return Entry(
            headword=headword,
            reading=reading,
            readings=readings,
            pos=pos,
            senses=senses,
            source="jmdict",
            match=match,
            deinflection=list(hit.candidate.steps),
            kanji=self.kanji_for(headword),
        )


def _applies(reading: list, spelling: str) -> bool:
    """Whether a JMdict reading ([text, nokanji, restr, pri]) is a reading of `spelling`."""
    return not reading[1] and (not reading[2] or spelling in reading[2])


def _headword(hit: Hit, data: dict) -> tuple[str, str, list[str]]:
    """(headword, reading, the readings that fit the headword) of the entry `data` found as
    `hit`."""
    if hit.by_kana:
        return _found_by_reading(hit.form, data)
    headword = hit.form
    readings = data["r"]  # [text, nokanji, restr, pri]
    fitting = [r[0] for r in readings if _applies(r, headword)]
    reading = fitting[0] if fitting else (readings[0][0] if readings else headword)
    return headword, reading, fitting or [reading]


def _found_by_reading(reading: str, data: dict) -> tuple[str, str, list[str]]:
    """A word found by its reading: its first spelling of that reading is the headword, or the
    reading itself for a word usually written in kana (or without spellings)."""
    readings = data["r"]
    usually_kana = bool(data["s"]) and "uk" in data["s"][0].get("n", [])
    this = next((r for r in readings if r[0] == reading), None)
    spellings = [k[0] for k in data["k"] if this is None or _applies(this, k[0])]
    headword = reading if (usually_kana or not spellings) else spellings[0]
    fitting = [r[0] for r in readings if headword == reading or _applies(r, headword)]
    return headword, reading, fitting or [reading]


def _senses(data: dict, headword: str, reading: str) -> tuple[list[Sense], list[str]]:
    """The senses of `data` that are about this spelling and reading, and their POS tags."""
    kanji_forms = [k[0] for k in data["k"]]
    senses: list[Sense] = []
    pos: list[str] = []
    for s in data["s"]:
        if s.get("sk") and headword in kanji_forms and headword not in s["sk"]:
            continue
        if s.get("sr") and reading not in s["sr"]:
            continue
        senses.append(Sense(glosses=s.get("g", []), pos=s.get("p", []), notes=s.get("n", [])))
        pos += [p for p in s.get("p", []) if p not in pos]
    return senses, pos


# ------------------------------------------------------------------------------------------ names


def find_names(
    names_con: sqlite3.Connection, builder: EntryBuilder, text: str, start: int, min_length: int
) -> list[Entry]:
    """JMnedict entries for prefixes at least `min_length` long (names never inflect)."""
    win = window(text, start)
    wanted: dict[str, int] = {}
    for n in range(len(win), max(min_length, 1) - 1, -1):
        for spelling in variants(win[:n]):
            wanted.setdefault(spelling, n)
    if not wanted:
        return []
    keys = list(wanted)
    marks = ",".join("?" * len(keys))
    # A name is found by its reading only when it is written in kana: otherwise every kana run in a
    # sentence (しながら, なこと) would turn up some rare name spelled with kanji.
    rows = names_con.execute(
        f"SELECT text, idseq, 0 FROM NEKanji WHERE text IN ({marks}) "
        f"UNION ALL SELECT text, idseq, 1 FROM NEKana WHERE text IN ({marks}) "
        f"AND NOT EXISTS (SELECT 1 FROM NEKanji k WHERE k.idseq = NEKana.idseq)",
        keys + keys,
    ).fetchall()
    rows.sort(key=lambda r: (-wanted[r[0]], r[2], r[1]))
    out, seen = [], set()
    for form, idseq, by_kana in rows:
        if idseq in seen:
            continue
        if by_kana and not (form == win[: wanted[form]] and all(is_katakana(ch) for ch in form)):
            continue  # kana names only as written in katakana (トム, マリア), never from a hiragana run
        seen.add(idseq)
        out.append(
            _name_entry(
                names_con, builder, text[start : start + wanted[form]], form, idseq, bool(by_kana)
            )
        )
        if len(out) >= MAX_NAMES:
            break
    return out


def _name_entry(
    con: sqlite3.Connection, builder: EntryBuilder, match: str, form: str, idseq: int, by_kana: bool
) -> Entry:
    kana = [
        r[0] for r in con.execute("SELECT text FROM NEKana WHERE idseq = ? ORDER BY id", (idseq,))
    ]
    kanji = [
        r[0] for r in con.execute("SELECT text FROM NEKanji WHERE idseq = ? ORDER BY id", (idseq,))
    ]
    senses, pos = [], []
    for (tid,) in con.execute(
        "SELECT id FROM NETranslation WHERE idseq = ? ORDER BY id", (idseq,)
    ).fetchall():
        types = [r[0] for r in con.execute("SELECT text FROM NETransType WHERE tid = ?", (tid,))]
        glosses = [r[0] for r in con.execute("SELECT text FROM NETransGloss WHERE tid = ?", (tid,))]
        senses.append(Sense(glosses=glosses, pos=types))
        pos += [t for t in types if t not in pos]
    headword = form if not by_kana else (kanji[0] if kanji else form)
    reading = form if by_kana else (kana[0] if kana else form)
    return Entry(
        headword=headword,
        reading=reading,
        readings=kana or [reading],
        pos=pos,
        senses=senses,
        source="jmnedict",
        match=match,
        deinflection=[],
        kanji=builder.kanji_for(headword),
    )


def lemma_at(tokens: list[tuple[int, str, str, str]], start: int) -> Lemma | None:
    """(lemma, lemma reading in hiragana, part of speech) of the analyser token beginning at
    `start`, if any."""
    for offset, lemma, reading, word_class in tokens:
        if offset == start:
            return lemma, to_hiragana(reading), word_class
        if offset > start:
            break
    return None
