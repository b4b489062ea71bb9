"""The records of imported dictionaries' meta banks (`freq`, `pitch`, `ipa`) as a lookup reads
them: which apply to a word (its readings), and what the popup shows of each."""

from __future__ import annotations

import math
import re

from app.dictionary.pitch import pitch_position
from app.dictionary.text import to_hiragana


def frequency(data) -> tuple[float, str] | None:
    """(value, display) of one freq record's data (a number, a string, {value, displayValue});
    None for anything else, and for a value that is not a finite number (NaN, Infinity, 1e400,
    which a store imported before the import's number checks may hold)."""
    while isinstance(data, dict) and "frequency" in data:  # {"reading": …, "frequency": …}
        data = data["frequency"]
    if isinstance(data, str):
        m = re.match(r"\s*(\d+(?:\.\d+)?)", data)
        value = float(m.group(1)) if m else 0.0
        return (value, data) if math.isfinite(value) else None
    display = None
    if isinstance(data, dict):
        data, display = data.get("value"), data.get("displayValue")
    if isinstance(data, bool) or not isinstance(data, (int, float)) or not _finite(data):
        return None
    return float(data), str(display) if display else _number(data)


def _finite(number: float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an int beyond a double
        return False


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def same_reading(a: str, b: str) -> bool:
    return to_hiragana(a) == to_hiragana(b)


def frequency_badge(title: str, parsed: tuple[float, str]) -> dict:
    """A frequency badge: the dictionary, the value (an int when whole) and what it shows."""
    number = parsed[0]
    return {
        "dictionary": title,
        "value": int(number) if number.is_integer() else number,
        "display": parsed[1],
    }


def _frequency_record(value, title: str, readings: list[str]) -> dict | None:
    reading = value.get("reading") if isinstance(value, dict) else None
    if reading and not any(same_reading(reading, r) for r in readings):
        return None
    parsed = frequency(value)
    return frequency_badge(title, parsed) if parsed else None


def _pitch_record(value, title: str, readings: list[str]) -> dict | None:
    reading = value.get("reading", "")
    if not any(same_reading(reading, r) for r in readings):
        return None
    positions: list[int] = []
    for pitch in value["pitches"]:
        p = pitch_position(pitch.get("position")) if isinstance(pitch, dict) else None
        if p is not None and p not in positions:
            positions.append(p)
    return {"dictionary": title, "reading": reading, "positions": positions} if positions else None


def _ipa_record(value, title: str, readings: list[str]) -> dict | None:
    if not isinstance(value, dict):
        return None
    reading = str(value.get("reading", ""))
    if not any(same_reading(reading, r) for r in readings):
        return None
    found = [
        str(t["ipa"])
        for t in value.get("transcriptions") or []
        if isinstance(t, dict) and t.get("ipa")
    ]
    return {"dictionary": title, "reading": reading, "transcriptions": found} if found else None


# A term_meta record by its mode: (data, dictionary title, the word's readings) -> what the popup
# shows, None when the record is not about this word. Its modes are the ones an import accepts
# (app/dictionary/yomitan_banks.py).
META_RECORDS = {"freq": _frequency_record, "pitch": _pitch_record, "ipa": _ipa_record}
