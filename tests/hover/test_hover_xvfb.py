"""Hover to read on a desktop (`desktop`: Xvfb + openbox + trayer), driven as a user drives it:
the pointer moved with xdotool, Shift held with `xdotool keydown shift` (pynput hears it through
XRecord, as on any X11 desktop).

Another program (this file's `text` part, its own process) shows Japanese drawn with Noto CJK; the
app (its `app` part) runs with its tray icon, the real text detector and popup dictionary, and a
stand-in engine that answers the text drawn in the block it is given (app.hover.bench.KnownText).
The app's part prints its state as JSON lines whenever it changes; the test reads them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xvfb, pytest.mark.gui, pytest.mark.slow]

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
# the other program's blocks: (lines, vertical, left, top, letter px, ink, paper), as app/hover/bench.py's
BLOCKS = (
    (("今日はいい天気ですね。", "散歩に行きましょう。"), False, 80, 90, 30, (20, 20, 20), None),
    (("吾輩は猫である。", "名前はまだ無い。"), True, 980, 90, 32, (20, 20, 20), None),
)
TEXT_WINDOW = (0, 0, 1280, 690)  # where the other program's window goes (frameless)


def child(part: str, env):
    """This file's `text` or `app` part as a child process, its JSON lines read (the file runs
    as a script there, where tests/ is not on sys.path: the reader is imported here)."""
    from process_lines import ProcessLines

    return ProcessLines(
        subprocess.Popen(
            [sys.executable, str(HERE), part],
            env=env,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    )


def stop(part) -> None:
    part.process.kill()
    part.process.wait(timeout=10)


def test_hover_to_read_on_a_desktop(desktop, dictionary_index, tmp_path):
    config = tmp_path / "cfg"
    index = config / "cache" / "dictionary" / dictionary_index.name
    index.parent.mkdir(parents=True)
    os.symlink(dictionary_index, index)  # the index the dictionary tests built (no 20 s build)
    env = desktop.env(
        HAYAI_CONFIG_DIR=str(config), XDG_CONFIG_HOME=str(tmp_path / "xdg"), HF_HUB_OFFLINE="1"
    )
    text = child("text", env)
    app = None
    try:
        shown = text.wait_for("SHOWN", timeout_s=60)
        app = child("app", env)
        app.wait_for("READY", timeout_s=240)
        time.sleep(0.5)  # the window manager has drawn the other program's window

        def at(block: int, word: str) -> tuple[str, str]:
            x, y = shown["where"][block][word]
            return str(x), str(y)

        def state(check, timeout_s: float = 120):
            return app.wait_for("STATE", check, timeout_s)

        # GIVEN the pointer on 天 of the first block, WHEN Shift goes down and stays down
        desktop.xdotool("mousemove", *at(0, "天気"))
        desktop.xdotool("keydown", "shift")
        # THEN the popup shows 天気's entry, the whole text read with 天気 marked: one read
        first = state(lambda s: s["visible"] and s["marked"] == "天気")
        assert first["headword"] == "天気"
        assert first["read_text"] == "今日はいい天気ですね。散歩に行きましょう。"
        assert first["reads"] == 1
        # AND beside the text, never over it
        block_box = shown["boxes"][0]
        assert not overlaps(first["popup"], block_box)
        if os.environ.get("HAYAI_SCREENSHOT_DIR"):  # the README's picture, as the desktop shows it
            screenshot(desktop, first["popup"], block_box, os.environ["HAYAI_SCREENSHOT_DIR"])

        # WHEN the pointer moves to another word of the same block
        desktop.xdotool("mousemove", *at(0, "散歩"))
        second = state(lambda s: s["visible"] and s["marked"].startswith("散歩"))
        # THEN its entry, without a second read (the block's text is known by its pixels)
        assert second["headword"].startswith("散歩")
        assert second["reads"] == 1

        # WHEN the pointer goes into the popup (to scroll it, or Mine) with the key still held
        x0, y0, x1, y1 = second["popup"]
        desktop.xdotool("mousemove", str((x0 + x1) // 2), str((y0 + y1) // 2))
        time.sleep(1.5)
        app.send("state")
        inside = app.wait_for("NOW", timeout_s=30)
        # THEN it stays, and nothing under it is looked for or read (it is ours)
        assert inside["visible"] and inside["marked"].startswith("散歩")
        assert inside["finds"] == second["finds"]
        assert inside["reads"] == 1

        # WHEN the pointer goes just beside the popup, over the other program's blank paper: the
        # picture grabbed around the pointer holds the popup, full of Japanese
        desktop.xdotool("mousemove", str(x1 + 12), str((y0 + y1) // 2))
        beside = state(lambda s: s["finds"] > second["finds"])
        # THEN the detector found nothing where our windows were, and nothing more was read
        assert beside["grabs_with_own_windows"] >= 1  # the popup was in that picture
        assert beside["finds_over_own_windows"] == 0
        assert beside["reads"] == 1

        # WHEN the pointer reaches the other block: it is read, its word shown
        desktop.xdotool("mousemove", *at(1, "猫"))
        third = state(lambda s: s["visible"] and s["marked"] == "猫")
        assert third["read_text"] == "吾輩は猫である。名前はまだ無い。"
        assert third["reads"] == 2
        assert not overlaps(third["popup"], shown["boxes"][1])

        # WHEN the key comes up (the pointer on the text, not in the popup)
        desktop.xdotool("keyup", "shift")
        # THEN the popup hides
        state(lambda s: not s["visible"])

        # AND both reads reached the history as source "hover", the same as any read
        assert_both_read_as_hover(app)
    finally:
        desktop.xdotool("keyup", "shift")
        if app is not None:
            stop(app)
        stop(text)


def test_the_hover_key_held_alone_and_with_other_keys(xvfb, qtbot):
    from app.hotkey.hold import HeldKey

    key = HeldKey("shift")
    seen: list[str] = []
    for name in ("pressed", "released", "interrupted"):
        getattr(key, name).connect(lambda name=name: seen.append(name))
    key.start()
    try:
        # held alone, then let go
        with qtbot.waitSignal(key.released, timeout=5000):
            xvfb.xdotool("keydown", "shift", "keyup", "shift")
        assert seen == ["pressed", "released"]
        # a capital typed: held, then another key while held (and auto-repeat says nothing more)
        seen.clear()
        with qtbot.waitSignal(key.released, timeout=5000):
            xvfb.xdotool("keydown", "shift", "key", "a", "key", "b", "keyup", "shift")
        assert seen == ["pressed", "interrupted", "released"]
        # Shift added to a held Ctrl (a shortcut) is not a hover
        seen.clear()
        xvfb.xdotool("keydown", "ctrl", "keydown", "shift", "keyup", "shift", "keyup", "ctrl")
        with qtbot.waitSignal(key.released, timeout=5000):
            xvfb.xdotool("keydown", "shift", "keyup", "shift")
        assert seen == ["pressed", "released"]
    finally:
        listener = key._listener
        key.stop()
        # pynput's X11 listener notices the stop at the next key event: one, so that its thread
        # ends now (left waiting, it dies on the X server's end at the session's close)
        xvfb.xdotool("key", "shift")
        listener.join(5)
        assert not listener.is_alive()


def screenshot(desktop, popup, block, folder: str) -> None:
    """The screen around the block and its popup, grabbed from the X server, as hover.png."""
    import mss
    from PIL import Image

    env = os.environ.copy()
    os.environ["DISPLAY"] = desktop.display
    try:
        with mss.mss() as grab:
            shot = grab.grab(grab.monitors[1])
    finally:
        os.environ.clear()
        os.environ.update(env)
    image = Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")
    margin = 40
    box = (
        max(0, min(popup[0], block[0]) - margin),
        max(0, min(popup[1], block[1]) - margin),
        min(image.width, max(popup[2], block[2]) + margin),
        min(image.height, max(popup[3], block[3]) + margin),
    )
    Path(folder).mkdir(parents=True, exist_ok=True)
    image.crop(box).save(Path(folder) / "hover.png", optimize=True)


def assert_both_read_as_hover(app) -> None:
    """Both blocks' reads are in the app's history as source "hover"; the app runs, unharmed."""
    app.send("history")
    history = app.wait_for("HISTORY", timeout_s=30)
    assert sorted(history) == sorted([["\n".join(b[0]), "hover"] for b in BLOCKS])
    assert app.process.poll() is None
    assert not [line for line in app.seen if "Traceback" in line], app.seen


def overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# --- the child processes ------------------------------------------------------------------------


def _text() -> int:
    """The other program: a frameless window showing the drawn blocks; says where each word is."""
    from PySide6.QtCore import QPoint, Qt, QTimer
    from PySide6.QtGui import QPixmap
    from PySide6.QtWidgets import QApplication, QLabel

    from app.hover.bench import text_screen
    from app.platform.qt_images import pil_to_qimage

    qapp = QApplication([])
    x, y, w, h = TEXT_WINDOW
    image, drawn = text_screen(w, h, blocks=BLOCKS)
    window = QLabel()
    window.setWindowTitle("another program")
    window.setWindowFlags(Qt.WindowType.FramelessWindowHint)
    window.setPixmap(QPixmap.fromImage(pil_to_qimage(image)))
    window.setGeometry(x, y, w, h)
    window.show()

    def report() -> None:
        origin = window.mapToGlobal(QPoint(0, 0))
        ox, oy = origin.x(), origin.y()
        where = []
        for block in drawn:
            words = {}
            for word in ("天気", "散歩", "猫", "名前"):
                if word in block.text.replace("\n", ""):
                    cx, cy = block.where(word)
                    words[word] = [ox + cx, oy + cy]
            where.append(words)
        boxes = [[b.box[0] + ox, b.box[1] + oy, b.box[2] + ox, b.box[3] + oy] for b in drawn]
        print("SHOWN", json.dumps({"where": where, "boxes": boxes}), flush=True)

    QTimer.singleShot(1500, report)
    return qapp.exec()


def _app() -> int:
    """The app with its tray, Hover to read on, a stand-in engine that knows the drawn text."""
    from PySide6.QtCore import QObject, QTimer, Signal
    from PySide6.QtWidgets import QApplication

    from app.application import Application, Parts
    from app.engines.worker import OcrWorker
    from app.history import History
    from app.hover.bench import KnownText, text_screen
    from app.settings import Settings

    qapp = QApplication([])
    qapp.setQuitOnLastWindowClosed(False)
    qapp.setDesktopFileName("hayai")  # its app id on Wayland, which Sway's rules match
    _, drawn = text_screen(*TEXT_WINDOW[2:], blocks=BLOCKS)
    recognizer = KnownText(drawn)
    settings = Settings()
    settings.update({"hover/enabled": True, "anki/enabled": False, "output/auto_copy": False})
    worker = OcrWorker(factory=lambda **_: recognizer)
    history = History()
    app = Application(settings, Parts(worker=worker, history=history), use_tray=True)
    hover = app.hover
    finds = {"all": 0, "over_own": 0, "with_own": 0}
    original_found = hover._on_found

    def on_found(job_id, blocks):  # every detection: did it find anything where our windows were?
        job = hover._job
        if job is not None and job.id == job_id:
            finds["all"] += 1
            ours = [box for box, _ in job.covered]  # our windows in the picture when grabbed
            finds["with_own"] += bool(ours)
            x0, y0 = job.rect[:2]
            for block in blocks:
                b = block.box
                box = (b[0] + x0, b[1] + y0, b[2] + x0, b[3] + y0)
                finds["over_own"] += any(overlaps(box, own) for own in ours)
        original_found(job_id, blocks)

    hover.finder.found.disconnect(hover._on_found)
    hover.finder.found.connect(on_found)
    last: dict = {}

    def report(force: bool = False) -> None:
        now = {
            **_popup_state(app.dictionary_hook.controller),
            "held": hover.held,
            "timing": {k: round(v) for k, v in hover.timing.items()},  # to report, never asserted
            "reads": len(recognizer.reads),
            "finds": finds["all"],
            "finds_over_own_windows": finds["over_own"],
            "grabs_with_own_windows": finds["with_own"],
        }
        if force:
            print("NOW", json.dumps(now, ensure_ascii=False), flush=True)
        if now != last:
            last.clear()
            last.update(now)
            print("STATE", json.dumps(now, ensure_ascii=False), flush=True)

    class Commands(QObject):
        line = Signal(str)

    commands = Commands()

    def print_history() -> None:
        rows = [[e.text, e.source] for e in history.entries()]
        print("HISTORY", json.dumps(rows, ensure_ascii=False), flush=True)

    def quit_app() -> None:  # as the tray's Quit: everything stopped in order
        app.quit()
        qapp.quit()

    answers = {"state": lambda: report(force=True), "history": print_history, "quit": quit_app}
    commands.line.connect(lambda line: answers.get(line, lambda: None)())

    def read_stdin() -> None:
        for line in sys.stdin:
            commands.line.emit(line.strip())

    threading.Thread(target=read_stdin, daemon=True).start()

    def wait_ready() -> None:
        controller = app.dictionary_hook.controller
        ready = controller is not None and controller._prepared_once  # the dictionary opened
        if ready and app.status.state == "ready" and hover.key is not None:
            print("READY", "{}", flush=True)
            timer = QTimer(qapp)
            timer.timeout.connect(lambda: report())
            timer.start(50)
        else:
            QTimer.singleShot(100, wait_ready)

    app.start()
    if app.window is not None:
        app.window.hide()
    QTimer.singleShot(100, wait_ready)
    return qapp.exec()


def _popup_state(controller) -> dict:
    """What the popup shows: visible, the word marked in the text read, its first entry, where."""
    popup = controller.popup if controller is not None else None
    if popup is None or not popup.isVisible():
        return {"visible": False, "marked": "", "read_text": "", "headword": "", "popup": []}
    text, start, length = popup.read or ("", 0, 0)
    result = popup.result
    return {
        "visible": True,
        "marked": text[start : start + length],
        "read_text": text,
        "headword": result.entries[0].headword if result and result.entries else "",
        "popup": _box(popup.frameGeometry()),
    }


def _box(rect) -> list[int]:
    return [rect.x(), rect.y(), rect.x() + rect.width(), rect.y() + rect.height()]


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    raise SystemExit(_text() if sys.argv[1] == "text" else _app())
