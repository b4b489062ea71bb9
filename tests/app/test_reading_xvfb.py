"""Keep reading, on a real X server (Xvfb) with the real app, driven from outside:

- a window of another process (the "stage") shows a dialogue line; `hayai watch --region` from a
  second process makes the app watch it: one read per change of picture, none while it stays, and a
  typewriter reveal read once when it stops; `hayai watch --stop` ends it;
- the app's own windows (the frame around the region) never appear in what it reads;
- an image put on the clipboard with xclip, and a file dropped into the watched folder, are read;
- a click (no drag) on a bubble of a drawn page reads the bubble's text region;
- a WebSocket client connected all along received exactly the texts the app emitted.

The app runs in a child process (this file's `__main__ app`, the real launcher on xcb, a tiny random
checkpoint) that prints one line per event; the stage is `__main__ stage`.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from websockets.sync.client import connect

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
        self.emitted = []  # every EMITTED line, whatever expect() skips

        def out(line):
            if line.startswith("EMITTED "):
                self.emitted.append(line)
            self.lines.put(line)

        for stream, sink in (
            (self.process.stdout, out),
            (self.process.stderr, self.stderr.append),
        ):
            threading.Thread(target=self._pump, args=(stream, sink), daemon=True).start()

    def count(self, prefix: str, wait_s: float) -> int:
        return len(self.quiet(prefix, wait_s))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def world(xvfb_server, tiny_v21, tmp_path_factory):
    if shutil.which("xdotool") is None or shutil.which("xclip") is None:
        pytest.skip("xdotool and xclip are needed (apt-get install xdotool xclip)")
    state = tmp_path_factory.mktemp("reading-xvfb")
    env = xvfb_server.env(
        HAYAI_CONFIG_DIR=str(state / "cfg"), HF_HUB_OFFLINE="1", XDG_CONFIG_HOME=str(state / "xdg")
    )
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    inbox = state / "screenshots"
    inbox.mkdir()
    (state / "cfg").mkdir()
    (state / "cfg" / "settings.ini").write_text(
        f"[reading]\nclipboard_images=true\nfolder={inbox}\n", encoding="utf-8"
    )
    port = free_port()
    stage = Child(env, "stage")
    stage.expect("STAGE 2", 60)
    app = Child(env, "app", str(tiny_v21), str(state / "debug"), f"127.0.0.1:{port}")
    app.env, app.state, app.inbox = env, state, inbox
    app.expect("STARTED", 60)
    # a WebSocket client, connected from the start to the end, on its own thread
    app.received = []
    try:
        with connect(f"ws://127.0.0.1:{port}", open_timeout=30) as client:
            threading.Thread(target=lambda: app.received.extend(client), daemon=True).start()
            app.expect("READY", 240)
            yield app, stage
    finally:
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


def test_a_clipboard_image_and_a_file_dropped_into_the_folder_are_read(world, tmp_path):
    from PIL import Image, ImageDraw

    app, stage = world
    picture = Image.new("RGB", (320, 90), "white")
    ImageDraw.Draw(picture).rectangle((20, 30, 300, 60), fill="black")
    path = tmp_path / "shot.png"
    picture.save(path)
    # WHEN a screenshot tool puts an image on the clipboard
    subprocess.run(
        ["xclip", "-selection", "clipboard", "-t", "image/png", "-i", str(path)],
        env=app.env,
        check=True,
        timeout=20,
    )
    # THEN it is read (its size is what the model got)
    read = json.loads(app.expect("READ clipboard", 180)[len("READ clipboard ") :])
    assert read["size"] == [320, 90]
    # WHEN a file appears in the watched folder (written elsewhere, then moved in, as tools do)
    picture.resize((400, 100)).save(tmp_path / "next.png")
    shutil.move(str(tmp_path / "next.png"), str(app.inbox / "next.png"))
    read = json.loads(app.expect("READ folder", 180)[len("READ folder ") :])
    assert read["size"] == [400, 100]


def test_a_click_on_a_bubble_reads_that_bubble(world):
    from app.capture.sample_page import draw_screen

    app, stage = world
    _, regions = draw_screen()
    bubble = next(r for r in regions if r.name == "ellipse-vertical")
    stage.ask("page")
    stage.expect("PAGE", 20)
    time.sleep(0.5)
    subprocess.run(["xdotool", "key", "ctrl+alt+o"], env=app.env, check=True, timeout=20)
    app.expect("SELECTION_OPEN", 20)
    time.sleep(0.5)
    x, y = bubble.click
    subprocess.run(["xdotool", "mousemove", str(x), str(y)], env=app.env, check=True, timeout=20)
    time.sleep(0.8)  # the pointer rests: the proposal is drawn
    subprocess.run(["xdotool", "click", "1"], env=app.env, check=True, timeout=20)
    read = json.loads(app.expect("READ click", 180)[len("READ click ") :])
    # THEN the crop is the bubble's text region: all its ink, inside its outline
    bx, by, bw, bh = read["box"]
    ix, iy, iw, ih = bubble.ink
    ox, oy, ow, oh = bubble.outline
    assert bx <= ix and by <= iy and bx + bw >= ix + iw and by + bh >= iy + ih, read
    assert ox <= bx and oy <= by and bx + bw <= ox + ow and by + bh <= oy + oh, read
    assert read["size"] == [bw, bh]
    stage.ask("nopage")
    stage.expect("NOPAGE", 20)


def test_the_websocket_client_received_exactly_the_emitted_texts(world):
    app, _ = world
    time.sleep(1.0)
    emitted = [json.loads(line[len("EMITTED ") :]) for line in app.emitted]
    assert emitted, "nothing was emitted"
    deadline = time.monotonic() + 10
    while len(app.received) < len(emitted) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert app.received == emitted
    print(f"{len(emitted)} texts emitted and received", file=sys.stderr)


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

    class Page(QWidget):
        """The drawn manga page and game screen (app/capture/sample_page.py), full screen at 0,0."""

        def __init__(self):
            super().__init__(
                None,
                Qt.WindowType.FramelessWindowHint | Qt.WindowType.X11BypassWindowManagerHint,
            )
            import numpy as np
            from PySide6.QtGui import QImage

            from app.capture.sample_page import draw_screen

            bgra, _ = draw_screen()
            screen = qapp.primaryScreen().geometry()
            part = np.ascontiguousarray(bgra[: screen.height(), : screen.width()])
            h, w = part.shape[:2]
            self.image = QImage(part.tobytes(), w, h, w * 4, QImage.Format.Format_RGB32).copy()
            self.setGeometry(0, 0, w, h)

        def paintEvent(self, event):
            p = QPainter(self)
            p.drawImage(0, 0, self.image)
            p.end()

    page = Page()

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
            elif word == "page":
                page.show()
                page.raise_()
                QTimer.singleShot(300, lambda: say("PAGE"))
            elif word == "nopage":
                page.hide()
                QTimer.singleShot(100, lambda: say("NOPAGE"))

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


def _app(model_dir: str, debug_dir: str, websocket: str) -> int:

    import app.application as application
    import app.flows.reads as reads
    import app.flows.watch as watch_control
    from app.ui import selection

    def say(*parts) -> None:
        print(*parts, flush=True)

    original_connect = application.Application._connect_signals

    def connect(self) -> None:
        original_connect(self)
        self.worker.ready.connect(lambda device, variant: say("READY", device, variant))
        self.reads.text_read.connect(lambda text, source: say("EMITTED", json.dumps(text)))

    original_read = reads.Reads.submit

    def read(self, image, region, released_at, source="box", *more, **extra):
        original_read(self, image, region, released_at, source, *more, **extra)
        if source != "watch":
            info = {"size": [image.width(), image.height()], "box": list(region.box_desktop_px)}
            say("READ", source, json.dumps(info))

    reads.Reads.submit = read
    original_session_start = selection.SelectionSession.start

    def session_start(self):
        original_session_start(self)
        say("SELECTION_OPEN", len(self.windows))

    selection.SelectionSession.start = session_start

    application.Application._connect_signals = connect

    original_watch = watch_control.WatchControl.watch

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

        self.reads.worker.finished.connect(finished)
        watcher.state_changed.connect(
            lambda state: say("WATCH_STOPPED") if state == "stopped" else None
        )

    watch_control.WatchControl.watch = watch
    original_start = application.Application.start

    def start(self):
        original_start(self)
        say("STARTED")

    application.Application.start = start

    from app.cli import build_parser
    from app.launcher import main

    argv = ["--model", model_dir, "-v", "--debug-dir", debug_dir, "--websocket", websocket]
    return main(build_parser().parse_args(argv))  # the real parser, as `hayai …` would


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if sys.argv[1] == "stage":
        raise SystemExit(_stage())
    raise SystemExit(_app(sys.argv[2], sys.argv[3], sys.argv[4]))
