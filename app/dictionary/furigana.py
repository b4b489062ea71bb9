"""Readings for a whole line with SudachiPy and SudachiDict's small dictionary (UniDic's vocabulary;
loaded on first use, ~0.05 s, mapped from its 115 MB file). docs/install.md says why this one."""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

from app.dictionary.text import is_han, to_hiragana

# One tokenizer, used by one thread at a time (the GUI thread's furigana, a lookup's ranking).
_lock = threading.Lock()
_tokenizer = None


def _words(text: str) -> list[tuple[str, str, str, str, str]]:
    """(surface, reading, lemma, lemma reading, part of speech) per word: readings in katakana, ''
    where unknown; the part of speech is UniDic's top level (名詞, 動詞, 感動詞, ...)."""
    global _tokenizer
    with _lock:
        if _tokenizer is None:
            from sudachipy import Dictionary, SplitMode

            # mode A, the shortest units (UniDic's): a word starts wherever a hover can start one
            _tokenizer = Dictionary(dict="small").tokenizer(mode=SplitMode.A)
        out = []
        for m in _tokenizer.tokenize(text):
            if m.is_oov():  # an unknown word's "reading" is its own text
                out.append((m.surface(), "", m.surface(), "", ""))
                continue
            base = m.dictionary_form_morpheme()
            pos = m.part_of_speech()[0]
            out.append((m.surface(), m.reading_form(), base.surface(), base.reading_form(), pos))
        return out


@lru_cache(maxsize=64)
def analyse(text: str) -> tuple[tuple[int, str, str, str, str, str], ...]:
    """(offset, surface, reading, lemma, lemma reading, part of speech) per token (`_words`)."""
    out, end = [], 0
    for surface, reading, lemma, lemma_reading, pos in _words(text):
        found = text.find(surface, end)
        if found < 0:
            continue
        end = found + len(surface)
        out.append((found, surface, reading, lemma, lemma_reading, pos))
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
    for offset, surface, reading, *_ in analyse(text):
        if offset > pos:
            out.append((text[pos:offset], None))  # spaces and anything the analyser skipped
        out.extend(align(surface, reading))
        pos = offset + len(surface)
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def lemma_tokens(text: str) -> list[tuple[int, str, str, str]]:
    """(offset, lemma, lemma reading, part of speech) per token, for ranking ties (行った is 行く
    here, not 行う; a lone あ is the interjection)."""
    return [(offset, lemma, reading, pos) for offset, _s, _r, lemma, reading, pos in analyse(text)]
