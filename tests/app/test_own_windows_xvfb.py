"""Our own windows are never in the frozen screen, on a desktop with a window manager (`desktop`:
Xvfb + openbox + trayer).

Another program (this file's `background` part, its own process) fills the screen with one colour;
the app runs with --no-tray, so its window sits on top of that, as on GNOME or any desktop without a
tray. The hotkey opens the selection: the frozen screen, where our window was, must hold the other
program's pixels, and our window is back once the screen is grabbed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xvfb, pytest.mark.gui, pytest.mark.slow]

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
BACKGROUND = (20, 160, 90)  # the other program's colour


def test_a_crop_where_our_window_was_holds_the_screen_not_our_window(desktop, tiny_v21, tmp_path):
    env = desktop.env(
        HAYAI_CONFIG_DIR=str(tmp_path / "cfg"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        HF_HUB_OFFLINE="1",
    )
    background = subprocess.Popen([sys.executable, str(HERE), "background"], env=env, cwd=REPO)
    app = subprocess.Popen(
        [sys.executable, str(HERE), "app", str(tiny_v21)],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    try:
        deadline = time.monotonic() + 240
        for line in app.stdout:
            lines.append(line.rstrip())
            if line.startswith("READY"):
                break
            assert time.monotonic() < deadline, lines
        time.sleep(1.0)  # the window manager has placed and drawn both windows
        subprocess.run(["xdotool", "key", "ctrl+alt+o"], env=env, check=True, timeout=20)
        frozen = None
        for line in app.stdout:
            lines.append(line.rstrip())
            if line.startswith("FROZEN "):
                frozen = json.loads(line[len("FROZEN ") :])
                break
        assert frozen is not None, "\n".join(lines[-60:])
        # the window was on screen, over the other program, before the capture
        assert frozen["window_before"] == [True, frozen["window_rect"]]
        # where it was, the frozen screen shows the other program (not a pixel of our window)
        assert frozen["background_share"] > 0.98, frozen
        assert frozen["window_after"] is True  # and it is back once the screen is grabbed
    finally:
        app.kill()
        background.kill()
        app.wait(timeout=10)
        background.wait(timeout=10)


# --- the child processes ------------------------------------------------------------------------


def _background() -> int:
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication, QWidget

    qapp = QApplication([])
    window = QWidget()
    window.setWindowTitle("another program")
    palette = window.palette()
    palette.setColor(QPalette.ColorRole.Window, QColor(*BACKGROUND))
    window.setPalette(palette)
    window.setAutoFillBackground(True)
    window.showFullScreen()
    return qapp.exec()


def _app(model_dir: str) -> int:
    from PySide6.QtCore import QRect, QTimer

    import app.application as application
    import app.flows.capture as capture_flow
    from app.ui import selection

    def say(*parts) -> None:
        print(*parts, flush=True)

    original_connect = application.Application._connect_signals
    seen = {}

    def connect(self) -> None:
        original_connect(self)
        self.worker.ready.connect(lambda *_: say("READY"))
        seen["app"] = self

    application.Application._connect_signals = connect

    original_start_capture = capture_flow.CaptureFlow.start

    def start_capture(self, watch_interval=None) -> None:
        window = seen["app"].window
        g = window.frameGeometry()
        seen["before"] = [window.isVisible(), [g.x(), g.y(), g.width(), g.height()]]
        original_start_capture(self, watch_interval)

    capture_flow.CaptureFlow.start = start_capture
    original_start = selection.SelectionSession.start

    def start(session) -> None:
        app = seen["app"]
        capture = next(iter(session._captures.values()))
        x, y, w, h = seen["before"][1]
        crop = capture.image.copy(QRect(x, y, w, h))
        hits = sum(
            crop.pixelColor(i, j).getRgb()[:3] == BACKGROUND
            for i in range(0, crop.width(), 4)
            for j in range(0, crop.height(), 4)
        )
        total = len(range(0, crop.width(), 4)) * len(range(0, crop.height(), 4))
        report = {
            "window_rect": seen["before"][1],
            "window_before": seen["before"],
            "background_share": hits / max(1, total),
            "window_after": app.window.isVisible(),
        }
        report["window_before"] = [seen["before"][0], seen["before"][1]]
        original_start(session)
        say("FROZEN", json.dumps(report))
        QTimer.singleShot(100, session.cancel)

    selection.SelectionSession.start = start

    from app.cli import build_parser
    from app.launcher import main

    return main(build_parser().parse_args(["--model", model_dir, "--no-tray", "-v"]))


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if sys.argv[1] == "background":
        raise SystemExit(_background())
    raise SystemExit(_app(sys.argv[2]))
