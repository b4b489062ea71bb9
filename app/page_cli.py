"""`hayai page IMG|DIR... [--json] [--mokuro OUT]`: every text block of whole pages, read (app/page.py).

Without --json each page prints its blocks' texts in reading order; with --json one JSON object per
page and line. --mokuro OUT also writes the pages as a mokuro volume (OUT.mokuro, opened by mokuro's
reader beside the folder of the images); each page read is kept in `_ocr/VOLUME/` beside OUT, so a
run that stops (Ctrl+C, a crash, a full disk) goes on where it stopped. A progress line per page goes
to stderr. With --server URL the pages are read by a Hayai server (`hayai serve`) instead.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def add_parser(sub, engine_options, epilog: str) -> None:
    import argparse

    p = sub.add_parser(
        "page",
        help="find every text block of whole pages and read them all (JSON, mokuro volumes)",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "images",
        nargs="+",
        metavar="IMG|DIR",
        help="page images, or folders of them (read in name order)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per page: image, width, height, ms, blocks (box, vertical, "
        "font_size, lines, text, ms)",
    )
    p.add_argument(
        "--mokuro",
        metavar="OUT",
        help="also write the pages as a mokuro volume OUT (.mokuro added when missing); "
        "pages already read into it are kept (resume)",
    )
    p.add_argument(
        "--server",
        metavar="URL",
        help="read through a Hayai server (hayai serve) at URL instead of the local model",
    )
    p.add_argument(
        "--server-key", metavar="KEY", default="", help="the server's API key, if it needs one"
    )
    p.add_argument("--batch-size", type=int, default=8, metavar="N", help="crops per batch")
    engine_options(p)


def _fail(message: str, code: int = 2) -> int:
    print(f"hayai: {message}", file=sys.stderr)
    return code


def _recognizer(args):
    """The local model or a server, or an error message (str)."""
    if args.server:
        from app.engines import server

        try:
            rec = server.load(url=args.server, key=args.server_key)
            rec.warmup()
        except server.ServerError as e:
            return f"{e} {getattr(e, 'hint', '')}".strip()
        return rec
    from app.engines.local import load_from_args as _load

    return _load(args)


def _volume_paths(out: str, names: list[str], inputs: list[str]):
    """(the .mokuro path, the page cache folder, each page's img_path in the volume)."""
    target = Path(out)
    if target.suffix != ".mokuro":
        target = target.with_name(target.name + ".mokuro")
    volume = target.stem
    cache = target.parent / "_ocr" / volume
    folders = [Path(i) for i in inputs if Path(i).is_dir()]
    rel = []
    for name in names:
        p = Path(name)
        inside = next((f for f in folders if f in p.parents), None)
        rel.append((p.relative_to(inside) if inside else Path(p.name)).as_posix())
    return target, cache, rel


def _source_stamp(name: str) -> dict:
    st = os.stat(name)
    return {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def main(args) -> int:  # noqa: C901 (#26: split it)
    from app.page import PAGE_PATCHES, mokuro_page, mokuro_volume, read_page
    from model.images import ImageError, expand_inputs, open_image, probe, read_bytes

    names = [n for n in expand_inputs(args.images) if n != "-"]
    if not names:
        return _fail("no page images given (folders are searched for image files)")
    if args.batch_size < 1:
        return _fail("--batch-size must be at least 1")
    target = cache = None
    if args.mokuro:
        target, cache, img_paths = _volume_paths(args.mokuro, names, args.images)
    rec = None
    pages, failed = [], 0
    tty = sys.stderr.isatty()
    for n, name in enumerate(names, 1):
        record, kept_note = None, " (kept)"
        cached = cache / (img_paths[n - 1] + ".json") if cache else None
        if cached is not None and cached.is_file():
            try:
                kept = json.loads(cached.read_text(encoding="utf-8"))
                if kept.get("source") == _source_stamp(name):
                    record = kept["record"]
            except (OSError, ValueError, KeyError):
                record = None  # a page cut off mid-write: read it again
        if record is None:
            kept_note = ""
            if rec is None:
                rec = _recognizer(args)
                if isinstance(rec, str):
                    return _fail(rec)
            try:
                data = read_bytes(name)
                width, _ = probe(data, PAGE_PATCHES)
                image = open_image(data, PAGE_PATCHES)
                record = read_page(
                    rec,
                    image,
                    name,
                    args.batch_size,
                    args.max_new_tokens,
                    scale=width / image.width,
                )
            except ImageError as e:
                failed += 1
                print(f"hayai: {name}: {e}", file=sys.stderr)
                if args.json:
                    print(json.dumps({"image": name, "error": str(e)}, ensure_ascii=False))
                continue
            except Exception as e:  # the model or the server failed on this page: the rest go on
                failed += 1
                print(f"hayai: {name}: {type(e).__name__}: {e}", file=sys.stderr)
                if args.json:
                    print(json.dumps({"image": name, "error": f"{type(e).__name__}: {e}"}))
                continue
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                tmp = cached.with_name(cached.name + ".part")
                tmp.write_text(
                    json.dumps(
                        {"source": _source_stamp(name), "record": record}, ensure_ascii=False
                    ),
                    encoding="utf-8",
                )
                os.replace(tmp, cached)  # whole or not at all: a resume never reads half a page
        if args.json:
            print(json.dumps(record, ensure_ascii=False), flush=True)
        else:
            print(f"# {name}")
            for b in record["blocks"]:
                print(b["text"])
            sys.stdout.flush()
        if cache is not None:
            pages.append(mokuro_page(record, img_paths[n - 1]))
        line = f"page {n}/{len(names)} {Path(name).name}: {len(record['blocks'])} blocks, {record['ms'] / 1000:.1f} s{kept_note}"
        print(("\r" + line + " " * 8) if tty else line, end="" if tty else "\n", file=sys.stderr)
    if tty:
        print(file=sys.stderr)
    if target is not None:
        title = target.parent.resolve().name
        volume = mokuro_volume(title, target.stem, pages)
        tmp = target.with_name(target.name + ".part")
        tmp.write_text(json.dumps(volume, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, target)
        print(f"wrote {target} ({len(pages)} pages)", file=sys.stderr)
    return 1 if failed else 0
