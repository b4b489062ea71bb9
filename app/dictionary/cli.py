"""`hayai lookup TEXT [--lang auto|ja|zh|ko] [--json]`."""

from __future__ import annotations

import json
import sys

from app.dictionary.models import Entry, KanjiInfo, LookupResult


def index_progress():
    """The progress bar of the first-run index build (`hayai lookup`, `hayai anki`)."""
    from app.cli_progress import ProgressBars

    return ProgressBars("building the dictionary index (once)")


def format_entry(entry: Entry, number: int) -> str:
    """A plain-text rendering for the terminal."""
    lines = [_head(entry, number), "   " + "  ".join(_facts(entry))]
    if entry.frequencies:
        lines.append(
            "   frequency: "
            + " · ".join(f"{f['dictionary']} {f['display']}" for f in entry.frequencies)
        )
    lines += [
        f"   pitch ({p['dictionary']}): "
        + "  ".join(pitch_text(p["reading"], n) for n in p["positions"])
        for p in entry.pitch
    ]
    for i, sense in enumerate(entry.senses, 1):
        tags = f" ({', '.join(sense.notes)})" if sense.notes else ""
        glosses = "; ".join(sense.glosses).replace("\n", "\n      ")
        lines.append(f"   {i}) {glosses}{tags}")
    lines += [_kanji_line(k) for k in entry.kanji or []]
    return "\n".join(lines)


def _head(entry: Entry, number: int) -> str:
    """1. 食べる 【たべる】; a Chinese word with its traditional spelling when it differs."""
    head = f"{number}. {entry.headword}"
    if entry.reading and entry.reading != entry.headword:
        head += f" 【{entry.reading}】"
    if entry.pinyin is not None and entry.traditional != entry.headword:
        head += f"  {entry.traditional}"
    return head


def _facts(entry: Entry) -> list[str]:
    """The deinflection chain, the POS tags, the readings and the dictionary."""
    facts = []
    if entry.deinflection:
        facts.append(f"{entry.match} ← {entry.headword}: {' · '.join(entry.deinflection)}")
    if entry.pos:
        facts.append("[" + ", ".join(entry.pos) + "]")
    if len(entry.readings) > 1:
        facts.append("readings: " + "、".join(entry.readings))
    facts.append(f"({entry.dictionary or entry.source})")
    return facts


def _kanji_line(k: KanjiInfo) -> str:
    facts = [
        f"{k.strokes} strokes" if k.strokes else "",
        f"grade {k.grade}" if k.grade else "",
        f"JLPT {k.jlpt} (old)" if k.jlpt else "",
    ]
    return (
        f"   {k.char}: {', '.join(k.meanings[:5])} | on {'、'.join(k.on) or '-'} | "
        f"kun {'、'.join(k.kun) or '-'} | {' · '.join(f for f in facts if f)}"
    )


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
            with index_progress() as bars:
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
