"""`hayai bench --page`: a whole page read at once (app/page/read.py): finding its blocks, then reading
them in batches, on a real page (a sample page of the repository's tests/data/pages, or --image).
With --random-weights the model is real-size with random weights: it never stops early, so every
block costs --max-new-tokens decode steps, or its token limit where that is less (the worst case; a
real block of 10-40 letters stops after about as many tokens and its end of text). The report says the tokens decoded per block,
each crop's patches, and the process's CPU time beside the wall clock (the machine may be shared)."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "tests" / "data" / "pages" / "001b.jpg"


def _read_once(rec, image, args) -> tuple[float, float, float, list, list[int], list[int]]:
    """(find ms, find + read ms, CPU s, results, each crop's patch budget, each block's token
    limit): what `read_page` does, with its results kept."""
    from app.page.read import blocks_of, budgets_of, crop_of, read_crops, token_limit

    cpu, started = time.process_time(), time.perf_counter()
    found = blocks_of(image)
    find_ms = (time.perf_counter() - started) * 1000
    crops = [crop_of(image, b) for b in found]
    budgets = budgets_of(rec, found, crops, args.patches)
    limits = [token_limit(b, args.max_new_tokens) for b in found]
    results = read_crops(
        rec, crops, args.batch_size, args.max_new_tokens, budgets=budgets, limits=limits
    )
    total_ms = (time.perf_counter() - started) * 1000
    budgets = budgets or [rec.config.patch_budget] * len(crops)
    return find_ms, total_ms, time.process_time() - cpu, results, budgets, limits


def main(args) -> int:
    from app.engine_cli import _fail
    from app.engines.local import load_from_args as _load
    from app.engines.local import recognizer_options
    from app.page.read import BATCH_SIZE, PAGE_PATCHES
    from model.config import declared_cap
    from model.images import ImageError, open_image

    if args.batch_size is None:  # the bench's own default is for one crop's copies
        args.batch_size = BATCH_SIZE

    if args.random_weights and args.model:
        return _fail("--random-weights builds the model in memory: leave out --model")
    # The page first, against the model's cap from its folder (or, random, its variant's), as
    # hayai page checks it: a page that cannot be read is said at once, before the model loads.
    chosen = recognizer_options(args)
    cap = declared_cap(None if args.random_weights else chosen["model_dir"], chosen["variant"])
    name = args.image or str(SAMPLE)
    try:
        image = open_image(name, cap, decode_patches=PAGE_PATCHES)
    except ImageError as e:
        return _fail(f"cannot read {name}: {e} (give a page with --image)")
    rec = _load(args, random_weights=args.random_weights)
    if isinstance(rec, str):
        return _fail(rec)
    rec.warmup(max_new_tokens=args.max_new_tokens)
    runs = [_read_once(rec, image, args) for _ in range(args.runs)]
    results, limits = runs[-1][3], runs[-1][5]
    # decoded: the end of text included, unless the block stopped at its limit
    tokens = [min(len(r.token_ids) + 1, limit) for r, limit in zip(results, limits)]
    report = {
        "image": name,
        "size": f"{image.width}x{image.height}",
        "blocks": len(results),
        "batch_size": args.batch_size,
        "max_new_tokens": args.max_new_tokens,
        "patches": args.patches,
        "crop_patches": runs[-1][4],
        "tokens_per_block": tokens,  # decoded, the end of text included
        "token_limits": limits,  # each block's (app/page/read.py, token_limit)
        "device": str(rec.device),
        "precision": rec.precision,
        "find_ms": statistics.median(r[0] for r in runs),
        "page_ms": {
            "median": statistics.median(r[1] for r in runs),
            "max": max(r[1] for r in runs),
        },
        "page_cpu_s": statistics.median(r[2] for r in runs),
    }
    if args.json:
        print(json.dumps(report))
    else:
        _print(report, args.runs)
    sys.stdout.flush()
    return 0


def _print(report: dict, runs: int) -> None:
    p = report["page_ms"]
    print(
        f"a whole page: {report['image']} ({report['size']}), {report['blocks']} blocks, {runs} runs"
    )
    print(f"  find the blocks:           median {report['find_ms']:.0f} ms")
    print(
        f"  find + read every block:   median {p['median'] / 1000:.2f} s, max {p['max'] / 1000:.2f} s"
    )
    print(f"  CPU time of the process:   median {report['page_cpu_s']:.1f} s")
    print(
        f"  patches per crop ({report['patches']}): {report['crop_patches']}"
        f" (sum {sum(report['crop_patches'])})"
    )
    print(f"  tokens decoded per block:  {report['tokens_per_block']}")
    print(f"  token limit per block:     {report['token_limits']}")
    print(
        f"  ({report['device']}, {report['precision']}, batches of {report['batch_size']}, "
        f"at most {report['max_new_tokens']} tokens)"
    )
