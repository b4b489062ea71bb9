"""Per-stage timing of the engine, used by `hayai bench` (no timed tests anywhere else).

One warm-up read, then `runs` reads of the same crop; medians per stage. With random weights the
special ids are suppressed, so every run decodes exactly `max_new_tokens` tokens.
"""

from __future__ import annotations

import resource
import statistics
import sys
import time

import torch


def peak_rss_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20  # macOS reports bytes


def run(
    rec,
    image,
    runs: int = 5,
    max_new_tokens: int = 32,
    batch_size: int = 1,
    num_beams: int = 1,
    never_stop: bool = False,
) -> dict:
    suppress = rec.tokenizer.stop_ids if never_stop else ()
    images = [image] * batch_size
    started = time.perf_counter()  # the warm-up pays first-call costs: graph capture, torch.compile
    rec.read(images, max_new_tokens=max_new_tokens, num_beams=num_beams, suppress_ids=suppress)
    warmup_ms = (time.perf_counter() - started) * 1000
    samples = []
    for _ in range(max(1, runs)):
        results = rec.read(
            images, max_new_tokens=max_new_tokens, num_beams=num_beams, suppress_ids=suppress
        )
        t = results[0].timings
        tokens = max(len(r.token_ids) for r in results)
        samples.append(
            {**t, "tokens": tokens, "decode_ms_per_token": t["decode"] / max(1, tokens - 1)}
        )

    def median(key):
        return statistics.median(s[key] for s in samples)

    total = median("total")
    pipelined = None
    if (
        batch_size > 1
    ):  # what `hayai ocr` on a folder sustains: each batch prepared while the one before is read
        started = time.perf_counter()
        for outcome in rec.read_batches(
            [images] * len(samples),
            max_new_tokens=max_new_tokens,
            num_beams=num_beams,
            suppress_ids=suppress,
        ):
            if isinstance(outcome, Exception):
                raise outcome
        pipelined = round(batch_size * len(samples) / (time.perf_counter() - started), 2)
    return {
        "preprocess_ms": round(median("preprocess"), 2),
        "vision_ms": round(median("vision"), 2),
        "prefill_ms": round(median("prefill"), 2),
        "decode_ms_per_token": round(median("decode_ms_per_token"), 3),
        "total_ms": round(total, 2),
        "warmup_ms": round(warmup_ms, 1),
        "tokens": int(median("tokens")),
        "batch_size": batch_size,
        "crops_per_s": round(batch_size * 1000 / total, 2),
        "pipelined_crops_per_s": pipelined,
        "runs": len(samples),
        "device": rec.torch_device.type,
        "precision": rec.precision,
        "dtype": rec.compute_dtype,
        "recipes": dict(rec.recipes),  # stage → what it ran (model/fast.py)
        "compiled": rec.compiled,
        "threads": torch.get_num_threads(),
        "variant": rec.variant,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def format_report(r: dict) -> str:
    return "\n".join(
        [
            f"device {r['device']} · precision {r['precision']} ({r['dtype']}{', compiled' if r['compiled'] else ''}) · "
            f"{r['threads']} threads · "
            f"{r['variant']} · batch {r['batch_size']} · {r['tokens']} tokens · median of {r['runs']}",
            f"  preprocess  {r['preprocess_ms']:9.2f} ms",
            f"  vision      {r['vision_ms']:9.2f} ms         {r['recipes']['vision']}",
            f"  prefill     {r['prefill_ms']:9.2f} ms         {r['recipes']['prefill']}",
            f"  decode      {r['decode_ms_per_token']:9.3f} ms/token   {r['recipes']['decode']}",
            f"  total       {r['total_ms']:9.2f} ms   ({r['crops_per_s']} crops/s)",
            *(
                [
                    f"  pipelined   {r['pipelined_crops_per_s']:9.2f} crops/s (batches back to back, each prepared "
                    "while the one before is read)"
                ]
                if r.get("pipelined_crops_per_s")
                else []
            ),
            f"  warm-up     {r['warmup_ms']:9.1f} ms   (first read: kernel choice, graph capture, compiling)",
            f"  peak RSS    {r['peak_rss_mb']:9.1f} MB",
        ]
    )


def fidelity(exact, fast, images, max_new_tokens: int = 32) -> dict:
    """Teacher-forced logits of the fast path against exact fp32 on the exact path's own greedy tokens."""
    results = exact.read(
        images, max_new_tokens=max_new_tokens, suppress_ids=exact.tokenizer.stop_ids
    )
    n = min(len(r.token_ids) for r in results)
    ids = torch.tensor([[exact.tokenizer.bos_id] + r.token_ids[:n] for r in results])
    a, b = exact.logits(images, ids).float(), fast.logits(images, ids).float()
    cosine = torch.nn.functional.cosine_similarity(a, b, dim=-1)  # (images, positions)
    invariant = {
        rec.precision: batch_invariant(rec, images, max_new_tokens) for rec in (exact, fast)
    }
    return {
        "batch_invariant": invariant,  # precision → tokens alone == tokens in batches (all sizes)
        "positions": cosine.numel(),
        "min_cosine": round(float(cosine.min()), 6),
        "mean_cosine": round(float(cosine.mean()), 6),
        "top1_agreement": round(float((a.argmax(-1) == b.argmax(-1)).float().mean()), 4),
        "max_abs_diff": round(float((a - b).abs().max()), 5),
        "fast_dtype": fast.compute_dtype,
        "recipes": dict(fast.recipes),
        "device": fast.torch_device.type,
    }


def batch_invariant(rec, images, max_new_tokens: int = 32, sizes=(2, 3, 8)) -> bool:
    """Each image's tokens read alone equal its tokens in batches of `sizes` (the images repeated in
    turn, so each sits at several positions beside the others)."""
    options = dict(max_new_tokens=max_new_tokens, suppress_ids=rec.tokenizer.stop_ids)
    alone = [rec.read([image], **options)[0].token_ids for image in images]
    for size in sizes:
        order = [i % len(images) for i in range(size)][::-1]
        together = rec.read([images[i] for i in order], **options)
        if any(r.token_ids != alone[i] for i, r in zip(order, together)):
            return False
    return True
