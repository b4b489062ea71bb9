"""The GUI thread's longest stall while the OCR worker loads the model: `hayai bench --app`'s
start-up figure (app/bench.py runs `probe` in a fresh interpreter, torch not yet imported). What
keeps the stall short is app/engines/torch_preload.py's subject."""

from __future__ import annotations

import logging
import sys
import threading
import time

from PySide6.QtCore import QCoreApplication, QTimer

from app.engines.worker import OcrWorker


def measure_startup_stall(options: dict | None = None, factory=None, tick_ms: int = 10) -> dict:
    """Run a real model load in the worker while a GUI-thread timer ticks; report the longest gap.

    Meant for a fresh interpreter (torch not yet imported): `probe`.
    """
    app = QCoreApplication.instance() or QCoreApplication([])
    gaps: list[tuple[float, float]] = []  # (gap ms, seconds since start)
    last: list[float | None] = [None]
    outcome: dict = {}
    done = threading.Event()
    started = time.perf_counter()

    def tick():
        now = time.perf_counter()
        if last[0] is not None:
            gaps.append(((now - last[0]) * 1000, last[0] - started))
        last[0] = now
        if done.is_set():
            app.quit()

    timer = QTimer()
    timer.setInterval(tick_ms)
    timer.timeout.connect(tick)
    worker = OcrWorker(options, factory=factory)

    # Record the outcome and let the GUI timer end the loop (after one more tick).
    def finish(**result):
        outcome.update(result)
        done.set()

    worker.ready.connect(lambda device, variant: finish(ready=True, device=device))
    worker.error.connect(lambda message, hint: finish(ready=False, error=message))
    timer.start()
    QTimer.singleShot(5 * tick_ms, worker.start)
    app.exec()
    timer.stop()
    worker.stop()
    worst = sorted(gaps, reverse=True)[:5]
    outcome.update(
        max_gap_ms=worst[0][0] if worst else 0.0,
        ticks=len(gaps),
        worst=[(round(ms, 1), round(at, 2)) for ms, at in worst],
        load_s=time.perf_counter() - started,
        torch_imported="torch" in sys.modules,
    )
    return outcome


def probe(options: dict, reply) -> None:
    """`measure_startup_stall` in a process spawned for it (app/bench.py), its report sent back
    through `reply` (a multiprocessing Connection); a failure is reported, not raised or logged
    (the bench says it once, in its own words)."""
    logging.getLogger().addHandler(logging.NullHandler())
    try:
        report = measure_startup_stall(options)
    except Exception as exc:
        report = {
            "ready": False,
            "error": f"the start-up probe failed: {type(exc).__name__}: {exc}",
        }
    reply.send(report)
