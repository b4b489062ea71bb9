"""`hayai bench --app`: the GUI stall while the model loads and the app's share of each read, measured
on the real worker and overlay (the numbers are the bench's to report, not this test's to bound)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HOPS = ("queue", "worker beside the model", "hand-over", "result→painted")


@pytest.mark.slow
def test_bench_app_reports_the_startup_stall_and_each_hop_of_a_read(tiny_v21):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", OMP_NUM_THREADS="1")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "bench",
            "--app",
            "--model",
            str(tiny_v21),
            "--device",
            "cpu",
            "--precision",
            "exact",
            "--runs",
            "3",
            "--json",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    start = report["startup"]
    # the probe ran in a fresh interpreter that really imported torch and loaded the checkpoint
    assert start["ready"] and start["torch_imported"] and start["device"] == "cpu"
    assert (
        start["ticks"] > 10 and start["max_gap_ms"] > 0
    )  # the GUI timer kept ticking through the load
    reads = report["read_ms"]  # medians over the runs: each hop, the app's whole share, the model
    assert set(reads) == {*HOPS, "app total", "model"}
    assert reads["model"] > 0 and reads["app total"] > 0 and all(reads[hop] >= 0 for hop in HOPS)
    assert "This plugin does not support" not in done.stderr


def test_bench_app_names_a_missing_model(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "bench",
            "--app",
            "--model",
            str(tmp_path / "none"),
            "--runs",
            "1",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("hayai bench --app:") and "none" in done.stderr


def test_bench_takes_one_subject():
    done = subprocess.run(
        [sys.executable, "-m", "app", "bench", "--app", "--dictionary"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "not allowed with" in done.stderr
