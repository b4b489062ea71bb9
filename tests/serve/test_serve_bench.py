"""`hayai bench --serve`: a real `hayai serve` child under 1, 8 and 64 concurrent clients; the report's
shape and signs (the figures are the bench's to report, not this test's to bound)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bench_serve_reports_crops_per_second_and_latency_per_concurrency(tiny_v21):
    """Also the time to first token (of all requests, of the first wave sent at once, of the later
    ones), the rows decoded together, and the same load on fixed batches of the sizes asked for."""
    done = subprocess.run(
        [sys.executable, "-m", "app", "bench", "--serve", "--model", str(tiny_v21)]
        + ["--device", "cpu", "--precision", "exact", "--max-new-tokens", "8", "--runs", "2"]
        + ["--max-batch", "4", "--max-rows", "32", "--concurrency", "1,8,16"]
        + ["--compare-fixed", "2,4", "--json"],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["model"] == "hayai-v2.1" and report["device"] == "cpu"
    assert report["continuous"] is True and report["max_batch"] == 4 and report["max_rows"] == 32
    assert [level["concurrency"] for level in report["levels"]] == [1, 8, 16]
    for level in report["levels"]:
        assert level["requests"] == 2 * level["concurrency"] and level["errors"] == 0
        assert level["crops_per_s"] > 0 and 0 < level["p50_ms"] <= level["p95_ms"]
        assert 0 < level["ttft_p50_ms"] <= level["p50_ms"]
        assert 0 < level["ttft_first_wave_p50_ms"] and 0 < level["ttft_later_p50_ms"]
        assert 1 <= level["mean_batch"] <= min(level["concurrency"], 32)
        assert 0 < level["tokens_per_crop"] <= 8
    fixed = report["fixed"]
    assert [(f["max_batch"], f["concurrency"], f["requests"]) for f in fixed] == [
        (2, 16, 32),
        (4, 16, 32),
    ]
    for level in fixed:  # whole batches of at most that size, at the highest concurrency
        assert level["errors"] == 0 and level["crops_per_s"] > 0
        assert 1 < level["mean_batch"] <= level["max_batch"]  # 16 clients fill batches
    best = max(fixed, key=lambda level: level["crops_per_s"])
    assert report["best_fixed"] == best["max_batch"]


def test_the_server_is_this_installations_hayai_in_the_pyinstaller_bundle_too(monkeypatch):
    """In the bundle sys.executable is hayai itself: `hayai -m app serve` is no command there."""
    from argparse import Namespace

    from app.serve import bench

    started = []
    monkeypatch.delenv("APPIMAGE", raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/hayai/hayai")
    monkeypatch.setattr(bench.subprocess, "Popen", lambda command, **kw: started.append(command))
    options = dict(device="cpu", precision="exact", max_new_tokens=8, beams=1, concurrency=[1])
    options.update(max_batch=4, max_rows=32, variant=None, compile=False)
    bench.start_server(Namespace(**options), "/models/tiny", 8123, log=None)
    assert started[0][:4] == ["/opt/hayai/hayai", "serve", "--port", "8123"]
