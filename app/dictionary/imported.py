"""Imported (Yomitan) dictionaries in lookups: their terms as entries beside JMdict's, and the
frequency and pitch-accent records they add to every Japanese entry."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace

from app.dictionary import structured
from app.dictionary.deinflect import Candidate
from app.dictionary.deinflect_types import ADJ_I, V1, VK, VS, VZ, types
from app.dictionary.deinflect_verbs import GODAN
from app.dictionary.meta_records import META_RECORDS, frequency, frequency_badge
from app.dictionary.models import Entry, KanjiInfo, Sense
from app.dictionary.text import is_han
from app.dictionary.yomitan import JMDICT, Store

log = logging.getLogger(__name__)

# Yomitan's rule identifiers -> the JMdict POS codes our deinflection chains end with (the types
# of app/dictionary/deinflect_types.py; a する compound's noun is tagged "vs")
_GODAN = frozenset(GODAN) | {"v5r-i", "v4"}
RULE_POS = {
    "v1": V1,
    "v5": _GODAN,
    "vs": VS | types("vs"),
    "vk": VK,
    "vz": VZ,
    "adj-i": ADJ_I,
}


def rule_pos(rules: str) -> frozenset[str]:
    out: set[str] = set()
    for rule in rules.split():
        out |= RULE_POS.get(rule, frozenset({rule}))
    return frozenset(out)


class Imported:
    """Lookups in the enabled imported dictionaries (refreshes when the store changes)."""

    def __init__(self, store: Store):
        self.store = store
        self._revision: tuple[int, int] | None = None
        self._ids: dict[str, int] = {}
        self._titles: dict[int, str] = {}
        self._order: dict[int, int] = {}
        self._term_ids: list[int] = []
        self._meta_ids: list[int] = []
        self._kanji_ids: list[int] = []
        self._tag_banks: dict[int, dict[str, Tag]] = {}
        self._positions: dict[str, float] = {}  # title -> position in the user's order

    def _refresh(self) -> None:
        version = self.store.version()
        if self._revision == version:
            return
        self._revision = version
        infos = self.store.dictionaries(enabled_only=True)
        self._ids = self.store.ids()
        self._titles = {i: t for t, i in self._ids.items()}
        self._order = {i: n for n, i in enumerate(self._ids.values())}
        self._term_ids = [self._ids[d.title] for d in infos if d.terms]
        self._meta_ids = [self._ids[d.title] for d in infos if d.term_meta]
        self._kanji_ids = [self._ids[d.title] for d in infos if d.kanji or d.kanji_meta]
        self._positions = {d.title: d.position for d in infos}
        self._positions[JMDICT] = self.store.jmdict_position() - 0.5  # before one at its place
        self._tag_banks = {}
        for dict_id, name, category, order, notes in self.store.tags(self._term_ids):
            self._tag_banks.setdefault(dict_id, {})[name] = Tag(name, category, order, notes)

    def rank(self, entry: Entry) -> float:
        """Where the entry's dictionary stands in the user's order (JMdict's words included), as of
        the lookup's last refresh (`active`, `entries`)."""
        title = entry.dictionary if entry.source == "yomitan" else JMDICT
        return self._positions.get(title or "", float("inf"))

    @property
    def active(self) -> bool:
        self._refresh()
        return bool(self._term_ids or self._meta_ids or self._kanji_ids)

    def has_language(self, language: str) -> bool:
        return self.store.has_language(language)

    # --- terms -------------------------------------------------------------------------------

    def entries(
        self,
        text: str,
        start: int,
        wanted: dict[str, list[tuple[int, Candidate]]],
        japanese: bool = True,
    ) -> list[Entry]:
        """Entries for every imported term matching one of the deinflection candidates (Korean:
        the analyser's lemmas, `japanese=False`), best first."""
        self._refresh()
        if not self._term_ids or not wanted:
            return []
        groups = _term_groups(self.store.terms(list(wanted), self._term_ids), wanted)
        ordered = sorted(
            groups.items(),
            key=lambda kv: (kv[1].best[0], self._order.get(kv[0][0], 0), -kv[1].score),
        )
        entries = (self._entry(key, group, text, start, japanese) for key, group in ordered)
        return [e for e in entries if e is not None]

    def _entry(
        self, key: tuple, group: _Group, text: str, start: int, japanese: bool
    ) -> Entry | None:
        """One term's rows (best score first) as an entry; None when no row can be shown."""
        dict_id, expression, reading = key
        _rank, n, cand = group.best
        bank = self._tag_banks.get(dict_id, {})
        senses: list[Sense] = []
        pos: list[str] = []
        term_tags: list[str] = []
        for _score, def_tags, rules, glossary, tags in sorted(group.rows, key=lambda r: -r[0]):
            try:
                sense = glossary_sense(json.loads(glossary), def_tags, bank)
            except Exception as exc:  # noqa: BLE001 - one bad row never hides the others
                _skipped(self._titles.get(dict_id, ""), expression, exc)
                continue
            senses.append(sense)
            pos += [p for p in (rules.split() or sense.pos) if p not in pos]
            term_tags += tags.split()
        if not senses:
            return None
        # the term's own tags (common, ★, …) say something about the whole entry
        senses[0].notes = tag_notes(expand_tags(" ".join(term_tags), bank)) + senses[0].notes
        return Entry(
            headword=expression,
            reading=reading,
            readings=[reading],
            pos=pos,
            senses=senses,
            source="yomitan",
            match=text[start : start + n],
            deinflection=list(cand.steps) if japanese else None,
            kanji=[] if japanese else None,
            dictionary=self._titles.get(dict_id, ""),
        )

    # --- frequencies and pitch ---------------------------------------------------------------

    def annotate(self, entries: list[Entry]) -> None:
        """Add the frequency badges and pitch accents of the enabled dictionaries to `entries`."""
        self._refresh()
        if not self._meta_ids or not entries:
            return
        keys = sorted({e.headword for e in entries} | {e.reading for e in entries if e.reading})
        by_expression: dict[str, list[tuple]] = {}
        for row in self.store.term_meta(keys, self._meta_ids):
            by_expression.setdefault(row[1], []).append(row)
        for entry in entries:
            # by headword only: a kana-keyed record (frequency lists often key by reading) is
            # about a kana word, whose headword is that reading
            rows = by_expression.get(entry.headword, [])
            rows = sorted(rows, key=lambda r: self._order.get(r[0], 0))
            found = self._meta_records(rows, entry.readings)
            entry.frequencies, entry.pitch, entry.ipa = found["freq"], found["pitch"], found["ipa"]

    def _meta_records(self, rows: list[tuple], readings: list[str]) -> dict[str, list[dict]]:
        """mode -> the records of `rows` (term_meta rows, in the user's order of dictionaries)
        that apply to a word read `readings`."""
        found: dict[str, list[dict]] = {mode: [] for mode in META_RECORDS}
        for dict_id, expression, mode, data in rows:
            try:
                value = json.loads(data)
                read = META_RECORDS.get(mode)
                record = read(value, self._titles.get(dict_id, ""), readings) if read else None
            except Exception as exc:  # noqa: BLE001 - one bad record never hides the others
                _skipped(self._titles.get(dict_id, ""), expression, exc)
                continue
            if record is not None and not (mode == "freq" and record in found["freq"]):
                found[mode].append(record)  # a dictionary's same frequency badge once
        return found

    def annotate_kanji(self, entries: list[Entry]) -> None:
        """Imported kanji meanings and kanji frequencies on the entries' kanji (copies, never the
        builder's cached KANJIDIC objects); a kanji KANJIDIC lacks gets an entry of its own."""
        self._refresh()
        if not self._kanji_ids or not entries:
            return
        chars = sorted({ch for e in entries for ch in e.headword if is_han(ch)})
        rows, meta = self.store.kanji(chars, self._kanji_ids)
        if not rows and not meta:
            return
        extra = self._kanji_extra(rows, meta)
        for entry in entries:
            if entry.kanji is not None:
                entry.kanji = _kanji_panel(entry.headword, entry.kanji, extra)

    def _kanji_extra(self, rows: list[tuple], meta: list[tuple]) -> dict[str, dict[str, list]]:
        """char -> {"d": what each dictionary says of it, "f": its frequency badges}."""
        extra: dict[str, dict[str, list]] = {}
        in_order = sorted(rows, key=lambda r: self._order.get(r[0], 0))
        for dict_id, char, onyomi, kunyomi, meanings in in_order:
            title = self._titles.get(dict_id, "")
            try:
                found = [str(m) for m in json.loads(meanings)]
            except Exception as exc:  # noqa: BLE001 - one bad record never hides the others
                _skipped(title, char, exc)
                continue
            extra.setdefault(char, {"d": [], "f": []})["d"].append(
                {
                    "dictionary": title,
                    "meanings": found,
                    "on": onyomi.split(),
                    "kun": kunyomi.split(),
                }
            )
        for dict_id, char, mode, data in sorted(meta, key=lambda r: self._order.get(r[0], 0)):
            title = self._titles.get(dict_id, "")
            try:
                parsed = frequency(json.loads(data)) if mode == "freq" else None
            except Exception as exc:  # noqa: BLE001 - one bad record never hides the others
                _skipped(title, char, exc)
                continue
            if parsed:
                extra.setdefault(char, {"d": [], "f": []})["f"].append(
                    frequency_badge(title, parsed)
                )
        return extra


@dataclass
class _Group:
    """The rows of one dictionary's term (one expression and reading) and its best candidate."""

    best: tuple  # ((-length, steps), length, Candidate): the lowest rank wins
    score: int
    rows: list[tuple] = field(default_factory=list)  # (score, def_tags, rules, glossary, tags)


def _term_groups(rows: list[tuple], wanted: dict[str, list[tuple[int, Candidate]]]) -> dict:
    """(dict, expression, reading) -> _Group of the term rows that a candidate reaches."""
    groups: dict[tuple, _Group] = {}
    for dict_id, expression, reading, def_tags, rules, score, glossary, _seq, tags in rows:
        best = _best_candidate({expression, reading}, rule_pos(rules), wanted)
        if best is None:
            continue
        group = groups.setdefault((dict_id, expression, reading), _Group(best, score))
        if best[0] < group.best[0]:
            group.best = best
        group.score = max(group.score, score)
        group.rows.append((score, def_tags, rules, glossary, tags))
    return groups


def _best_candidate(keys: set[str], pos: frozenset[str], wanted: dict) -> tuple | None:
    """The longest, then shortest-chained candidate whose text is one of `keys` and whose types
    agree with the term's `pos`, as (rank, length, candidate)."""
    best = None
    for key in keys:
        for n, cand in wanted.get(key, ()):
            if cand.types is not None and not (cand.types & pos):
                continue
            rank = (-n, len(cand.steps))
            if best is None or rank < best[0]:
                best = (rank, n, cand)
    return best


def _kanji_panel(headword: str, kanji: list[KanjiInfo], extra: dict) -> list[KanjiInfo]:
    """The kanji of `headword` with what the imported dictionaries add (`extra`)."""
    have = {k.char: k for k in kanji}
    out = []
    for ch in dict.fromkeys(c for c in headword if is_han(c)):
        info, more = have.get(ch), extra.get(ch)
        if more is None:
            if info is not None:
                out.append(info)
            continue
        if info is None:
            first = more["d"][0] if more["d"] else {"meanings": [], "on": [], "kun": []}
            info = KanjiInfo(ch, first["meanings"], first["on"], first["kun"], None, None, None)
        out.append(replace(info, dictionaries=more["d"], frequencies=more["f"]))
    return out


def _skipped(title: str, expression: str, exc: Exception) -> None:
    """A record the lookup cannot use (stored by an older version, before the import checked
    numbers and nesting): it is left out and the others are shown."""
    log.warning("%s: a record of %s cannot be shown (%s)", title, expression, type(exc).__name__)


@dataclass(frozen=True)
class Tag:
    """One tag of a dictionary's tag banks (`tag_bank_*.json`: name, category, order, notes)."""

    name: str
    category: str
    order: float
    notes: str


def expand_tags(names: str, bank: dict[str, Tag]) -> list[Tag]:
    """A row's tag names expanded as Yomitan does: each looked up in its own dictionary's tag bank
    by the part of its name before a colon (a tag the bank lacks keeps its name, category
    "default"), each once, sorted by the bank's order, then by name."""
    tags = []
    for name in dict.fromkeys(names.split()):  # one bank per row: the same name is the same tag
        known = bank.get(name.split(":", 1)[0])
        category = (known.category if known else "") or "default"
        tags.append(
            Tag(name, category, known.order, known.notes) if known else Tag(name, category, 0, "")
        )
    return sorted(tags, key=lambda t: (t.order, t.name))


def tag_notes(tags: list[Tag]) -> list[str]:
    """The notes of the tags that have any, each once."""
    return list(dict.fromkeys(t.notes for t in tags if t.notes))


def glossary_sense(glossary: list, def_tags: str, bank: dict[str, Tag] | None = None) -> Sense:
    """One term row's glossary as a Sense: plain-text glosses, rich text when it is structured; its
    definition tags in the bank's order, their notes from the dictionary's tag banks."""
    items = [g for g in glossary if not (isinstance(g, dict) and g.get("type") == "image")]
    glosses = [t for t in (structured.to_text(g) for g in items) if t]
    html = None
    if not all(structured.is_plain(g) for g in items):
        html = "<br>".join(h for h in (structured.to_html(g) for g in items) if h)
    tags = expand_tags(def_tags, bank or {})
    return Sense(glosses=glosses, pos=[t.name for t in tags], notes=tag_notes(tags), html=html)
