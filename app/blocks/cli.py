"""`hayai blocks IMAGE... [--json] [--at X,Y]...`: the text blocks of images, found without reading
them (no OCR model is loaded).

With --json, one line per image, exactly (scripts and checks rely on it):

    {"image": path, "width": W, "height": H,
     "blocks": [{"box": [x0, y0, x1, y1], "vertical": bool, "lines": [[x0, y0, x1, y1], ...]}],
     "ms": float}

blocks in reading order, integer pixels of the image, x1 and y1 exclusive; `ms` is the time the
finder took. Each `--at X,Y` adds {"point": [X, Y], "box": [x0, y0, x1, y1] or null} to the
object's "at" list: the block a click there proposes in the selection (`block_at`, the same code).
Without --json, one readable line per block. An image that cannot be read is said on stderr in one
sentence, the others are still done, and the exit code is 1.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace


def _in_file_pixels(blocks, scale: float, width: int, height: int):
    """Blocks found on an image decoded at a reduced size, in the file's own pixels."""
    if scale == 1.0:
        return blocks

    def box(r):
        x0, y0, x1, y1 = (round(v * scale) for v in r)
        return (max(0, x0), max(0, y0), min(width, x1), min(height, y1))

    return [
        replace(
            b, box=box(b.box), lines=tuple(box(r) for r in b.lines), font_size=b.font_size * scale
        )
        for b in blocks
    ]


def find_in_file(name: str):
    """(width, height, blocks in the file's pixels, ms) of an image file; ImageError when it is
    no image, DetectorError when the detector cannot run."""
    from app.blocks import find_blocks
    from app.page.read import PAGE_PATCHES
    from model.images import open_image, probe, read_bytes

    data = read_bytes(name)
    width, height = probe(data)  # no model reads it: the largest released model's cap
    image = open_image(data, decode_patches=PAGE_PATCHES)  # as `hayai page` opens a page
    started = time.perf_counter()
    found = find_blocks(image)
    ms = (time.perf_counter() - started) * 1000
    return width, height, _in_file_pixels(found, width / image.width, width, height), ms


def record(name: str, width: int, height: int, blocks, ms: float, points) -> dict:
    """One image's JSON object (the module's docstring)."""
    from app.blocks import block_at

    out: dict = {
        "image": name,
        "width": width,
        "height": height,
        "blocks": [
            {"box": list(b.box), "vertical": b.vertical, "lines": [list(r) for r in b.lines]}
            for b in blocks
        ],
        "ms": round(ms, 1),
    }
    if points:
        at = []
        for x, y in points:
            hit = block_at(blocks, x, y)
            at.append({"point": [x, y], "box": None if hit is None else list(hit.box)})
        out["at"] = at
    return out


def _print_readable(rec: dict) -> None:
    print(f"# {rec['image']} ({rec['width']}×{rec['height']}, {rec['ms']:.0f} ms)")
    for n, b in enumerate(rec["blocks"], 1):
        way = "vertical" if b["vertical"] else "horizontal"
        lines = len(b["lines"])
        print(f"{n:3}. {b['box']} {way}, {lines} line{'s' if lines != 1 else ''}")
    for a in rec.get("at", []):
        x, y = a["point"]
        print(f"  at {x},{y}: {a['box'] if a['box'] is not None else 'no block'}")


def main(args) -> int:
    from app.blocks.detector import DetectorError
    from model.images import ImageError, expand_inputs

    names = [n for n in expand_inputs(args.images) if n != "-"]
    if not names:
        print("hayai: no images given (folders are searched for image files)", file=sys.stderr)
        return 2
    failed = 0
    for name in names:
        try:
            width, height, blocks, ms = find_in_file(name)
        except ImageError as e:
            failed += 1
            print(f"hayai: {name}: {e}", file=sys.stderr)
            continue
        except DetectorError as e:
            print(f"hayai: {e}", file=sys.stderr)
            return 2
        rec = record(name, width, height, blocks, ms, args.at)
        if args.json:
            print(json.dumps(rec, ensure_ascii=False), flush=True)
        else:
            _print_readable(rec)
    return 1 if failed else 0
