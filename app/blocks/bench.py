"""`hayai bench --blocks`: what finding text blocks costs (app/blocks), with no OCR model.

On the five test scans (tests/data/pages, when the repository's tests are there), their
1654×1170 spread (001a and 000b side by side, the issue's page size), and the drawn 1920×1080
screen (app/capture/sample_page.py): the ms per page split into the detector (resize, the network,
its boxes) and the grouping (lines into blocks, the second look for lone punctuation), each as the
median of `--runs`, with the CPU time beside the wall clock (on a shared machine the wall clock
also counts the time others held the cores); then a click's proposal (`block_at` over a page's
blocks) and the peak memory: Python's allocations (tracemalloc, numpy's included) and the
process's resident set. The first page also pays for loading the detector: said apart. The
screen and the spread are found again by the float detector (what a GPU runs; the CPU runs int8:
app/blocks/params.py, `precision`), as rows of their own.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

PAGES = Path(__file__).resolve().parents[2] / "tests" / "data" / "pages"
SPREAD = ("001a.jpg", "000b.jpg")  # read right to left: 000b is the right-hand page
FLOAT_ROWS = ("drawn screen 1920×1080", "spread 1654×1170")


def _images() -> dict:
    """name → RGB array: the drawn screen, and the scans and their spread when they are here."""
    import numpy as np
    from PIL import Image

    from app.capture.sample_page import draw_screen

    bgra, _ = draw_screen()
    images = {"drawn screen 1920×1080": np.ascontiguousarray(bgra[..., 2::-1])}
    if PAGES.is_dir():
        scans = {
            p.name: np.asarray(Image.open(p).convert("RGB")) for p in sorted(PAGES.glob("*.jpg"))
        }
        images.update(scans)
        if all(n in scans for n in SPREAD):
            images["spread 1654×1170"] = np.hstack([scans[n] for n in SPREAD])
    return images


def _timed(function, *args):
    started, started_cpu = time.perf_counter(), time.process_time()
    out = function(*args)
    return out, (time.perf_counter() - started) * 1000, (time.process_time() - started_cpu) * 1000


def find_timed(rgb, params=None) -> tuple[list, dict]:
    """`find_blocks` step by step, by `params` (None: PARAMS): (blocks, {stage: (wall ms, CPU
    ms)})."""
    import cv2

    from app.blocks.detector import as_bgr, detect_lines
    from app.blocks.grouping import group, reading_order
    from app.blocks.marks import lone_marks
    from app.blocks.params import PARAMS

    params = params or PARAMS

    def grouping(lines, gray):
        found = group(lines, gray, params)
        return reading_order(found + lone_marks(gray, found, params))

    bgr = as_bgr(rgb)
    (lines, _), detect_ms, detect_cpu = _timed(detect_lines, bgr, params)
    gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    blocks, group_ms, group_cpu = _timed(grouping, lines, gray)
    return blocks, {"detector": (detect_ms, detect_cpu), "grouping": (group_ms, group_cpu)}


def _median(values) -> float:
    return round(statistics.median(values), 1)


def _rss_mb() -> float:
    """The process's resident set now, MB (Linux; 0 where /proc is not there)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure(runs: int) -> dict:
    from app.blocks import block_at
    from app.blocks.detector import model
    from app.blocks.params import PARAMS

    as_float = replace(PARAMS, precision="float32")

    images = _images()
    load_before = os.getloadavg()[0]
    _, load_ms, _ = _timed(model)
    rss_loaded = _rss_mb()
    first = next(iter(images.values()))
    _, first_ms, _ = _timed(find_timed, first)  # the first run also sets onnxruntime up
    model(as_float)  # loaded before it is timed
    find_timed(first, as_float)
    tracemalloc.start()
    pages: dict = {}
    clicks: list[float] = []
    # the screen and the spread by the float model, as rows of their own
    floats = {
        f"{name}, float": (rgb, as_float) for name, rgb in images.items() if name in FLOAT_ROWS
    }
    runs_of = {name: (rgb, None) for name, rgb in images.items()} | floats
    for name, (rgb, params) in runs_of.items():
        stages: dict[str, list] = {"detector": [], "grouping": []}
        for _ in range(runs):
            blocks, times = find_timed(rgb, params)
            for stage, t in times.items():
                stages[stage].append(t)
        height, width = rgb.shape[:2]
        for x in range(0, width, max(1, width // 24)):  # a click every 1/24 of the page
            for y in range(0, height, max(1, height // 24)):
                started = time.perf_counter()
                block_at(blocks, x, y)
                clicks.append((time.perf_counter() - started) * 1000)
        pages[name] = {
            "size": [width, height],
            "blocks": len(blocks),
            # what ran, not what was asked: an int8 model that cannot be made is the float one
            "precision": "int8" if model(params or PARAMS).int8 else "float32",
            **{
                f"{stage}_ms": {
                    "wall": _median([t[0] for t in times]),
                    "cpu": _median([t[1] for t in times]),
                }
                for stage, times in stages.items()
            },
        }
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "runs": runs,
        "threads": model().session.get_session_options().intra_op_num_threads,
        "providers": model().providers,
        "load_ms": round(load_ms, 1),
        "first_page_ms": round(first_ms, 1),
        "pages": pages,
        "click_ms": {"median": round(statistics.median(clicks), 3), "max": round(max(clicks), 3)},
        "peak_python_mb": round(peak / 2**20, 1),
        "rss_mb": {
            "loaded": round(rss_loaded, 1),
            "peak": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        },
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def main(args) -> int:
    from app.blocks.detector import DetectorError

    try:
        report = measure(max(1, args.runs))
    except DetectorError as e:
        print(f"hayai: {e}", flush=True)
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    print(
        f"text blocks (app/blocks), median of {report['runs']} runs, wall / CPU ms "
        f"({report['threads']} threads, {', '.join(report['providers'])})"
    )
    print(
        f"  load the detector: {report['load_ms']:.0f} ms; the first page: {report['first_page_ms']:.0f} ms"
    )
    for name, p in report["pages"].items():
        d, g = p["detector_ms"], p["grouping_ms"]
        total = d["wall"] + g["wall"]
        print(
            f"  {name:<30} {p['size'][0]}×{p['size'][1]}: detector {d['wall']:6.0f} / {d['cpu']:6.0f}, "
            f"grouping {g['wall']:5.0f} / {g['cpu']:5.0f}, in all {total:6.0f} ms; "
            f"{p['blocks']} blocks ({p['precision']})"
        )
    c = report["click_ms"]
    print(f"  a click → its block: median {c['median']:.3f} ms, max {c['max']:.3f} ms")
    r = report["rss_mb"]
    print(
        f"  memory: peak Python allocations {report['peak_python_mb']:.0f} MB; resident "
        f"{r['loaded']:.0f} MB with the detector loaded, {r['peak']:.0f} MB at the peak"
    )
    before, after = report["load_average"]
    print(f"  load average (1 min): {before:.2f} before, {after:.2f} after")
    return 0
