"""`hayai ocr`, `hayai bench` and `hayai model`: the engine from the command line (no Qt here).

Bad input never prints a traceback: a file that cannot be read becomes an error line, a model
that cannot be loaded a one-line message, and the exit code says which.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections import deque
from pathlib import Path

from model.config import DATA_FILES, DEFAULT_VARIANT, VARIANTS
from model.download import size_text

# Decoded pixels per batch: 8 4K screenshots (~200 MB as RGB). Larger crops make smaller batches, so
# memory stays bounded whatever --batch-size says; the results do not depend on the batching.
BATCH_PIXELS = 8 * 3840 * 2160


def _fail(message: str, code: int = 2) -> int:
    print(f"hayai: {message}", file=sys.stderr)
    return code


CALIBRATION_FILE = "batch-size.json"  # in the per-user cache folder: calibration key → size


def auto_batch_size(rec, measure=None) -> int:
    """The batch size with the best throughput for this recognizer on this device: remembered per
    device, model and precision in the per-user cache, else measured now (model/calibrate.py; tens
    of seconds on a CPU) and remembered. measure: the timing function (tests give a fake one)."""

    from app.paths import user_dir
    from app.private_files import private_file
    from model import calibrate

    key = calibrate.calibration_key(rec)
    path = user_dir("cache") / CALIBRATION_FILE
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    size = known.get(key)
    if isinstance(size, int) and not isinstance(size, bool) and size >= 1:
        return size
    print("hayai: measuring the best batch size on this device…", file=sys.stderr, flush=True)
    if measure is None:
        from PIL import Image

        measure = calibrate.batch_seconds(rec, Image.open(_sample()).convert("RGB"))
    size, rates = calibrate.choose_batch_size(measure)
    logging.getLogger(__name__).info(
        "batch size %d (crops/s by size: %s)",
        size,
        ", ".join(f"{n}: {r:.2f}" for n, r in rates.items()),
    )
    known[key] = size
    try:  # written aside and renamed: a reader never sees half a file
        tmp = private_file(path.with_name(f"{path.name}.tmp"))
        tmp.write_text(json.dumps(known, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError as e:  # not remembered: measured again next time, the read goes on
        logging.getLogger(__name__).warning("cannot remember the batch size in %s: %s", path, e)
    return size


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
        self.named = len(names) > 1  # plain output says which file each line is of
        self.records: list[dict | None] = [None] * len(names)
        self.stdin: dict[int, bytes] = {}
        self.printed = 0
        self.read: deque[list[int]] = deque()  # the indices of each batch handed to the model

    def fail(self, i: int, message: str) -> None:
        self.records[i] = {"image": self.names[i], "error": message}

    def probe(self) -> dict[int, int]:
        """Headers only, before the model loads: index → declared pixels of each readable input;
        the others become error records at once."""
        from model.images import ImageError, probe, read_bytes

        pixels = {}
        for i, name in enumerate(self.names):
            try:
                if name == "-":
                    self.stdin[i] = read_bytes("-")
                width, height = probe(self.stdin[i] if name == "-" else read_bytes(name))
                pixels[i] = width * height
            except ImageError as e:
                self.fail(i, str(e))
        return pixels

    def decoded(self, chunks: list[list[int]], budget: int):
        """Batch by batch: only the batch being read is decoded."""
        from model import images

        for chunk in chunks:
            decoded, kept = [], []
            for i in chunk:
                try:
                    decoded.append(images.open_image(self.stdin.get(i, self.names[i]), budget))
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
                "image": self.names[i],
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
    from app.engines.local import load_from_args
    from model.images import IMAGE_SUFFIXES, expand_inputs

    names = expand_inputs(args.images)
    if not names:
        return _fail(
            "no images given (folders are searched for " + ", ".join(sorted(IMAGE_SUFFIXES)) + ")"
        )
    run = _OcrRun(names, args.json)
    # Headers first, before the model loads (nothing decoded): unreadable files become error lines
    # at once, and similar sizes go together (equal patch grids for nova, similar text lengths).
    pixels = run.probe()
    if not pixels:  # nothing readable: every error line, without loading the model at all
        run.print_ready()
        return 1
    rec = load_from_args(args)
    if isinstance(rec, str):
        return _fail(rec)
    if args.batch_size == "auto":
        args.batch_size = auto_batch_size(rec)
    # decoding checks the size against this model's own budget
    batches_in = run.decoded(batches(pixels, args.batch_size), rec.config.patch_budget)
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


def bench(args) -> int:
    from app.engines.local import load_from_args
    from model import bench as engine_bench
    from model.images import ImageError, open_image

    if args.random_weights and args.model:
        return _fail("--random-weights builds the model in memory: leave out --model")
    rec = load_from_args(args, random_weights=args.random_weights)
    if isinstance(rec, str):
        return _fail(rec)
    try:
        image = open_image(args.image or str(_sample()), rec.config.patch_budget)
    except ImageError as e:
        return _fail(f"cannot read {args.image}: {e}")
    if args.fidelity:  # the same weights loaded twice: exact fp32 and the fast path
        other = load_from_args(
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
        batch_size=args.batch_size or 1,
        num_beams=args.beams,
        never_stop=args.random_weights,
    )
    print(json.dumps(report) if args.json else engine_bench.format_report(report))
    return 0


def _sample(vertical: bool = False) -> Path:
    import resources

    return resources.path(resources.SAMPLE_VERTICAL if vertical else resources.SAMPLE_HORIZONTAL)


# ---- `hayai model download|info|path` -------------------------------------------------------------


def model(args) -> int:
    """`hayai model download|info|path [--variant]`: model/download.py does the work, this prints."""
    from model import download as dl

    if args.action == "info":
        return model_info(args)
    if getattr(args, "model", None):
        return _fail(
            f"--model is for `hayai model info`; `hayai model {args.action}` uses --variant"
        )
    from app.model_choice import resolve_model, user_settings

    settings = user_settings()
    if args.action == "download":  # no --variant: the Settings variant
        return _download(args.variant or (settings.get("model/variant") if settings else None))
    choice = resolve_model(variant=args.variant, settings=settings)  # no --variant: the one in use
    if choice.folder and not Path(choice.folder).is_dir():
        print(f"{choice.why}, {Path(choice.folder)}, does not exist", file=sys.stderr)
        return 1
    folder = Path(choice.folder) if choice.folder else dl.installed_dir(choice.variant)
    if folder is None:
        print(dl.missing_message(choice.variant), file=sys.stderr)
        return 1
    print(folder)
    return 0


def _download(variant: str | None) -> int:
    from app.cli_progress import ProgressBars
    from model import download as dl

    variant = variant or DEFAULT_VARIANT
    from model.errors import DownloadError

    rel = dl.release(variant)
    print(
        f"Downloading Hayai OCR {variant} from {rel.repo_id} ({rel.revision or 'newest revision'}) "
        f"into {dl.cache_root()}",
        file=sys.stderr,
    )
    bars = ProgressBars(per_item=True, unit_bytes=True)  # a bar per file being downloaded
    try:
        folder = dl.download(variant, progress=bars, log=bars.write)
    except DownloadError as e:
        bars.close()
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        bars.close()
        print(
            "interrupted; the partial file is kept, run the same command to resume", file=sys.stderr
        )
        return 130
    bars.close()
    manifest = dl.read_manifest(folder) or {}
    state = (
        "SHA-256 verified"
        if manifest.get("verified")
        else f"UNVERIFIED, revision {folder.name} recorded"
    )
    print(f"Installed in {folder} ({state})", file=sys.stderr)
    print(folder)
    return 0


def describe_model(variant: str) -> str:
    """The `hayai model info` paragraph for one variant."""
    from model import download as dl

    rel = dl.release(variant)
    folder = dl.installed_dir(variant)
    if folder is None:
        return f"{variant}: not installed (hayai model download --variant {variant})"
    manifest = dl.read_manifest(folder) or {}
    if manifest.get("verified"):
        verified = f"yes: SHA-256 matched the pinned values ({manifest.get('downloaded_at', '?')})"
    elif manifest:
        verified = (
            f"no: UNVERIFIED, hashes recorded at download ({manifest.get('downloaded_at', '?')})"
        )
    else:
        verified = "not checked: files placed by another tool; `hayai model download` verifies them"
    sizes = ", ".join(
        f"{name} {size_text((folder / name).stat().st_size)}"
        for name in DATA_FILES
        if (folder / name).is_file()
    )
    pin = " (pinned)" if rel.revision else " (newest when downloaded)"
    lines = [
        f"{variant}: installed",
        f"  folder:   {folder}",
        f"  repo:     {rel.repo_id}",
        f"  revision: {folder.name}{pin}",
        f"  verified: {verified}",
        f"  files:    {sizes}",
    ]
    others = {c: n for c, n in dl.cached_revisions(variant).items() if c != folder.name}
    if others:
        listed = ", ".join(f"{c[:10]} ({size_text(n)})" for c, n in sorted(others.items()))
        lines.append(f"  also in the cache: {listed}; `hf cache rm` frees them")
    return "\n".join(lines)


FAST_PATHS = {  # what "fast" runs on an accelerator (model/fast.py); the CPU's is per stage
    "cuda": "fp16 weights and activations, decode step replayed as a CUDA graph",
    "mps": "fp16 weights and activations",
}


def would_run(device: str = "auto", precision: str = "auto") -> str:
    """The device and precision `load_recognizer` picks for these options, and why (two lines)."""
    from model.fast import cpu_recipes, describe
    from model.recognizer import resolve_device, resolve_precision

    dev = resolve_device(device)
    resolved = resolve_precision(precision, dev)
    if device == "auto":
        why = {
            "cuda": "auto picks CUDA first",
            "mps": "auto: no CUDA, Metal is here",
        }.get(dev.type, "auto: no CUDA or MPS device here")
        device_line = f"{dev.type} ({why})"
    else:
        device_line = dev.type
    if resolved == "fast" and dev.type in FAST_PATHS:
        how = FAST_PATHS[dev.type]
    elif resolved == "fast":
        recipes = cpu_recipes()  # from this CPU's flags, as load_recognizer picks them
        how = describe(recipes) if recipes else "float32 (no faster faithful path on this CPU)"
    else:
        how = "float32 everywhere, the released model's own logits"
    picked = f"{resolved} ({precision})" if precision == "auto" else resolved
    return f"would run:\n  device:    {device_line}\n  precision: {picked}: {how}"


def describe_folder(path: Path) -> str:
    """The `hayai model info` paragraph for a model folder; ValueError (in words) when it is not one."""
    from model.errors import ModelNotFoundError, WeightsError
    from model.weights import Checkpoint

    try:
        checkpoint = Checkpoint(path)
    except (ModelNotFoundError, WeightsError, OSError, ValueError) as e:
        raise ValueError(str(e)) from None
    sizes = ", ".join(
        f"{f.name} {size_text(f.stat().st_size)}"
        for f in sorted(path.iterdir())
        if f.is_file() and f.suffix in (".json", ".safetensors")
    )
    return "\n".join(
        [
            f"model folder: {path.resolve()}",
            f"  variant:  {checkpoint.config.variant} (from the weights)",
            f"  files:    {sizes}",
        ]
    )


def model_info(args) -> int:
    """`hayai model info [--model DIR] [--variant] [--device] [--precision]`: the model Hayai reads
    with (app/model_choice.py), what is downloaded, and what would run."""
    from app.model_choice import resolve_model

    choice = resolve_model(getattr(args, "model", None), getattr(args, "variant", None))
    if choice.folder is not None:
        try:
            print(describe_folder(Path(choice.folder)))
        except ValueError as e:
            return _fail(f"{choice.why}: {e}", 1)
        if choice.origin == "settings":
            print(f"  in use:   {choice.why} (the app, hayai ocr and hayai serve read with it)")
    else:
        print(f"in use: {choice.variant}, {choice.why}")
    if choice.origin != "--model":
        from model import download as dl

        print(f"Hugging Face cache: {dl.cache_root()}  (HF_HOME or HF_HUB_CACHE move it)")
        for name in VARIANTS:
            print(describe_model(name))
    try:
        print(would_run(getattr(args, "device", "auto"), getattr(args, "precision", "auto")))
    except (RuntimeError, ValueError) as e:  # --device cuda without CUDA, and the like
        return _fail(str(e))
    return 0
