"""`hayai bench --bubble` and `hayai bench --watch`: the two costs of reading without dragging
(`hayai bench --blocks`, the text block finder: app/blocks/bench.py).

--bubble: on a drawn 1920×1080 screen (app/capture/sample_page.py): preparing the screen's map
(the selection does it as its windows show, before the pointer has reached any text) and then the
time from a resting pointer to the proposed box, each on a fresh map (nothing cached from an earlier
proposal), for every kind of region on that screen; and both together, the worst case.
Then the same on a real scanned spread of 1654×1170 (two pages of tests/data/pages side by side,
when the repository's tests are there): a click at the centre of every text block of their ground
truth and on every art point, each on a prepared map.
--watch: app/reading/watch_bench.py.
"""

from __future__ import annotations

import json
import statistics
import time


def bubble(args) -> int:
    from app.capture.bubble import PageMap
    from app.capture.sample_page import draw_screen

    bgra, regions = draw_screen()
    runs = max(1, args.runs)
    prepare: list[float] = []
    propose: list[float] = []
    total: list[float] = []
    per_region: dict[str, dict] = {}
    for _ in range(runs):
        for region in regions:
            started = time.perf_counter()
            page = PageMap(bgra)  # a fresh map each time: nothing cached from an earlier proposal
            prepared = time.perf_counter()
            proposal = page.propose(*region.click)
            done = time.perf_counter()
            prepare.append((prepared - started) * 1000)
            propose.append((done - prepared) * 1000)
            total.append((done - started) * 1000)
            r = per_region.setdefault(region.name, {"ms": [], "found": proposal is not None})
            r["ms"].append((done - prepared) * 1000)
    report = {
        "screen": "1920x1080",
        "runs": runs,
        "prepare_ms": {"median": statistics.median(prepare), "max": max(prepare)},
        "first_proposal_ms": {"median": statistics.median(total), "max": max(total)},
        "proposal_ms": {"median": statistics.median(propose), "max": max(propose)},
        "regions": {
            name: {"propose_ms": statistics.median(v["ms"]), "found": v["found"]}
            for name, v in per_region.items()
        },
    }
    spread = real_spread()
    if spread is not None:
        report["real_spread"] = spread
    if args.json:
        print(json.dumps(report))
        return 0
    p, t, q = report["prepare_ms"], report["first_proposal_ms"], report["proposal_ms"]
    print(f"bubble proposal on a 1920×1080 screen ({runs} runs of {len(regions)} clicks)")
    print(
        f"  prepare the screen (as the selection opens): median {p['median']:.1f} ms, max {p['max']:.1f} ms"
    )
    print(
        f"  prepare + proposal (worst case):             median {t['median']:.1f} ms, max {t['max']:.1f} ms"
    )
    print(
        f"  proposal on a prepared screen:               median {q['median']:.1f} ms, max {q['max']:.1f} ms"
    )
    for name, r in report["regions"].items():
        found = "box" if r["found"] else "nothing (drag)"
        print(f"  {name:<22} propose {r['propose_ms']:5.1f} ms  → {found}")
    if spread is not None:
        c = spread["click_ms"]
        print(
            f"real scanned spread {spread['screen']} ({spread['clicks']} clicks: text blocks and art)"
        )
        print(f"  prepare the screen:          {spread['prepare_ms']:.1f} ms")
        print(f"  a click → its proposal:      median {c['median']:.1f} ms, max {c['max']:.1f} ms")
        u = spread["click_cpu_ms"]
        print(f"  ... CPU time of it:          median {u['median']:.1f} ms, max {u['max']:.1f} ms")
    return 0


def real_spread(runs: int = 3) -> dict | None:
    """Click timings on two real pages side by side (None without the repository's test data)."""
    from pathlib import Path

    import numpy as np
    from PIL import Image

    from app.capture.bubble import PageMap

    folder = Path(__file__).resolve().parents[2] / "tests" / "data" / "pages"
    truth_file = folder / "blocks.json"
    if not truth_file.is_file():
        return None
    truth = json.loads(truth_file.read_text(encoding="utf-8"))["pages"]
    left, right = "001a.jpg", "000b.jpg"  # read right to left: 000b is the right-hand page
    gray = np.hstack([np.asarray(Image.open(folder / n).convert("L")) for n in (left, right)])
    bgra = np.full(gray.shape + (4,), 255, dtype=np.uint8)
    bgra[..., 0] = bgra[..., 1] = bgra[..., 2] = gray
    width = truth[left]["size"][0]
    clicks = []
    for name, dx in ((left, 0), (right, width)):
        for b in truth[name]["blocks"]:
            x, y, w, h = b["box"]
            clicks.append((dx + x + w // 2, y + h // 2))
        clicks += [(dx + x, y) for x, y in truth[name]["art_clicks"]]
    started = time.perf_counter()
    page = PageMap(bgra)
    prepare_ms = (time.perf_counter() - started) * 1000
    report = {
        "screen": f"{gray.shape[1]}x{gray.shape[0]}",
        "runs": runs,
        "clicks": len(clicks),
        "prepare_ms": prepare_ms,
        **_click_times(page, clicks, runs),
    }
    return report


def _click_times(page, clicks: list, runs: int) -> dict:
    """Each click's proposal timed, `runs` times over."""
    ms, cpu = [], []
    for _ in range(runs):
        for x, y in clicks:
            started, started_cpu = time.perf_counter(), time.process_time()
            page.propose(x, y)
            ms.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
    return {
        "click_ms": {"median": statistics.median(ms), "max": max(ms)},
        # the CPU this process spent (all its threads): on a loaded machine the wall clock
        # also counts the time other processes held the cores
        "click_cpu_ms": {"median": statistics.median(cpu), "max": max(cpu)},
        # the slowest click by its own median over the runs: a click that is slow every time,
        # not one that a busy moment of the machine made slow once
        "slowest_click": _slowest(clicks, ms, cpu),
    }


def _slowest(clicks: list, ms: list[float], cpu: list[float]) -> dict:
    n = len(clicks)
    per_click = [
        (statistics.median(ms[i::n]), statistics.median(cpu[i::n]), clicks[i]) for i in range(n)
    ]
    wall, cpu_ms, point = max(per_click, key=lambda c: c[1])
    return {"point": list(point), "median_ms": wall, "cpu_median_ms": cpu_ms}
