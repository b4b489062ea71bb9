"""`hayai bench --bubble` and `hayai bench --watch`: the two costs of reading without dragging.

--bubble: on a drawn 1920×1080 screen (app/capture/sample_page.py): preparing the screen's map
(the selection does it as its windows show, before the pointer has reached any text) and then the
time from a resting pointer to the proposed box, each on a fresh map (nothing cached from an earlier
proposal), for every kind of region on that screen; and both together, the worst case.
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
    prepare, propose, total, per_region = [], [], [], {}
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
    return 0
