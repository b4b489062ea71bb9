"""A stand-in for `hayai blocks --json`, answering from truth.json: checks evaluate.py end to end.

    python tests/blocks_eval/standin_blocks.py [--truth FILE] [--drop N] IMAGE... --json [--at X,Y]...

Each image is the page whose id is its file name's stem (before any '@'), scaled to the image's
width; its blocks are the truth's scored blocks (less the first N with --drop), and a click
proposes the block that holds the point, or null. Prints the same JSON lines as the command.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from PIL import Image


def outward(box: list[int], s: float) -> list[int]:
    return [
        math.floor(box[0] * s),
        math.floor(box[1] * s),
        math.ceil(box[2] * s),
        math.ceil(box[3] * s),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("images", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--at", action="append", default=[])
    parser.add_argument("--truth", type=Path, default=Path(__file__).with_name("truth.json"))
    parser.add_argument("--drop", type=int, default=0, help="leave out the first N blocks")
    args = parser.parse_args(argv)
    pages = {p["id"]: p for p in json.loads(args.truth.read_text(encoding="utf-8"))["pages"]}
    for image in args.images:
        page = pages[image.stem.split("@")[0]]
        with Image.open(image) as im:
            width, height = im.size
        s = width / page["width"]
        boxes = [outward(b["box"], s) for b in page["blocks"] if b["kind"] != "sfx"][args.drop :]
        at = []
        for text in args.at:
            x, y = (int(v) for v in text.split(","))
            hit = [b for b in boxes if b[0] <= x < b[2] and b[1] <= y < b[3]]
            at.append({"point": [x, y], "box": hit[0] if hit else None})
        blocks = [{"box": b, "vertical": True, "lines": [b]} for b in boxes]
        answer = {
            "image": str(image),
            "width": width,
            "height": height,
            "blocks": blocks,
            "ms": 1.0,
        }
        print(json.dumps({**answer, "at": at}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
