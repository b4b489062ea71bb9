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
    from app.page import BATCH_SIZE, PATCHES, PATCHES_HELP

    p.add_argument(
        "--batch-size",
        type=int,
        default=BATCH_SIZE,
        metavar="N",
        help=f"crops per batch (default {BATCH_SIZE}; a page of more is read in batches of even sizes)",
    )

    p.add_argument("--patches", choices=PATCHES, default="fit", help=PATCHES_HELP)
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


KEPT = "hayai"  # the key of our own record in a kept page (mokuro carries it along, unread)
# The page record's layout (app/page.py), kept with it: a page kept in another layout is read again.
# 2: lines are texts over lines_coords, and the size is img_width/img_height.
RECORD_LAYOUT = 2


def _source_stamp(name: str) -> dict:
    st = os.stat(name)
    return {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def _cache_file(cache: Path, img_path: str) -> Path:
    """Where a page is kept: mokuro's own page cache (`_ocr/VOLUME/` + its img_path with `.json`
    for the image's suffix), so that mokuro, run on the volume later, takes our pages as read."""
    return (cache / img_path).with_suffix(".json")


def _kept(cached: Path | None, name: str) -> dict | None:
    """The page record kept by an earlier run, if it was read from this very file."""
    if cached is None or not cached.is_file():
        return None
    try:
        kept = json.loads(cached.read_text(encoding="utf-8"))[KEPT]
        fresh = kept.get("source") == _source_stamp(name) and kept.get("layout") == RECORD_LAYOUT
        return kept["record"] if fresh else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # a page cut off mid-write, or mokuro's own: read it again


def _keep(cached: Path, name: str, record: dict, page: dict) -> None:
    """Keep a page as mokuro keeps one (its page without img_path), with our record beside it."""
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_name(cached.name + ".part")
    kept = {k: v for k, v in page.items() if k != "img_path"}
    kept[KEPT] = {"source": _source_stamp(name), "layout": RECORD_LAYOUT, "record": record}
    tmp.write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, cached)  # whole or not at all: a resume never reads half a page


def _read_file(rec, name: str, args) -> dict:
    """One page file → its record; ImageError for a file that is no image, anything else when
    the model or the server fails."""
    from app.page import PAGE_PATCHES, read_page
    from model.images import open_image, probe, read_bytes

    data = read_bytes(name)
    width, _ = probe(data, PAGE_PATCHES)
    image = open_image(data, PAGE_PATCHES)
    return read_page(
        rec,
        image,
        name,
        args.batch_size,
        args.max_new_tokens,
        scale=width / image.width,
        patches=args.patches,
    )


def _failed(name: str, error: str, as_json: bool) -> None:
    print(f"hayai: {name}: {error}", file=sys.stderr)
    if as_json:
        print(json.dumps({"image": name, "error": error}, ensure_ascii=False), flush=True)


def _print_page(record: dict, name: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps(record, ensure_ascii=False), flush=True)
        return
    print(f"# {name}")
    for b in record["blocks"]:
        print(b["text"])
    sys.stdout.flush()


class _Progress:
    """A line per page on stderr (`page 3/200 003.jpg: 14 blocks, 2.1 s`), rewritten in place on
    a terminal."""

    def __init__(self, total: int):
        self.total, self.tty = total, sys.stderr.isatty()

    def page(self, n: int, name: str, record: dict, kept: bool) -> None:
        line = (
            f"page {n}/{self.total} {Path(name).name}: {len(record['blocks'])} blocks, "
            f"{record['ms'] / 1000:.1f} s{' (kept)' if kept else ''}"
        )
        end = "" if self.tty else "\n"
        print(("\r" + line + " " * 8) if self.tty else line, end=end, file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.tty:
            print(file=sys.stderr)


def _write_volume(target: Path, pages: list[dict]) -> None:
    from app.page import mokuro_volume

    volume = mokuro_volume(target.parent.resolve().name, target.stem, pages)
    tmp = target.with_name(target.name + ".part")
    tmp.write_text(json.dumps(volume, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, target)
    print(f"wrote {target} ({len(pages)} pages)", file=sys.stderr)


def main(args) -> int:
    from app.page import mokuro_page
    from model.images import ImageError, expand_inputs

    names = [n for n in expand_inputs(args.images) if n != "-"]
    if not names:
        return _fail("no page images given (folders are searched for image files)")
    if args.batch_size < 1:
        return _fail("--batch-size must be at least 1")
    target = cache = None
    img_paths = [Path(n).name for n in names]
    if args.mokuro:
        target, cache, img_paths = _volume_paths(args.mokuro, names, args.images)
    rec = None
    pages, failed = [], 0
    progress = _Progress(len(names))
    for n, (name, img_path) in enumerate(zip(names, img_paths), 1):
        cached = _cache_file(cache, img_path) if cache else None
        record = _kept(cached, name)
        kept = record is not None
        if record is None:
            if rec is None:
                rec = _recognizer(args)
                if isinstance(rec, str):
                    return _fail(rec)
            try:
                record = _read_file(rec, name, args)
            except ImageError as e:
                failed += 1
                _failed(name, str(e), args.json)
                continue
            except Exception as e:  # the model or the server failed on this page: the rest go on
                failed += 1
                _failed(name, f"{type(e).__name__}: {e}", args.json)
                continue
        page = mokuro_page(record, img_path)
        if cached is not None and not kept:
            _keep(cached, name, record, page)
        _print_page(record, name, args.json)
        pages.append(page)
        progress.page(n, name, record, kept)
    progress.done()
    if target is not None:
        _write_volume(target, pages)
    return 1 if failed else 0
