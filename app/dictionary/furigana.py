"""Readings for a whole line with fugashi + unidic-lite (loaded on first use, ~20 MB)."""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

from app.dictionary.text import is_han, to_hiragana

_lock = threading.Lock()
_tagger = None


def _get_tagger():
    global _tagger
    with _lock:
        if _tagger is None:
            import fugashi  # unidic-lite is found by fugashi itself

            _tagger = fugashi.Tagger()
        return _tagger


@lru_cache(maxsize=64)
def analyse(text: str) -> tuple[tuple[int, str, str, str, str], ...]:
    """(offset, surface, reading, lemma, lemma reading) per token; readings in katakana, '' if unknown."""
    tagger = _get_tagger()
    out, pos = [], 0
    for word in tagger(text):
        surface = word.surface
        found = text.find(surface, pos)
        if found < 0:
            continue
        pos = found + len(surface)
        feature = word.feature
        kana = getattr(feature, "kana", None) or ""
        lemma = getattr(feature, "lemma", None) or surface
        lemma_reading = getattr(feature, "lForm", None) or ""
        out.append(
            (
                found,
                surface,
                "" if kana == "*" else kana,
                lemma.split("-")[0],
                "" if lemma_reading == "*" else lemma_reading,
            )
        )
    return tuple(out)


def align(surface: str, reading: str) -> list[tuple[str, str | None]]:
    """Put the reading over the kanji only: 取り扱い/とりあつかい -> 取(と) り 扱(あつか) い."""
    if not any(is_han(ch) for ch in surface) or not reading:
        return [(surface, None)]
    parts = re.findall(r"[^\u3041-\u309f\u30a0-\u30ff]+|[\u3041-\u309f\u30a0-\u30ff]+", surface)
    pattern = "".join(
        "(.+?)" if any(is_han(ch) for ch in part) else "(" + re.escape(to_hiragana(part)) + ")"
        for part in parts
    )
    m = re.fullmatch(pattern, to_hiragana(reading))
    if not m:
        return [(surface, to_hiragana(reading))]
    out: list[tuple[str, str | None]] = []
    for part, sound in zip(parts, m.groups()):
        out.append((part, sound if any(is_han(ch) for ch in part) else None))
    return out


# The overlay asks on the GUI thread, for whatever text it shows (a read, or anything pasted): the
# analyser gets pieces of at most PIECE characters (its time grows faster than its text in runs of
# marks: 'た' and 100,000 combining marks took 13 s, in pieces of 200 a few ms), cut after a
# sentence where one ends, and only the first FURIGANA_CHARS get readings, the rest shown as it is
# (an OCR read is a few hundred characters at most). `hayai bench --dictionary` times the worst.
PIECE = 200
FURIGANA_CHARS = 2_000
_SENTENCE_END = re.compile(r"[。．！？!?\n]")


def furigana(text: str) -> list[tuple[str, str | None]]:
    """The line as (surface, hiragana reading or None) pieces; the surfaces join back to `text` exactly."""
    out: list[tuple[str, str | None]] = []
    start = 0
    while start < min(len(text), FURIGANA_CHARS):
        end = _piece_end(text, start)
        out.extend(_furigana_of(text[start:end]))
        start = end
    if start < len(text):
        out.append((text[start:], None))
    return out


def _piece_end(text: str, start: int) -> int:
    """Where the piece of `text` from `start` ends: after the last sentence end within PIECE
    characters, else PIECE later (moved back to keep combining marks with their base where it can
    be), never past the first FURIGANA_CHARS."""
    end = min(start + PIECE, FURIGANA_CHARS, len(text))
    if end == len(text):
        return end
    ends = [m.end() for m in _SENTENCE_END.finditer(text, start, end)]
    if ends:
        return ends[-1]
    cut = end
    while cut > start + 1 and unicodedata.combining(text[cut]):
        cut -= 1
    return cut if unicodedata.combining(text[cut]) == 0 else end


def _furigana_of(text: str) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    pos = 0
    for offset, surface, reading, _lemma, _lemma_reading in analyse(text):
        if offset > pos:
            out.append((text[pos:offset], None))  # spaces and anything the analyser skipped
        out.extend(align(surface, reading))
        pos = offset + len(surface)
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def lemma_tokens(text: str) -> list[tuple[int, str, str]]:
    """(offset, lemma, lemma reading) per token, for ranking ties (行った is 行く here, not 行う)."""
    return [
        (offset, lemma, lemma_reading) for offset, _s, _r, lemma, lemma_reading in analyse(text)
    ]
