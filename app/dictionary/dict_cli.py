"""`hayai dict import FILE.zip` · `hayai dict list [--json]` · `hayai dict remove TITLE`:
Yomitan-format dictionaries in our own store (app/dictionary/yomitan.py)."""

from __future__ import annotations

import json
import sys


def add_parser(sub) -> None:
    p = sub.add_parser("dict", help="import, list and remove Yomitan-format dictionaries")
    actions = p.add_subparsers(dest="dict_action", metavar="ACTION", required=True)
    q = actions.add_parser(
        "import", help="import a Yomitan dictionary zip (replaces the same title)"
    )
    q.add_argument("file", metavar="FILE.zip")
    q = actions.add_parser(
        "list", help="the imported dictionaries, in lookup order (with JMdict's place among them)"
    )
    q.add_argument("--json", action="store_true", help="print a JSON list")
    q = actions.add_parser("remove", help="remove an imported dictionary by its title")
    q.add_argument("title", metavar="TITLE")


def main(args) -> int:
    from app.dictionary.yomitan import Store

    store = Store()
    try:
        return _ACTIONS[args.dict_action](store, args)
    finally:
        store.close()


def _import(store, args) -> int:
    from app.cli_progress import ProgressBars
    from app.dictionary.yomitan_zip import ImportError_

    try:
        with ProgressBars("importing") as bars:  # closed (its line ended) before a message
            info = store.import_zip(args.file, bars)
    except ImportError_ as exc:
        print(f"hayai dict import: {exc}; nothing was changed", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("hayai dict import: interrupted; nothing was changed", file=sys.stderr)
        return 130
    print(
        f"imported {info.title} (revision {info.revision or '-'}): "
        f"{', '.join(info.kinds) or 'no records'} in {info.imported_s:.1f} s"
    )
    return 0


def _list(store, args) -> int:
    infos = store.dictionaries()
    if getattr(args, "json", False):
        print(json.dumps([d.to_json() for d in infos], ensure_ascii=False, indent=1))
        return 0
    if not infos:
        print("No imported dictionaries (hayai dict import FILE.zip adds one).")
        return 0
    by_title = {d.title: d for d in infos}
    for n, title in enumerate(store.order(), 1):
        d = by_title.get(title)
        if d is None:  # JMdict's place among them (Settings moves it)
            print(f"{n}. {title}")
            continue
        state = "" if d.enabled else "  [disabled]"
        print(f"{n}. {d.title}  (revision {d.revision or '-'}){state}")
        print(f"   {', '.join(d.kinds) or 'no records'}")
    return 0


def _remove(store, args) -> int:
    try:
        store.remove(args.title)
    except KeyError as exc:
        print(f"hayai dict remove: {exc.args[0]}", file=sys.stderr)
        return 1
    print(f"removed {args.title}")
    return 0


_ACTIONS = {"import": _import, "list": _list, "remove": _remove}  # the parser's ACTIONs
