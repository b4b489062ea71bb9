"""Keep reading, on a real X server (Xvfb) with the real app, driven from outside:

- a window of another process (the "stage") shows a dialogue line; `hayai watch --region` from a
  second process makes the app watch it: one read per change of picture, none while it stays, and a
  typewriter reveal read once when it stops; `hayai watch --stop` ends it;
- the app's own windows (the frame around the region) never appear in what it reads.

The app runs in a child process (this file's `__main__ app`, the real launcher on xcb, a tiny random
checkpoint) that prints one line per event; the stage is `__main__ stage`.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xvfb, pytest.mark.gui, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
from test_app_xvfb import AppChild  # noqa: E402  (the child-process driver)

STAGE = (60, 420, 760, 140)  # X11 root coordinates of the stage window = the watched region
INTERVAL_S = "0.3"


class Child(AppChild):
    """AppChild's line protocol, running this file's children."""

    def __init__(self, env, *args):
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__)), *args],
            env=env,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines = queue.Queue()
        self.stderr = []
        for stream, sink in (
            (self.process.stdout, self.lines.put),
            (self.process.stderr, self.stderr.append),
        ):
            threading.Thread(target=self._pump, args=(stream, sink), daemon=True).start()

    def count(self, prefix: str, wait_s: float) -> int:
        return len(self.quiet(prefix, wait_s))


@pytest.fixture(scope="module")
def world(xvfb_server, tiny_v21, tmp_path_factory):
    if shutil.which("xdotool") is None or shutil.which("xclip") is None:
        pytest.skip("xdotool and xclip are needed (apt-get install xdotool xclip)")
    state = tmp_path_factory.mktemp("reading-xvfb")
    env = xvfb_server.env(
        HAYAI_CONFIG_DIR=str(state / "cfg"), HF_HUB_OFFLINE="1", XDG_CONFIG_HOME=str(state / "xdg")
    )
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    stage = Child(env, "stage")
    stage.expect("STAGE 2", 60)
    app = Child(env, "app", str(tiny_v21), str(state / "debug"))
    app.env = env
    app.state = state
    app.expect("STARTED", 60)
    app.expect("READY", 240)
    yield app, stage
    app.stop()
    stage.stop()


def hayai(app, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env=app.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def read_once(app, timeout_s=180) -> dict:
    """Wait for one watched read to be submitted and come back; its result line."""
    app.expect("WATCH_READ", 15)
    return json.loads(app.expect("WATCH_DONE", timeout_s)[len("WATCH_DONE ") :])


def test_a_watched_window_is_read_once_per_change_and_never_while_it_stays(world):
    app, stage = world
    x, y, w, h = STAGE
    # WHEN a second process asks the running app to watch the stage's region
    done = hayai(app, "watch", "--region", f"{x},{y},{w},{h}", "--interval", INTERVAL_S)
    assert done.returncode == 0, done.stderr
    # THEN the frame shows the region just outside it, and it is read once
    frame = json.loads(app.expect("FRAME", 15)[len("FRAME ") :])
    assert frame == [x - 3, y - 3, w + 6, h + 6]
    first = read_once(app)
    # AND nothing is read while the picture stays (ten ticks)
    assert app.count("WATCH_READ", 3.0) == 0
    # WHEN the picture changes, three times, a few seconds apart: exactly one read each
    for glyphs in (5, 9, 3):
        stage.ask(f"show {glyphs}")
        stage.expect(f"STAGE {glyphs}", 10)
        read_once(app)
        assert app.count("WATCH_READ", 2.0) == 0
    # WHEN a line is revealed character by character (every 80 ms, faster than the interval)
    stage.ask("type 14")
    stage.expect("STAGE 14", 20)
    # THEN it is read once, after the reveal: the read's crop shows the whole line
    result = read_once(app)
    assert app.count("WATCH_READ", 2.0) == 0
    assert result["glyph_cells"] == 14, result
    assert first["size"] == [w, h]
    # AND `hayai watch --stop` ends it: a change is no longer read, the frame is gone
    done = hayai(app, "watch", "--stop")
    assert done.returncode == 0, done.stderr
    app.expect("WATCH_STOPPED", 10)
    stage.ask("show 4")
    stage.expect("STAGE 4", 10)
    assert app.count("WATCH_READ", 2.0) == 0


# --- the children -----------------------------------------------------------------------------


def _stage() -> int:
    """A window at STAGE showing N dark glyph cells on a light line; `show N`, `type N` on stdin."""
    import select

    from PySide6.QtCore import QRect, Qt, QTimer
    from PySide6.QtGui import QColor, QPainter
    from PySide6.QtWidgets import QApplication, QWidget

    qapp = QApplication([])

    class Stage(QWidget):
        def __init__(self):
            super().__init__(
                None,
                Qt.WindowType.FramelessWindowHint | Qt.WindowType.X11BypassWindowManagerHint,
            )
            self.glyphs = 2
            self.setGeometry(QRect(*STAGE))

        def paintEvent(self, event):
            p = QPainter(self)
            p.fillRect(self.rect(), QColor(240, 240, 235))
            for i in range(self.glyphs):
                p.fillRect(20 + i * 50, 40, 38, 60, QColor(15, 15, 15))
            p.end()

    stage = Stage()
    stage.show()
    typing = {"target": 0}

    def say(*parts):
        print(*parts, flush=True)

    def type_next():
        if stage.glyphs < typing["target"]:
            stage.glyphs += 1
            stage.repaint()
            QTimer.singleShot(80, type_next)
        else:
            say("STAGE", stage.glyphs)

    def poll():
        if select.select([sys.stdin], [], [], 0)[0]:
            word, _, n = sys.stdin.readline().strip().partition(" ")
            if word == "show":
                stage.glyphs = int(n)
                stage.repaint()
                QTimer.singleShot(50, lambda: say("STAGE", stage.glyphs))
            elif word == "type":
                stage.glyphs = 0
                typing["target"] = int(n)
                type_next()

    timer = QTimer()
    timer.timeout.connect(poll)
    timer.start(50)
    QTimer.singleShot(500, lambda: say("STAGE", stage.glyphs))
    return qapp.exec()


def _glyph_cells(image) -> int:
    """How many dark glyph cells the stage drew in a crop of it (counted along its middle row)."""
    y = image.height() // 2 - 0
    dark, cells = False, 0
    for x in range(image.width()):
        now = image.pixelColor(x, y).lightness() < 80
        if now and not dark:
            cells += 1
        dark = now
    return cells


def _app(model_dir: str, debug_dir: str) -> int:
    import argparse

    import app.application as application

    def say(*parts) -> None:
        print(*parts, flush=True)

    original_connect = application.Application._connect_signals

    def connect(self) -> None:
        original_connect(self)
        self.worker.ready.connect(lambda device, variant: say("READY", device, variant))

    application.Application._connect_signals = connect

    original_watch = application.Application.watch

    def watch(self, region, interval_ms=None):
        original_watch(self, region, interval_ms)
        watcher = self.watcher
        crops = []

        def due(image):
            crops.append(image)
            say("WATCH_READ")

        watcher.read_due.connect(due)
        g = watcher.frame.geometry()
        say("FRAME", json.dumps([g.x(), g.y(), g.width(), g.height()]))

        def finished(request_id, result):
            if crops:
                image = crops.pop(0)
                say(
                    "WATCH_DONE",
                    json.dumps(
                        {
                            "text": result.text,
                            "size": [image.width(), image.height()],
                            "glyph_cells": _glyph_cells(image),
                        }
                    ),
                )

        self.worker.finished.connect(finished)
        watcher.state_changed.connect(
            lambda state: say("WATCH_STOPPED") if state == "stopped" else None
        )

    application.Application.watch = watch
    original_start = application.Application.start

    def start(self):
        original_start(self)
        say("STARTED")

    application.Application.start = start

    from app.launcher import main

    args = argparse.Namespace(
        model=model_dir,
        hotkey=None,
        no_tray=False,
        verbose=True,
        debug_dir=debug_dir,
        install_desktop_entry=False,
        command=None,
        repeat=False,
        websocket=None,
    )
    return main(args)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if sys.argv[1] == "stage":
        raise SystemExit(_stage())
    raise SystemExit(_app(sys.argv[2], sys.argv[3]))
