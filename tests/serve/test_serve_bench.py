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
    """Also the time to first token, and (continuous batching) the rows decoded together."""
    done = subprocess.run(
        [sys.executable, "-m", "app", "bench", "--serve", "--model", str(tiny_v21)]
        + ["--device", "cpu", "--precision", "exact", "--max-new-tokens", "8", "--runs", "1"]
        + ["--max-batch", "64", "--json"],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["model"] == "hayai-v2.1" and report["device"] == "cpu"
    assert report["continuous"] is True and report["max_batch"] == 64
    assert [level["concurrency"] for level in report["levels"]] == [1, 8, 64]
    for level in report["levels"]:
        assert level["requests"] == level["concurrency"] and level["errors"] == 0
        assert level["crops_per_s"] > 0 and 0 < level["p50_ms"] <= level["p95_ms"]
        assert 0 < level["ttft_p50_ms"] <= level["p50_ms"]
        assert 1 <= level["mean_batch"] <= level["concurrency"]
        assert 0 < level["tokens_per_crop"] <= 8
