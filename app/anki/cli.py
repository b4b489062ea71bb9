"""`hayai anki add WORD [--sentence TEXT] [--image FILE] [--json]` and `hayai anki status [--json]`.

The same code as the popup's "+ Anki" button (app/anki/miner.py), for scripts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def add_parser(sub) -> None:
    """Register `hayai anki add|status` on the top-level sub-command parser."""
    p = sub.add_parser(
        "anki", help="make Anki cards through AnkiConnect (as the popup's + Anki does)"
    )
    anki = p.add_subparsers(dest="anki_command", metavar="ACTION", required=True)
    q = anki.add_parser("add", help="add a note for WORD (looked up in the dictionary)")
    q.add_argument("word", metavar="WORD")
    q.add_argument("--sentence", metavar="TEXT", help="the line the word was read in")
    q.add_argument("--image", metavar="FILE", help="a picture for the note (e.g. the crop)")
    q.add_argument("--json", action="store_true", help="print the result as one JSON object")
    q = anki.add_parser(
        "status",
        help="is AnkiConnect reachable; are the deck and note type there (exit 1 when adding "
        "would fail)",
    )
    q.add_argument("--json", action="store_true")


def _miner():
    from app.anki.miner import AnkiConfig, Miner
    from app.settings import Settings

    return Miner(AnkiConfig.from_settings(Settings()))


def _mined(args):
    """The word as the dictionary knows it (reading, senses...), or just the word."""
    from app.anki.note import Mined
    from app.dictionary.lookup import Dictionary, DictionaryUnavailable

    source = "hayai anki"
    image_png = _png(Path(args.image)) if args.image else None
    try:
        dictionary = Dictionary()
        if not dictionary.is_ready():
            from app.dictionary.cli import index_progress

            dictionary.prepare(index_progress())
        result = dictionary.lookup(args.word, 0)
    except (DictionaryUnavailable, ValueError):
        result = None
    if result and result.entries and result.match_len == len(args.word):
        entry = result.entries[0]
        return Mined.from_entry(entry, args.sentence or "", source=source, image_png=image_png)
    return Mined(
        word=args.word,
        sentence=args.sentence or "",
        match=args.word,
        source=source,
        image_png=image_png,
    )


def _png(path: Path) -> bytes:
    """The image as PNG bytes, read by the one safe loader (model/images.py), so Anki gets one
    known format."""
    import io

    from model.images import open_image

    buffer = io.BytesIO()
    open_image(path).save(buffer, format="PNG")
    return buffer.getvalue()


def _found(found: bool | None) -> str:
    """found, not found, or unknown when Anki could not be asked."""
    return "unknown" if found is None else "found" if found else "not found"


def main(args) -> int:
    from app.anki.connect import AnkiError

    if args.anki_command == "status":
        status = _miner().status()
        if args.json:
            print(json.dumps(status.to_json(), ensure_ascii=False))
        else:
            if status.version is not None:
                print(f"AnkiConnect: version {status.version}")
            else:
                print(f"AnkiConnect: {'answers' if status.reachable else 'not reachable'}")
            print(f"deck “{status.deck}”: {_found(status.deck_found)}")
            print(f"note type “{status.note_type}”: {_found(status.note_type_found)}")
            if status.message:
                print(status.message)
        return 0 if status.reachable and not status.message else 1

    word = (args.word or "").strip()
    if not word:
        print("hayai anki add: WORD is empty", file=sys.stderr)
        return 2
    args.word = word
    try:
        from app.dictionary.furigana import furigana

        mined = _mined(args)
        miner = _miner()
        added = miner.add(mined, furigana)
    except (AnkiError, OSError, ValueError) as exc:  # ValueError: model.images.ImageError
        if args.json:
            print(json.dumps({"error": str(exc)}, ensure_ascii=False))
        print(f"hayai anki add: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(added.to_json(), ensure_ascii=False))
    elif added.duplicate:
        ids = ", ".join(str(n) for n in added.existing) or "?"
        where = "the collection" if miner.config.duplicates == "collection" else f"“{added.deck}”"
        print(f"already in {where}: note {ids}")
    else:
        print(f"added note {added.note_id} to “{added.deck}” ({added.note_type})")
    return 0
