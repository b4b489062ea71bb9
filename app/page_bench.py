"""`hayai bench --page`: a whole page read at once (app/page.py): finding its blocks, then reading
them in batches, on a real page (a sample page of the repository's tests/data/pages, or --image).
With --random-weights the model is real-size with random weights: it never stops early, so every
block costs --max-new-tokens steps (the worst case)."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "pages" / "001b.jpg"


def main(args) -> int:
    from app.engine_cli import _fail
    from app.engines.local import load_from_args as _load
    from app.page import PAGE_PATCHES, blocks_of, read_page
    from model.images import ImageError, open_image

    name = args.image or str(SAMPLE)
    try:
        image = open_image(name, PAGE_PATCHES)
    except ImageError as e:
        return _fail(f"cannot read {name}: {e} (give a page with --image)")
    if args.random_weights and args.model:
        return _fail("--random-weights builds the model in memory: leave out --model")
    rec = _load(args, random_weights=args.random_weights)
    if isinstance(rec, str):
        return _fail(rec)
    rec.warmup(max_new_tokens=args.max_new_tokens)
    find, total, blocks = [], [], 0
    for _ in range(args.runs):
        started = time.perf_counter()
        blocks = len(blocks_of(image))
        find.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        read_page(rec, image, name, args.batch_size, args.max_new_tokens)
        total.append((time.perf_counter() - started) * 1000)
    report = {
        "image": name,
        "size": f"{image.width}x{image.height}",
        "blocks": blocks,
        "batch_size": args.batch_size,
        "max_new_tokens": args.max_new_tokens,
        "device": str(rec.device),
        "precision": rec.precision,
        "find_ms": statistics.median(find),
        "page_ms": {"median": statistics.median(total), "max": max(total)},
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(f"a whole page: {name} ({report['size']}), {blocks} blocks, {args.runs} runs")
        print(f"  find the blocks:           median {report['find_ms']:.0f} ms")
        p = report["page_ms"]
        print(
            f"  find + read every block:   median {p['median'] / 1000:.2f} s, max {p['max'] / 1000:.2f} s"
        )
        print(
            f"  ({rec.device}, {rec.precision}, batches of {args.batch_size}, {args.max_new_tokens} tokens)"
        )
    sys.stdout.flush()
    return 0
