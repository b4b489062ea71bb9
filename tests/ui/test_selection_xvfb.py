"""Selection on a real X server, driven by xdotool: the crop equals the pixels that were on screen.

Qt runs on xcb in a child process (this file's `__main__`); the parent moves the real mouse.
Also: QT_SCALE_FACTOR=2 gives the same physical crop; twenty sessions in one second leave one set
of windows; and `python tests/ui/test_selection_xvfb.py screenshot OUT.png` (under an X server)
renders the README screenshot of the selection.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xvfb, pytest.mark.gui]

HERE = Path(__file__).resolve().parent
TITLE = "Hayai — select a region"


class Child:
    """A child process that prints `READY {json}` when the parent may act, then a result line."""

    def __init__(self, env: dict[str, str], *args: str):
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__)), *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=HERE.parents[1],
        )

    def read_line(self, timeout_s: float = 30) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.1)
            if ready:
                line = self.process.stdout.readline()
                if line:
                    return line.strip()
            if self.process.poll() is not None:
                break
        self.process.kill()
        out, err = self.process.communicate()
        raise AssertionError(f"child gave no line (rc {self.process.returncode}):\n{out}\n{err}")

    def ready(self) -> dict:
        line = self.read_line()
        assert line.startswith("READY "), line
        return json.loads(line[6:])

    def finish(self, timeout_s: float = 30) -> dict:
        line = self.read_line(timeout_s)
        self.process.stdin.close()
        self.process.wait(timeout=10)
        return json.loads(line)


@pytest.mark.parametrize("scale", [1, 2])
def test_real_drag_crops_the_pixels_on_screen(xvfb, scale):
    # GIVEN noise on screen at a known place and the selection open over the frozen screen
    child = Child(xvfb.env(QT_SCALE_FACTOR=str(scale)), "select")
    px, py = child.ready()["noise_at"]
    assert (px, py) == (120 * scale, 80 * scale)
    # WHEN the real mouse drags over part of it (X11 root coordinates = physical pixels)
    x0, y0, x1, y1 = px + 20, py + 30, px + 220, py + 130
    xvfb.xdotool(
        "mousemove",
        str(x0),
        str(y0),
        "mousedown",
        "1",
        "sleep",
        "0.05",
        "mousemove",
        str(x0 + 90),
        str(y0 + 40),
        "sleep",
        "0.05",
        "mousemove",
        str(x1),
        str(y1),
        "sleep",
        "0.05",
        "mouseup",
        "1",
    )
    result = child.finish()
    # THEN the box is those physical pixels and the crop holds exactly the noise under it
    assert result["box_desktop_px"] == [x0, y0, 200, 100]
    assert result["box_image_px"] == [x0, y0, 200, 100]
    assert result["logical_rect"] == [x0 // scale, y0 // scale, 200 // scale, 100 // scale]
    assert result["crop_mismatched_rows"] == 0
    assert result["windows_left"] == 0


def test_escape_on_the_real_server_cancels(xvfb):
    child = Child(xvfb.env(), "select")
    child.ready()
    xvfb.xdotool("mousemove", "400", "300", "sleep", "0.1", "key", "Escape")
    assert child.finish() == {"cancelled": True, "windows_left": 0}


def test_twenty_sessions_in_one_second_leave_one_set_of_windows(xvfb):
    # GIVEN twenty capture triggers within one second
    child = Child(xvfb.env(), "storm")
    report = child.ready()
    # THEN one session is open, nineteen were cancelled, and one selection window is alive and mapped
    assert report == {
        "triggers": 20,
        "cancelled": 19,
        "open_sessions": 1,
        "alive_windows": 1,
        "visible_windows": 1,
    }
    on_server = xvfb.xdotool("search", "--onlyvisible", "--name", TITLE).split()
    assert len(on_server) == 1, on_server
    child.process.stdin.write("done\n")
    child.process.stdin.flush()
    assert child.finish()["exit"] == "ok"


def test_readme_screenshot_renders(xvfb, tmp_path, qapp):
    # GIVEN the manga-reader scene WHEN the screenshot child drags around the bubble
    from PySide6.QtGui import QImage

    out = tmp_path / "selection.png"
    child = Child(xvfb.env(), "screenshot", str(out))
    assert child.finish()["saved"] == str(out)
    # THEN the PNG is the whole screen; the boxed page stays bright, the rest is dimmed
    image = QImage(str(out))
    assert (image.width(), image.height()) == (xvfb.width, xvfb.height)
    inside = image.pixelColor(750, 110)  # the page's white margin inside the box
    outside = image.pixelColor(500, 110)  # the same page outside the box
    assert inside.lightness() > 200 and outside.lightness() < inside.lightness() * 0.7


# --- child side -------------------------------------------------------------------------------


def _windows_left(app) -> int:
    from PySide6.QtCore import QEvent

    from app.ui.selection_window import SelectionWindow

    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    return sum(isinstance(w, SelectionWindow) for w in app.topLevelWidgets())


def _wait_exposed(app, windows) -> None:
    from PySide6.QtTest import QTest

    for window in windows:
        assert QTest.qWaitForWindowExposed(window, 5000), "selection window never exposed"
    for _ in range(10):
        app.processEvents()
        QTest.qWait(10)


def _select_child() -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    from test_capture_xvfb import mismatches, noise_image, show_noise_window

    from app.capture import grab_screens
    from app.ui.selection import SelectionSession

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # as the tray app does: selection windows come and go
    noise_window, (px, py) = show_noise_window(app)
    session = SelectionSession(grab_screens())
    noise_window.close()  # the selection shows the frozen screen, not the live one

    def selected(sel):
        x, y, w, h = sel.box_desktop_px
        expected = noise_image().copy(x - px, y - py, w, h)
        print(
            json.dumps(
                {
                    "box_image_px": sel.box_image_px,
                    "box_desktop_px": sel.box_desktop_px,
                    "logical_rect": sel.logical_rect,
                    "crop_mismatched_rows": mismatches(sel.image, expected),
                    "windows_left": _windows_left(app),
                }
            ),
            flush=True,
        )
        app.quit()

    def cancelled():
        print(json.dumps({"cancelled": True, "windows_left": _windows_left(app)}), flush=True)
        app.quit()

    session.selected.connect(selected)
    session.cancelled.connect(cancelled)
    session.start()
    _wait_exposed(app, session.windows)
    print("READY " + json.dumps({"noise_at": [px, py]}), flush=True)
    QTimer.singleShot(20000, app.quit)
    app.exec()


def _storm_child() -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.capture import grab_screens
    from app.ui.selection import SelectionSession

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # as the tray app does: selection windows come and go
    sessions: list[SelectionSession] = []
    cancelled: list[int] = []

    def trigger():
        session = SelectionSession(grab_screens())
        session.cancelled.connect(lambda: cancelled.append(1))
        sessions.append(session)
        session.start()

    def report():
        alive = _windows_left(app)
        visible = sum(w.isVisible() for s in sessions for w in s.windows)
        _wait_exposed(app, [w for s in sessions for w in s.windows])
        print(
            "READY "
            + json.dumps(
                {
                    "triggers": len(sessions),
                    "cancelled": len(cancelled),
                    "open_sessions": sum(s.is_open for s in sessions),
                    "alive_windows": alive,
                    "visible_windows": visible,
                }
            ),
            flush=True,
        )
        sys.stdin.readline()  # the parent counts the windows on the X server meanwhile
        print(json.dumps({"exit": "ok"}), flush=True)
        app.quit()

    for i in range(20):
        QTimer.singleShot(i * 45, trigger)  # twenty triggers within 0.9 s
    QTimer.singleShot(1500, report)
    app.exec()


def _screenshot_child(out: str) -> None:
    """The README screenshot: a manga reader on screen, the selection dragged around a bubble."""
    from PySide6.QtCore import QPoint, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QWidget

    from app.capture import grab_screens
    from app.ui.selection import SelectionSession
    from resources import SAMPLE_VERTICAL, path

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # as the tray app does: selection windows come and go
    bubble = QImage(str(path(SAMPLE_VERTICAL)))

    class Reader(QWidget):
        def paintEvent(self, event):
            p = QPainter(self)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.fillRect(self.rect(), QColor("#202127"))
            p.fillRect(0, 0, self.width(), 44, QColor("#2b2d35"))
            p.setPen(QColor("#c9ccd6"))
            p.setFont(QFont("Noto Sans CJK JP", 11))
            p.drawText(
                QRectF(20, 0, 600, 44),
                Qt.AlignmentFlag.AlignVCenter,
                "Manga Reader  ·  第12話  ·  p. 14",
            )
            page = QRectF((self.width() - 520) / 2, 64, 520, self.height() - 84)
            p.fillRect(page, QColor("#fbfaf7"))
            p.setPen(QPen(QColor("#111"), 3))
            panels = [
                QRectF(page.left() + 16, page.top() + 16, 488, 300),
                QRectF(page.left() + 16, page.top() + 330, 236, page.height() - 346),
                QRectF(page.left() + 268, page.top() + 330, 236, page.height() - 346),
            ]
            for panel in panels:
                p.drawRect(panel)
            p.drawImage(QPoint(int(page.left() + 270), int(page.top() + 28)), bubble)
            p.setFont(QFont("Noto Sans CJK JP", 15))
            p.setPen(QColor("#111"))
            p.drawText(QRectF(page.left() + 40, page.top() + 360, 200, 60), "えっ、本当？")
            p.drawText(QRectF(page.left() + 290, page.top() + 360, 200, 60), "行こう！")
            p.end()

    reader = Reader()
    reader.setWindowFlags(Qt.WindowType.FramelessWindowHint)
    reader.setGeometry(app.primaryScreen().geometry())
    reader.show()
    _wait_exposed(app, [reader])
    session = SelectionSession(grab_screens())
    session.start()
    _wait_exposed(app, session.windows)
    window = session.windows[0]
    left = (window.width() - 520) // 2 + 270
    QTest.mousePress(
        window, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(left - 8, 64 + 20)
    )
    QTest.mouseMove(window, QPoint(left + 120, 64 + 200))
    QTest.mouseMove(window, QPoint(left + 208, 64 + 28 + 280 + 8))
    _wait_exposed(app, [window])
    grab_screens()[window.capture.screen.name].image.save(out)
    session.cancel()
    print(json.dumps({"saved": out}), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent / "capture"))  # test_capture_xvfb's noise window
    mode = sys.argv[1:2]
    if mode == ["select"]:
        _select_child()
    elif mode == ["storm"]:
        _storm_child()
    elif mode == ["screenshot"]:
        _screenshot_child(sys.argv[2])
