"""The app quits cleanly while the text detector runs: onnxruntime aborts the process
("terminate called without an active exception") when the interpreter ends while a daemon thread
is inside a run, so every thread that runs the detector is joined at quit (app/blocks/background.py).

Each case runs in a subprocess: the app (offscreen, a stand-in model), the real detector started on
a large picture by Hover to read or by a selection's screen, the app quit while it runs, the
process ended."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys, threading
    import numpy as np
    from PySide6.QtWidgets import QApplication

    qapp = QApplication([])
    from app.application import Application, Parts
    from app.blocks import background, detector, find_blocks
    from app.engines.worker import OcrWorker
    from app.settings import Settings
    from app.ui import selection_window

    background.STOP_WAIT_S = 120  # the join is tested here, not its bound (a loaded machine)
    find_blocks(np.full((64, 64, 3), 255, np.uint8))  # loaded and run once, as the app warms it
    started, ran_on = threading.Event(), []
    plain = detector.detect_lines

    def detect_lines(*args):
        ran_on.append(threading.current_thread())
        started.set()
        return plain(*args)

    detector.detect_lines = detect_lines
    app = Application(
        Settings(overrides={"anki/enabled": False}), Parts(worker=OcrWorker()), use_tray=False
    )
    rng = np.random.default_rng(0)
    bgra = (rng.random((900, 1200, 4)) * 255).astype(np.uint8)  # about a second of detection
    if sys.argv[1] == "hover":
        app.hover.finder.find(1, bgra)
    else:
        selection_window._in_background(find_blocks, bgra, True)
    assert started.wait(60), "the detector never ran"
    app.quit()
    print("alive after quit:", [t.name for t in ran_on if t.is_alive()], flush=True)
    """
)


@pytest.mark.parametrize("by", ["hover", "selection"])
def test_quitting_while_the_detector_runs_ends_the_process_cleanly(by, tmp_path):
    env = dict(os.environ, HAYAI_CONFIG_DIR=str(tmp_path), QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, by],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # the process ended without onnxruntime's abort (hover's daemon thread: -6, "terminate
    # called without an active exception"), and the run was waited for at quit, not only by the
    # interpreter's own exit (the selection's thread was still running after quit)
    assert "terminate called" not in done.stderr and "Aborted" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert "alive after quit: []" in done.stdout, done.stdout + done.stderr
