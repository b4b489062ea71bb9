"""What a lookup returns. `Entry.to_json()` is the entry schema of `hayai lookup --json` (a contract:
change it only with docs/dictionary.md and tests/dictionary)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class Sense:
    glosses: list[str]
    pos: list[str]
    # usage tags (uk, col, …); shown in the popup, not in JSON
    notes: list[str] = field(default_factory=list)
    html: str | None = None  # imported structured content as rich text (the popup's rendering)

    def to_json(self) -> dict:
        return {"glosses": list(self.glosses), "pos": list(self.pos)}


@dataclass
class KanjiInfo:
    char: str
    meanings: list[str]
    on: list[str]
    kun: list[str]
    jlpt: int | None  # KANJIDIC2's old four-level JLPT (4 = easiest)
    grade: int | None  # 1-6 kyouiku, 8 jouyou, 9-10 jinmeiyou
    strokes: int | None
    # from imported Yomitan kanji dictionaries: {"dictionary", "meanings", "on", "kun"}, and
    # kanji frequencies {"dictionary", "value", "display"}
    dictionaries: list[dict] = field(default_factory=list)
    frequencies: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        out: dict[str, object] = {
            "char": self.char,
            "meanings": list(self.meanings),
            "on": list(self.on),
            "kun": list(self.kun),
            "jlpt": self.jlpt,
            "grade": self.grade,
            "strokes": self.strokes,
        }
        if self.dictionaries:
            out["dictionaries"] = [dict(d) for d in self.dictionaries]
        if self.frequencies:
            out["frequencies"] = [dict(f) for f in self.frequencies]
        return out


@dataclass
class Entry:
    headword: str
    reading: str
    readings: list[str]
    pos: list[str]
    senses: list[Sense]
    source: str  # jmdict, jmnedict, cedict, yomitan (an imported dictionary: see `dictionary`)
    match: str  # the text in the line that matched, e.g. 食べられなかった
    # Japanese only (None otherwise): steps from the dictionary form outwards
    deinflection: list[str] | None = None
    kanji: list[KanjiInfo] | None = None  # Japanese only
    pinyin: str | None = None  # Chinese only (tone marks)
    simplified: str | None = None
    traditional: str | None = None
    dictionary: str | None = None  # title of the imported (Yomitan) dictionary it came from
    frequencies: list[dict] = field(default_factory=list)  # {"dictionary", "value", "display"}
    pitch: list[dict] = field(default_factory=list)  # {"dictionary", "reading", "positions": [int]}
    # {"dictionary", "reading", "transcriptions": [str]}
    ipa: list[dict] = field(default_factory=list)

    @property
    def copy_text(self) -> str:
        """What the popup's copy button puts on the clipboard: 食べる【たべる】."""
        if self.reading and self.reading != self.headword:
            return f"{self.headword}【{self.reading}】"
        return self.headword

    def to_json(self) -> dict:
        out = {
            "headword": self.headword,
            "reading": self.reading,
            "readings": list(self.readings),
            "pos": list(self.pos),
            "senses": [s.to_json() for s in self.senses],
            "source": self.source,
            "match": self.match,
        }
        if self.dictionary:
            out["dictionary"] = self.dictionary
        if self.frequencies:
            out["frequencies"] = [dict(f) for f in self.frequencies]
        if self.pitch:
            out["pitch"] = [dict(p, positions=list(p["positions"])) for p in self.pitch]
        if self.ipa:
            out["ipa"] = [dict(p, transcriptions=list(p["transcriptions"])) for p in self.ipa]
        if self.source in ("jmdict", "jmnedict") or self.deinflection is not None:  # Japanese
            out["deinflection"] = list(self.deinflection or [])
            out["kanji"] = [k.to_json() for k in (self.kanji or [])]
        if self.source == "cedict":
            out["pinyin"] = self.pinyin or ""
            out["simplified"] = self.simplified or ""
            out["traditional"] = self.traditional or ""
        return out


@dataclass
class LookupResult:
    match_len: int  # characters of the text (from `start`) covered by the best entry; 0: nothing
    entries: list[Entry]  # best first
    language: str  # ja, zh or ko: what the text was looked up as
    message: str | None = None  # a sentence for the user when there are no entries for a reason

    def to_json(self) -> list[dict]:
        return json_safe([e.to_json() for e in self.entries])


def json_safe(value):
    """`value` with every float JSON cannot carry (NaN, Infinity) as null: dictionary content
    comes from outside, and `hayai lookup --json` must print JSON whatever a store holds."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value
