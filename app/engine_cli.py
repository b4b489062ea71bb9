"""`hayai ocr`, `hayai bench` and `hayai model`: the engine from the command line (no Qt here).

Bad input never prints a traceback: a file that cannot be read becomes an error line, a model
that cannot be loaded a one-line message, and the exit code says which.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

# Decoded pixels per batch: 8 4K screenshots (~200 MB as RGB). Larger crops make smaller batches, so
# memory stays bounded whatever --batch-size says; the results do not depend on the batching.
BATCH_PIXELS = 8 * 3840 * 2160
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff"}


def _fail(message: str, code: int = 2) -> int:
    print(f"hayai: {message}", file=sys.stderr)
    return code


def engine_options(args) -> dict:
    """The engine options on the command line → `load_recognizer` keyword arguments."""
    return dict(
        model_dir=args.model,
        variant=args.variant,
        device=args.device,
        precision=args.precision,
        compile=args.compile,
    )


def _load(args, **overrides):
    """The recognizer for the engine options (overrides win), or an error message (str)."""
    from model.recognizer import load_recognizer
    from model.weights import ModelNotFoundError, WeightsError

    try:
        return load_recognizer(**{**engine_options(args), **overrides})
    except (ModelNotFoundError, WeightsError, RuntimeError, ValueError, OSError) as e:
        return str(e)


def expand_inputs(names: list[str]) -> list[str]:
    """Folders become their image files (sorted by name); files and `-` stay as given. A FIFO or
    device with an image suffix stays in the list: the loader refuses it at once, with a message."""
    out = []
    for name in names:
        p = Path(name)
        if name != "-" and p.is_dir():
            out += [str(f) for f in sorted(p.iterdir()) if f.suffix.lower() in IMAGE_SUFFIXES]
        else:
            out.append(name)
    return out


def open_image(name: str, max_patches: int | None = None):
    """One input (a path or `-`) → RGB, through the one safe loader (model/images.py)."""
    from model.images import MAX_PATCH_BUDGET
    from model.images import open_image as load

    return load(name, max_patches or MAX_PATCH_BUDGET)


def ocr(args) -> int:
    from collections import deque

    from model.images import ImageError, open_image, probe, read_bytes

    names = expand_inputs(args.images)
    if not names:
        return _fail(
            "no images given (folders are searched for " + ", ".join(sorted(IMAGE_SUFFIXES)) + ")"
        )
    records: list[dict | None] = [None] * len(names)
    stdin = {}  # `-`: read once, decoded with its batch

    def source(i):
        return stdin.get(i, names[i])

    # Headers first, before the model loads (nothing decoded): unreadable files become error lines
    # at once, and similar sizes go together (equal patch grids for nova, similar text lengths).
    pixels = {}
    for i, name in enumerate(names):
        try:
            if name == "-":
                stdin[i] = read_bytes("-")
            width, height = probe(stdin[i] if name == "-" else read_bytes(name))
            pixels[i] = width * height
        except ImageError as e:
            records[i] = {"image": name, "error": str(e)}
    if not pixels:  # nothing readable: every error line, without loading the model at all
        for record in records:
            _print_record(record, args.json)
        return 1
    rec = _load(args)
    if isinstance(rec, str):
        return _fail(rec)
    budget = rec.config.patch_budget  # decoding checks the size against this model's own budget
    order = sorted(pixels, key=pixels.get)
    chunks: list[list[int]] = []  # at most --batch-size crops, and at most BATCH_PIXELS decoded
    for i in order:
        last = chunks[-1] if chunks else None
        if (
            last
            and len(last) < args.batch_size
            and sum(pixels[j] for j in last) + pixels[i] <= BATCH_PIXELS
        ):
            last.append(i)
        else:
            chunks.append([i])
    read = deque()  # the indices of each batch handed to the model, in order

    def decoded():  # batch by batch: only the batch being read is decoded
        for chunk in chunks:
            images, kept = [], []
            for i in chunk:
                try:
                    images.append(open_image(source(i), budget))
                    kept.append(i)
                except ImageError as e:  # changed since its header was read, or damaged pixels
                    records[i] = {"image": names[i], "error": str(e)}
                stdin.pop(i, None)
            if images:
                read.append(kept)
                yield images

    printed, start, count = 0, time.perf_counter(), 0

    def print_ready():  # input order, as soon as possible
        nonlocal printed
        while printed < len(records) and records[printed] is not None:
            _print_record(records[printed], args.json)
            printed += 1

    print_ready()
    outcomes = rec.read_batches(decoded(), max_new_tokens=args.max_new_tokens, num_beams=args.beams)
    for outcome in outcomes:
        chunk = read.popleft()
        for n, i in enumerate(chunk):
            if isinstance(outcome, Exception):  # out of memory and the like: this batch fails
                records[i] = {"image": names[i], "error": f"{type(outcome).__name__}: {outcome}"}
            else:
                r = outcome[n]
                records[i] = {
                    "image": names[i],
                    "text": r.text,
                    "token_ids": r.token_ids,
                    "ms": round(r.ms, 2),
                }
                count += 1
        print_ready()
    print_ready()  # the rest: files that failed while their batch was decoded, or every input
    elapsed = time.perf_counter() - start
    if count > 1:
        print(
            f"read {count} crops in {elapsed:.2f} s ({count / elapsed:.1f} crops/s)",
            file=sys.stderr,
        )
    return 1 if any("error" in r for r in records) else 0


def _print_record(record: dict, as_json: bool) -> None:
    from model.tokenizer import one_line

    if as_json:
        print(json.dumps(record, ensure_ascii=False), flush=True)
    elif "error" in record:
        print(f"{record['image']}: error: {record['error']}", file=sys.stderr, flush=True)
    else:
        print(one_line(record["text"]), flush=True)


def bench(args) -> int:
    from model import bench as engine_bench

    if args.random_weights and args.model:
        return _fail("--random-weights builds the model in memory: leave out --model")
    rec = _load(args, random_weights=args.random_weights)
    if isinstance(rec, str):
        return _fail(rec)
    from model.images import ImageError

    try:
        image = open_image(args.image or str(_sample()), rec.config.patch_budget)
    except ImageError as e:
        return _fail(f"cannot read {args.image}: {e}")
    if args.fidelity:  # the same weights loaded twice: exact fp32 and the fast path
        other = _load(
            args,
            random_weights=args.random_weights,
            precision="exact" if rec.precision == "fast" else "fast",
        )
        if isinstance(other, str):
            return _fail(other)
        exact, fast = (other, rec) if rec.precision == "fast" else (rec, other)
        vertical = open_image(str(_sample(vertical=True)))
        report = engine_bench.fidelity(exact, fast, [image, vertical], args.max_new_tokens)
        print(
            json.dumps(report)
            if args.json
            else "\n".join(f"  {k:16} {v}" for k, v in report.items())
        )
        return 0
    report = engine_bench.run(
        rec,
        image,
        runs=args.runs,
        max_new_tokens=args.max_new_tokens,
        batch_size=args.batch_size,
        num_beams=args.beams,
        never_stop=args.random_weights,
    )
    print(json.dumps(report) if args.json else engine_bench.format_report(report))
    return 0


def _sample(vertical: bool = False) -> Path:
    import resources

    return resources.path(resources.SAMPLE_VERTICAL if vertical else resources.SAMPLE_HORIZONTAL)


def model(args) -> int:
    from model.download import cli

    return cli(args.action, args.variant)
