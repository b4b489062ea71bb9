"""Script detection, language choice and the normalisation applied before a lookup."""

from __future__ import annotations

import unicodedata

HIRAGANA = range(0x3041, 0x3097)
KATAKANA = range(0x30A1, 0x30F7)
HANGUL_RANGES = ((0xAC00, 0xD7A4), (0x1100, 0x1200), (0x3130, 0x3190))
KANA_OFFSET = 0x60  # ア - あ

MAX_MATCH = 20  # the longest term a lookup tries, in characters from the hovered one
# What a lookup reads at all: this many characters on each side of the hovered one (the analyser's
# sentence context included), so that its work is bounded whatever the text.
CONTEXT = 64


def is_kana(ch: str) -> bool:
    o = ord(ch)
    return o in HIRAGANA or o in KATAKANA or ch in "ー・ヽヾゝゞ" or 0xFF66 <= o <= 0xFF9F


def is_katakana(ch: str) -> bool:
    return ord(ch) in KATAKANA or ch == "ー" or 0xFF66 <= ord(ch) <= 0xFF9F


def is_han(ch: str) -> bool:
    o = ord(ch)
    return (
        0x4E00 <= o <= 0x9FFF
        or 0x3400 <= o <= 0x4DBF
        or 0x20000 <= o <= 0x2FFFF
        or 0xF900 <= o <= 0xFAFF
        or ch in "々〆〇ヶ"
    )


def is_hangul(ch: str) -> bool:
    o = ord(ch)
    return any(lo <= o < hi for lo, hi in HANGUL_RANGES)


def around(text: str, start: int) -> tuple[str, int]:
    """The part of `text` a lookup at `text[start]` reads (CONTEXT characters on each side) and
    where `start` lies in it (out of range when it was). Cut before anything else looks at the text:
    'た' and 100,000 combining marks took 5.4 s when the analyser and language guess read it all."""
    low = max(0, start - CONTEXT)
    return text[low : max(0, start + CONTEXT)], start - low


def choose_language(text: str, han_default: str = "ja") -> str:
    """kana -> Japanese; hangul -> Korean; Han only -> the user's setting (default Japanese)."""
    if any(is_kana(ch) for ch in text):
        return "ja"
    if any(is_hangul(ch) for ch in text):
        return "ko"
    return han_default if han_default in ("ja", "zh") else "ja"


def to_hiragana(text: str) -> str:
    return "".join(chr(ord(c) - KANA_OFFSET) if 0x30A1 <= ord(c) <= 0x30F6 else c for c in text)


def to_katakana(text: str) -> str:
    return "".join(chr(ord(c) + KANA_OFFSET) if 0x3041 <= ord(c) <= 0x3096 else c for c in text)


def fold_width(text: str) -> str:
    """Half-width katakana -> full width, full-width ASCII -> ASCII (NFKC limited to those blocks)."""
    out = []
    for ch in text:
        o = ord(ch)
        if 0xFF01 <= o <= 0xFF5E or 0xFF61 <= o <= 0xFF9F:
            out.append(unicodedata.normalize("NFKC", ch))
        elif ch == "\u3000":
            out.append(" ")
        else:
            out.append(ch)
    # NFKC turns ﾞ/ﾟ into combining marks (ｶﾞ -> カ + U+3099); NFC joins them into ガ
    return unicodedata.normalize("NFC", "".join(out))


def _collapse_repeats(text: str) -> str:
    """すごーーい -> すごーい, あっっっ -> あっ, 〜〜 -> 〜 (emphatic repeats never appear in headwords)."""
    out: list[str] = []
    for ch in text:
        if out and ch == out[-1] and ch in "ーっッ〜～":
            continue
        out.append(ch)
    return "".join(out)


def _expand_iteration_mark(text: str) -> str:
    """時々 -> 時時: JMdict lists most words with 々, but not every one."""
    out: list[str] = []
    for ch in text:
        out.append(out[-1] if ch == "々" and out else ch)
    return "".join(out)


def _drop_long_vowel_marks(text: str) -> str:
    """すごーい -> すごい: a ー after hiragana is emphasis, not part of the word."""
    out: list[str] = []
    for ch in text:
        if ch == "ー" and out and 0x3041 <= ord(out[-1]) <= 0x3096:
            continue
        out.append(ch)
    return "".join(out)


def variants(text: str) -> list[str]:
    """The spellings of `text` to try, most faithful first, without duplicates."""
    base = fold_width(text)
    first = [base, _collapse_repeats(base)]
    more = [text]  # as written first: a few headwords keep full-width letters
    for v in first:
        more += [
            v,
            to_hiragana(v),
            to_katakana(v),
            _expand_iteration_mark(v),
            _drop_long_vowel_marks(v),
        ]
    seen: dict[str, None] = {}
    for v in more:
        if v:
            seen.setdefault(v, None)
    return list(seen)
