"""`hayai page IMG|DIR... [--json] [--mokuro OUT]`: every text block of whole pages, read (app/page/read.py).

Without --json each page prints its blocks' texts in reading order; with --json one JSON object per
page and line. --mokuro OUT also writes the pages as a mokuro volume (OUT.mokuro, opened by mokuro's
reader beside the folder of the images); each page read is kept in `_ocr/VOLUME/` beside OUT, so a
run that stops (Ctrl+C, a crash, a full disk) goes on where it stopped. A progress line per page goes
to stderr. With --server URL the pages are read by a Hayai server (`hayai serve`) instead.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path, PurePosixPath


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
        help="page images, or folders of them (their subfolders too, in natural order: 2 before 10)",
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
    from app.page.read import BATCH_SIZE, PATCHES, PATCHES_HELP

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


def _volume_paths(out: str) -> tuple[Path, Path]:
    """(the .mokuro path, the page cache folder)."""
    target = Path(out)
    if target.suffix != ".mokuro":
        target = target.with_name(target.name + ".mokuro")
    return target, target.parent / "_ocr" / target.stem


def _img_paths(names: list[str], inputs: list[str]) -> list[str]:
    """Each page's img_path in the volume: its path inside the folder given (`ch1/001.jpg` for a
    chapter's subfolder, as mokuro names it), or a file's name."""
    folders = [Path(i) for i in inputs if Path(i).is_dir()]
    rel = []
    for name in names:
        p = Path(name)
        inside = next((f for f in folders if f in p.parents), None)
        rel.append((p.relative_to(inside) if inside else Path(p.name)).as_posix())
    return rel


KEPT = "hayai"  # the key of our own record in a kept page (mokuro carries it along, unread)
# The page record's layout (app/page/read.py), kept with it: a page kept in another layout is read again.
# 2: lines are texts over lines_coords, and the size is img_width/img_height.
RECORD_LAYOUT = 2


def _source_stamp(name: str) -> dict:
    st = os.stat(name)
    return {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def _cache_files(cache: Path, img_paths: list[str]) -> list[Path]:
    """Where each page is kept: mokuro's own page cache (`_ocr/VOLUME/` + its img_path with `.json`
    for the image's suffix), so that mokuro, run on the volume later, takes our pages as read.
    Pages that would share a file there (p.bmp, p.BMP and p.png; case too, for a file system that
    ignores it) are each kept under their whole name (p.bmp.json): mokuro reads those again."""
    plain = [PurePosixPath(p).with_suffix(".json").as_posix() for p in img_paths]
    shared = Counter(p.casefold() for p in plain)
    return [
        cache / (p if shared[p.casefold()] == 1 else f"{img_path}.json")
        for p, img_path in zip(plain, img_paths)
    ]


def _kept(cached: Path | None, name: str, shown: str) -> dict | None:
    """The page record kept by an earlier run, if it was read from this very file (its name, size
    and time: another page may have been kept in this file by a run that had not both)."""
    if cached is None or not cached.is_file():
        return None
    try:
        kept = json.loads(cached.read_text(encoding="utf-8"))[KEPT]
        record = kept["record"]
        fresh = (
            kept.get("source") == _source_stamp(name)
            and kept.get("layout") == RECORD_LAYOUT
            and Path(record["image"]).name == Path(shown).name
        )
        return record if fresh else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # a page cut off mid-write, or mokuro's own: read it again


class WriteFailed(Exception):
    """A file of the volume could not be written; its message says what, where and what to do."""


def _write_whole(path: Path, text: str) -> None:
    """Write `path` whole or not at all: beside it first (`.part`, removed if that fails), then
    in its place, so that a resume never reads half a page and a volume is never cut short."""
    data = text.encode("utf-8")
    tmp = path.with_name(path.name + ".part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise WriteFailed(_write_error(path, len(data), e)) from e


def _write_error(path: Path, size: int, e: OSError) -> str:
    from model.images import shown_name

    where = shown_name(str(path))
    again = "run the same command again: it goes on where it stopped"
    if e.errno not in (errno.ENOSPC, errno.EDQUOT):
        return f"could not write {where}: {e.strerror or e}; once it can be, {again}"
    from model.download import size_text

    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = f"{size_text(shutil.disk_usage(folder).free)} is free"
    except OSError:
        free = "the free room is unknown"
    return f"no room left to write {where}: it needs {size_text(size)} and {free}; make room and {again}"


def _keep(cached: Path, name: str, record: dict, page: dict) -> None:
    """Keep a page as mokuro keeps one (its page without img_path), with our record beside it."""
    kept = {k: v for k, v in page.items() if k != "img_path"}
    kept[KEPT] = {"source": _source_stamp(name), "layout": RECORD_LAYOUT, "record": record}
    _write_whole(cached, json.dumps(kept, ensure_ascii=False))


def _probe_file(name: str, cap) -> tuple[bytes, int]:
    """A page file's bytes and declared width, checked against the model's image cap from its
    header, as `hayai ocr` checks it, before the model loads; ImageError for one that is refused."""
    from model.images import probe, read_bytes

    data = read_bytes(name)
    return data, probe(data, cap)[0]


def _read_file(rec, data: bytes, width: int, cap, shown: str, args) -> dict:
    """One page file's bytes that `_probe_file` accepted → its record (named `shown`); ImageError
    for a file that is no image, anything else when the model or the server fails."""
    from app.page.read import PAGE_PATCHES, read_page
    from model.images import open_image

    image = open_image(data, cap, decode_patches=PAGE_PATCHES)
    return read_page(
        rec,
        image,
        shown,
        args.batch_size,
        args.max_new_tokens,
        scale=width / image.width,
        patches=args.patches,
    )


def say_skipped(name: str, why: str) -> None:
    """The line for a file left out (`hayai page`, `hayai ocr`); `name` as `shown_name` gives it."""
    print(f"hayai: {name}: skipped, {why}", file=sys.stderr)


def _failed(name: str, error: str, as_json: bool) -> None:
    say_skipped(name, error)
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
        self.open = False  # a line on the terminal is not ended yet

    def page(self, n: int, name: str, record: dict, kept: bool) -> None:
        line = (
            f"page {n}/{self.total} {name}: {len(record['blocks'])} blocks, "
            f"{record['ms'] / 1000:.1f} s{' (kept)' if kept else ''}"
        )
        end = "" if self.tty else "\n"
        print(("\r" + line + " " * 8) if self.tty else line, end=end, file=sys.stderr, flush=True)
        self.open = self.tty

    def done(self) -> None:
        if self.open:
            print(file=sys.stderr)
            self.open = False


def _write_volume(target: Path, pages: list[dict]) -> None:
    from app.page.read import mokuro_volume
    from model.images import shown_name

    names = shown_name(target.parent.resolve().name), shown_name(target.stem)
    _write_whole(target, json.dumps(mokuro_volume(*names, pages), ensure_ascii=False))
    print(f"wrote {shown_name(str(target))} ({len(pages)} pages)", file=sys.stderr)


def main(args) -> int:
    from model.images import expand_inputs, natural_key, shown_name

    skipped: list[tuple[str, str]] = []
    names = [n for n in expand_inputs(args.images, skipped) if n != "-"]
    for name, why in skipped:
        say_skipped(shown_name(name), why)
    if not names:
        return _fail("no page images given (folders are searched for image files)")
    if args.batch_size < 1:
        return _fail("--batch-size must be at least 1")
    target = None
    img_paths = _img_paths(names, args.images)
    caches: list[Path | None] = [None] * len(names)
    if args.mokuro:
        target, cache = _volume_paths(args.mokuro)
        # the volume's pages in mokuro's order, however they were given (a shell's * puts 10 before 2)
        order = sorted(range(len(names)), key=lambda i: natural_key(img_paths[i]))
        names, img_paths = [names[i] for i in order], [img_paths[i] for i in order]
        caches = list(_cache_files(cache, img_paths))
    progress = _Progress(len(names))
    try:
        return _read_all(args, names, img_paths, caches, target, progress)
    except WriteFailed as e:  # a full disk: what was read so far is kept, the old volume too
        progress.done()
        return _fail(str(e), 1)


def _read_all(args, names, img_paths, caches, target, progress) -> int:
    from app.engines.choice import resolve_model
    from app.page.read import mokuro_page
    from model.config import ImageCap
    from model.images import ImageError, shown_name

    rec = None
    # The model's image cap, known before it loads; a server's model checks each crop against its
    # own, so a page read through one is held only to the largest released cap here.
    cap = ImageCap() if args.server else resolve_model(args.model, args.variant).image_cap
    pages, failed = [], 0
    for n, (name, img_path, cached) in enumerate(zip(names, img_paths, caches), 1):
        shown = shown_name(name)
        record = _kept(cached, name, shown)
        kept = record is not None
        if record is None:
            try:
                data, width = _probe_file(name, cap)
            except ImageError as e:
                failed += 1
                _failed(shown, str(e), args.json)
                continue
            if rec is None:
                rec = _recognizer(args)
                if isinstance(rec, str):
                    return _fail(rec)
            try:
                record = _read_file(rec, data, width, cap, shown, args)
            except ImageError as e:
                failed += 1
                _failed(shown, str(e), args.json)
                continue
            except Exception as e:  # the model or the server failed on this page: the rest go on
                failed += 1
                _failed(shown, f"{type(e).__name__}: {e}", args.json)
                continue
        page = mokuro_page(record, shown_name(img_path))
        if cached is not None and not kept:
            _keep(cached, name, record, page)
        _print_page(record, shown, args.json)
        pages.append(page)
        progress.page(n, shown_name(img_path), record, kept)
    progress.done()
    if target is not None:
        _write_volume(target, pages)
    return 1 if failed else 0
