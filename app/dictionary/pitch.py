"""Pitch accent as Yomitan users read it: morae, and the high/low pattern of a downstep position.

A position is the mora after which the pitch drops: 0 = heiban (low, then high to the end and
on the particle), 1 = atamadaka (high, then low), n = high from the second mora up to mora n.
"""

from __future__ import annotations

_SMALL = set("ゃゅょぁぃぅぇぉゎャュョァィゥェォヮ")


def morae(reading: str) -> list[str]:
    """きょう -> [きょ, う]: small kana join the mora before them (っ and ー are morae)."""
    out: list[str] = []
    for ch in reading:
        if ch in _SMALL and out:
            out[-1] += ch
        else:
            out.append(ch)
    return out


def pattern(count: int, position: int) -> list[bool]:
    """High (True) or low per mora, plus one for the following particle."""
    if position == 0:
        return [i > 0 for i in range(count)] + [True] if count > 1 else [False, True]
    return [(i == 0 and position == 1) or (0 < i < position) for i in range(count)] + [False]


def pitch_position(position) -> int | None:
    """A downstep position from an int or a pattern such as "LHHL" (mora after which it drops)."""
    if isinstance(position, bool):
        return None
    if isinstance(position, int):
        return position if position >= 0 else None
    if isinstance(position, str) and position and set(position.upper()) <= {"H", "L"}:
        p = position.upper()
        drop = p.find("HL")
        return drop + 1 if drop >= 0 else 0
    return None
