"""`hayai ocr`: read images, one line (or JSON record) per input, in input order."""

from __future__ import annotations

import json
import sys
import time
from collections import deque

from app.engine_cli import _fail
from model.images import shown_name

# Decoded pixels per batch: 8 4K screenshots (~200 MB as RGB). Larger crops make smaller batches, so
# memory stays bounded whatever --batch-size says; the results do not depend on the batching.
BATCH_PIXELS = 8 * 3840 * 2160


def batches(pixels: dict[int, int], batch_size: int) -> list[list[int]]:
    """The inputs (index → declared pixels) in batches of similar sizes: smallest first, at most
    `batch_size` crops and at most BATCH_PIXELS decoded pixels each."""
    chunks: list[list[int]] = []
    for i in sorted(pixels, key=lambda j: pixels[j]):
        last = chunks[-1] if chunks else None
        if (
            last
            and len(last) < batch_size
            and sum(pixels[j] for j in last) + pixels[i] <= BATCH_PIXELS
        ):
            last.append(i)
        else:
            chunks.append([i])
    return chunks


class _OcrRun:
    """One `hayai ocr`: every input's record (None until known), printed in input order as soon as
    the ones before it are; `-` is read once and kept until its batch is decoded."""

    def __init__(self, names: list[str], as_json: bool):
        self.names, self.as_json = names, as_json
        self.shown = [shown_name(name) for name in names]  # as printed: valid text (UTF-8)
        self.named = len(names) > 1  # plain output says which file each line is of
        self.records: list[dict | None] = [None] * len(names)
        self.stdin: dict[int, bytes] = {}
        self.printed = 0
        self.read: deque[list[int]] = deque()  # the indices of each batch handed to the model

    def fail(self, i: int, message: str) -> None:
        self.records[i] = {"image": self.shown[i], "error": message}

    def probe(self, cap) -> dict[int, int]:
        """Headers only, before the model loads: index → declared pixels of each readable input
        within the model's image `cap`; the others become error records at once."""
        from model.images import ImageError, probe, read_bytes

        pixels = {}
        for i, name in enumerate(self.names):
            try:
                if name == "-":
                    self.stdin[i] = read_bytes("-")
                width, height = probe(self.stdin[i] if name == "-" else read_bytes(name), cap)
                pixels[i] = width * height
            except ImageError as e:
                self.fail(i, str(e))
        return pixels

    def decoded(self, chunks: list[list[int]], cap):
        """Batch by batch: only the batch being read is decoded."""
        from model import images

        for chunk in chunks:
            decoded, kept = [], []
            for i in chunk:
                try:
                    decoded.append(images.open_image(self.stdin.get(i, self.names[i]), cap))
                    kept.append(i)
                except images.ImageError as e:  # changed since its header was read, or damaged
                    self.fail(i, str(e))
                self.stdin.pop(i, None)
            if decoded:
                self.read.append(kept)
                yield decoded

    def done(self, outcome) -> int:
        """The next batch's results (or its exception: out of memory and the like); crops read."""
        chunk = self.read.popleft()
        if isinstance(outcome, Exception):
            for i in chunk:
                self.fail(i, f"{type(outcome).__name__}: {outcome}")
            return 0
        for i, r in zip(chunk, outcome):
            self.records[i] = {
                "image": self.shown[i],
                "text": r.text,
                "token_ids": r.token_ids,
                "ms": round(r.ms, 2),
            }
        return len(chunk)

    def print_ready(self) -> None:
        while self.printed < len(self.records):
            record = self.records[self.printed]
            if record is None:
                return
            _print_record(record, self.as_json, self.named)
            self.printed += 1

    def exit_code(self) -> int:
        return 1 if any(r is None or "error" in r for r in self.records) else 0


def ocr(args) -> int:
    from app.engines.choice import resolve_model
    from app.engines.local import auto_batch_size, load_from_args
    from app.page.cli import say_skipped
    from model.images import IMAGE_SUFFIXES, expand_inputs

    skipped: list[tuple[str, str]] = []
    names = expand_inputs(args.images, skipped)
    for name, why in skipped:  # what a folder holds besides images, as hayai page says it
        say_skipped(shown_name(name), why)
    if not names:
        return _fail(
            "no images given (folders are searched for " + ", ".join(sorted(IMAGE_SUFFIXES)) + ")"
        )
    run = _OcrRun(names, args.json)
    # Headers first, before the model loads (nothing decoded): unreadable files and those over the
    # model's image cap become error lines at once, and similar sizes go together (equal patch grids
    # for nova, similar text lengths).
    pixels = run.probe(resolve_model(args.model, args.variant).image_cap)
    if not pixels:  # nothing readable: every error line, without loading the model at all
        run.print_ready()
        return 1
    rec = load_from_args(args)
    if isinstance(rec, str):
        return _fail(rec)
    if args.batch_size == "auto":
        args.batch_size = auto_batch_size(rec)
    batches_in = run.decoded(batches(pixels, args.batch_size), rec.config.image_cap)
    start, count = time.perf_counter(), 0
    run.print_ready()
    for outcome in rec.read_batches(
        batches_in, max_new_tokens=args.max_new_tokens, num_beams=args.beams
    ):
        count += run.done(outcome)
        run.print_ready()
    run.print_ready()  # the rest: files that failed while their batch was decoded, or every input
    elapsed = time.perf_counter() - start
    if count > 1:
        print(
            f"read {count} crops in {elapsed:.2f} s ({count / elapsed:.1f} crops/s)",
            file=sys.stderr,
        )
    return run.exit_code()


def _print_record(record: dict, as_json: bool, named: bool = False) -> None:
    """One input's line: JSON; or plain, `NAME: text` when several inputs were given."""
    from model.tokenizer import one_line

    if as_json:
        print(json.dumps(record, ensure_ascii=False), flush=True)
    elif "error" in record:
        print(f"{record['image']}: error: {record['error']}", file=sys.stderr, flush=True)
    elif named:
        print(f"{record['image']}: {one_line(record['text'])}", flush=True)
    else:
        print(one_line(record["text"]), flush=True)
