"""`hayai bench --watch`: its report on a real X server (Xvfb), and a plain error without a screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def hayai(*args: str, env: dict, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "app", "bench", *args],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=timeout,
    )


def test_without_a_screen_it_says_so(tiny_v21):
    result = hayai(
        "--watch", "--model", str(tiny_v21), env=dict(os.environ, QT_QPA_PLATFORM="offscreen")
    )
    assert result.returncode == 1
    assert "needs a real screen" in result.stderr and "Traceback" not in result.stderr


def test_the_load_needs_no_python_at_sys_executable_and_a_busy_process_that_ends_is_said(
    monkeypatch, tmp_path
):
    """In the PyInstaller bundle sys.executable is hayai itself, which exits at once on `-c`: the
    busy processes are spawned by multiprocessing instead (the bundle's side, freeze_support in
    packaging/entry.py, is packaging/build.sh's smoke test)."""
    import multiprocessing.spawn  # noqa: F401  (what it runs is fixed when it is imported)

    from app.reading.watch_bench import cpu_load

    hayai = tmp_path / "hayai"
    hayai.write_text("#!/bin/sh\nexit 2\n")
    hayai.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(hayai))
    with cpu_load(1) as busy:
        # THEN the busy process spins by the time the load is entered, and is seen running
        assert busy.cpu_s() > 0
        busy.check()
        # ... and one that ends is said, not measured as load
        busy._processes[0].kill()
        busy._processes[0].join()
        with pytest.raises(RuntimeError, match="a busy process ended"):
            busy.check()


@pytest.mark.xvfb
@pytest.mark.slow
def test_the_watch_bench_reports_idle_cost_and_change_to_text_with_and_without_load(xvfb, tiny_v21):
    result = hayai(
        "--watch",
        "--model",
        str(tiny_v21),
        "--device",
        "cpu",
        "--max-new-tokens",
        "8",
        "--runs",
        "2",
        "--load",
        "1",
        "--json",
        env=xvfb.env(),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    idle = report["idle"]
    assert idle["ticks"] > 0 and idle["reads"] == 0  # nothing changed: nothing read
    assert 0 <= idle["cpu_percent_of_one_core"] < 100
    changes, loaded = report["changes"], report["loaded"]
    assert loaded["busy_processes"] == 1 and loaded["busy_cpu_percent"] > 0  # it ran meanwhile
    for measured in (changes, loaded):
        assert measured["runs"] == measured["reads"] == 2  # one read per change, with load too
        assert measured["change_to_text_ms"]["median"] >= measured["model_ms"]["median"] > 0
