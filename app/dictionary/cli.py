"""`hayai lookup TEXT [--lang auto|ja|zh|ko] [--json]`."""

from __future__ import annotations

import json
import sys

from app.dictionary.models import Entry, LookupResult


def _progress_printer():
    from app.cli_progress import ProgressBars

    return ProgressBars("building the dictionary index (once)")


def format_entry(entry: Entry, number: int) -> str:
    """A plain-text rendering for the terminal."""
    head = entry.headword
    if entry.reading and entry.reading != entry.headword:
        head += f" 【{entry.reading}】"
    lines = [f"{number}. {head}"]
    if entry.pinyin is not None:
        lines[0] += f"  {entry.traditional}" if entry.traditional != entry.headword else ""
    meta = []
    if entry.deinflection:
        meta.append(f"{entry.match} ← {entry.headword}: {' · '.join(entry.deinflection)}")
    if entry.pos:
        meta.append("[" + ", ".join(entry.pos) + "]")
    if len(entry.readings) > 1:
        meta.append("readings: " + "、".join(entry.readings))
    meta.append(f"({entry.dictionary or entry.source})")
    lines.append("   " + "  ".join(meta))
    if entry.frequencies:
        lines.append(
            "   frequency: "
            + " · ".join(f"{f['dictionary']} {f['display']}" for f in entry.frequencies)
        )
    for p in entry.pitch:
        lines.append(
            f"   pitch ({p['dictionary']}): "
            + "  ".join(pitch_text(p["reading"], n) for n in p["positions"])
        )
    for i, sense in enumerate(entry.senses, 1):
        tags = f" ({', '.join(sense.notes)})" if sense.notes else ""
        glosses = "; ".join(sense.glosses).replace("\n", "\n      ")
        lines.append(f"   {i}) {glosses}{tags}")
    for k in entry.kanji or []:
        facts = [
            f"{k.strokes} strokes" if k.strokes else "",
            f"grade {k.grade}" if k.grade else "",
            f"JLPT {k.jlpt} (old)" if k.jlpt else "",
        ]
        lines.append(
            f"   {k.char}: {', '.join(k.meanings[:5])} | on {'、'.join(k.on) or '-'} | "
            f"kun {'、'.join(k.kun) or '-'} | {' · '.join(f for f in facts if f)}"
        )
    return "\n".join(lines)


def pitch_text(reading: str, position: int) -> str:
    """The reading with the downstep marked, Yomitan-style: はし＼ [2], はし [0]."""
    from app.dictionary.pitch import morae

    parts = morae(reading)
    if 0 < position <= len(parts):
        return "".join(parts[:position]) + "＼" + "".join(parts[position:]) + f" [{position}]"
    return f"{reading} [{position}]"


def format_result(result: LookupResult) -> str:
    if not result.entries:
        return result.message or "No entries."
    return "\n\n".join(format_entry(e, i) for i, e in enumerate(result.entries, 1))


def main(args) -> int:
    from app.dictionary.lookup import Dictionary, DictionaryUnavailable

    text = (args.text or "").strip()
    if not text:
        print("hayai lookup: TEXT is empty", file=sys.stderr)
        return 2
    dictionary = Dictionary()
    try:
        if not dictionary.is_ready():
            with _progress_printer() as bars:
                dictionary.prepare(bars)
        result = dictionary.lookup(text, 0, lang=getattr(args, "lang", "auto") or "auto")
    except (DictionaryUnavailable, ValueError) as exc:
        print(f"hayai lookup: {exc}", file=sys.stderr)
        return 1
    try:
        if getattr(args, "json", False):
            print(json.dumps(result.to_json(), ensure_ascii=False, indent=1, allow_nan=False))
            if result.message and not result.entries:
                print(result.message, file=sys.stderr)
        else:
            print(format_result(result))
    except BrokenPipeError:  # `hayai lookup … | head`
        sys.stderr.close()
    return 0
