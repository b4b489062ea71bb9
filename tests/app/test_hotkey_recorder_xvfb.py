"""The Settings hotkey recorder against the real global hotkey (pynput on a real X server with a
window manager, the `desktop` fixture): pressing the capture combo in the field records it and
opens no capture; once the field lets go, the same keys capture again."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xvfb, pytest.mark.gui, pytest.mark.slow]

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]


def test_the_capture_combo_pressed_in_the_recorder_opens_no_capture(desktop, tiny_v21, tmp_path):
    env = desktop.env(
        HAYAI_CONFIG_DIR=str(tmp_path / "cfg"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        HF_HUB_OFFLINE="1",
    )
    app = subprocess.Popen(
        [sys.executable, str(HERE), str(tiny_v21)],
        env=env,
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []
    threading.Thread(
        target=lambda: [lines.put(x.rstrip()) for x in app.stdout], daemon=True
    ).start()

    def expect(prefix: str, timeout_s: float = 30) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                continue
            seen.append(line)
            if line.startswith(prefix):
                return line
        raise AssertionError(f"no {prefix!r}; the app said:\n" + "\n".join(seen[-60:]))

    def ask(word: str) -> None:
        app.stdin.write(word + "\n")
        app.stdin.flush()

    def key(combo: str) -> None:
        subprocess.run(["xdotool", "key", combo], env=env, check=True, timeout=20)

    try:
        expect("READY", 240)
        ask("RECORD")  # Settings open, the capture field has the keyboard
        expect("RECORDING")
        time.sleep(0.5)
        key("ctrl+alt+o")  # the capture combo, pressed in the field
        assert expect("RECORDED") == "RECORDED <ctrl>+<alt>+o"
        time.sleep(1.0)  # a capture would have opened by now
        ask("COUNT")
        assert expect("SELECTIONS") == "SELECTIONS 0"
        ask("CLOSE")  # the dialog goes: the hotkeys are back
        expect("CLOSED")
        key("ctrl+alt+o")
        expect("SELECTION_OPEN", 15)
    finally:
        app.kill()
        app.wait(timeout=10)


def _child(model_dir: str) -> int:
    import select

    from PySide6.QtCore import QTimer

    import app.application as application
    from app.ui import selection
    from app.ui.hotkey_edit import HotkeyEdit

    def say(*parts) -> None:
        print(*parts, flush=True)

    original_connect = application.Application._connect_signals
    opened = []

    def connect(self) -> None:
        original_connect(self)
        self.worker.ready.connect(lambda *_: say("READY"))

        def poll() -> None:
            if not select.select([sys.stdin], [], [], 0)[0]:
                return
            word = sys.stdin.readline().strip()
            if word == "RECORD":
                dialog = self.windows.show_settings()
                dialog.open_tab("Hotkeys")
                recorder = dialog.editors["hotkey/capture"]
                assert isinstance(recorder, HotkeyEdit)
                recorder.changed.connect(lambda combo: say("RECORDED", combo))
                recorder.recording.connect(lambda on: on and say("RECORDING"))
                # as a click in the field does, once the window manager has given it the focus
                QTimer.singleShot(500, recorder.field.setFocus)
            elif word == "COUNT":
                say("SELECTIONS", len(opened))
            elif word == "CLOSE":
                self.windows.open["settings"].reject()
                say("CLOSED")

        self._poll = QTimer(self)
        self._poll.timeout.connect(poll)
        self._poll.start(100)

    application.Application._connect_signals = connect
    original_start = selection.SelectionSession.start

    def start(session) -> None:
        original_start(session)
        opened.append(session)
        say("SELECTION_OPEN")

    selection.SelectionSession.start = start

    from app.cli import build_parser
    from app.launcher import main

    return main(build_parser().parse_args(["--model", model_dir, "-v"]))


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    raise SystemExit(_child(sys.argv[1]))
