"""The app as a user runs it, on a desktop with a window manager and a tray (the `desktop` fixture:
Xvfb + openbox + trayer), soaked with HAYAI_SOAK_CAPTURES hotkey captures (default 200).

`python -m app --model TINY -v --debug-dir DIR`, with its tray icon (not --no-tray) and a tiny random
checkpoint whose <eos> row is scaled up, so that a read ends after a token or a few instead of
running to the 128-token limit (~1 s each on 2 cores): the soak then fits in CI's few minutes. Every capture is a real key press of the hotkey (xdotool → the X server → pynput's
listener), and the mouse moves as a hand does: press, rest 0.3–0.5 s, move in steps, rest, release.
Mixed in: a click without a drag (reads the region under it, or says there is none and the drag
follows), Esc in the middle of a drag, a right-click cancel, re-scan (its hotkey), and at the end
Quit from the tray's menu. Asserted: the app never dies, its log holds no traceback and no error, each
read capture gives exactly one result and a cancelled one none, and its memory stays flat.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xvfb, pytest.mark.gui, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
CAPTURES = int(os.environ.get("HAYAI_SOAK_CAPTURES", "200"))
SELECTION_TITLE = "select a region"  # the selection window's title: "Hayai — select a region"
# One round of what a user does, repeated: mostly drags, now and then something else.
ROUND = ("drag", "drag", "click", "drag", "esc", "drag", "rescan", "drag", "right", "drag")
RSS_GROWTH_MB = 60  # after the warm-up (model, fonts, first windows), memory must not keep growing
WARM_UP = 20  # captures before the first memory reading (fewer in a short soak)


class SoakedApp:
    def __init__(self, desktop, model_dir: Path, state: Path):
        self.desktop = desktop
        self.env = desktop.env(
            HAYAI_CONFIG_DIR=str(state / "cfg"),
            XDG_CONFIG_HOME=str(state / "xdg"),
            XDG_RUNTIME_DIR=str(state / "run"),
            HF_HUB_OFFLINE="1",
        )
        (state / "run").mkdir(mode=0o700)
        self.log_path = state / "app.log"
        self.debug_dir = state / "debug"
        self._log = open(self.log_path, "wb")
        command = [sys.executable, "-m", "app", "--model", str(model_dir), "-v"]
        self.process = subprocess.Popen(
            [*command, "--debug-dir", str(self.debug_dir)],
            cwd=REPO,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> None:
        code = self.process.poll()
        assert code is None, f"the app died (exit {code}):\n{self.log()[-4000:]}"

    def wait_log(self, pattern: str, count: int = 1, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if len(re.findall(pattern, self.log())) >= count:
                return
            self.alive()
            time.sleep(0.05)
        raise AssertionError(f"no {count}× {pattern!r} in the app's log:\n{self.log()[-4000:]}")

    def results(self) -> int:
        return self.log().count("text shown ")

    def xdotool(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=30
        )
        assert not check or done.returncode == 0, f"xdotool {args}: {done.stderr}"
        return done

    def selection_open(self) -> bool:
        return bool(
            self.xdotool(
                "search", "--onlyvisible", "--name", SELECTION_TITLE, check=False
            ).stdout.strip()
        )

    def open_selection(self) -> None:
        self.xdotool("key", "ctrl+alt+o")
        self.wait(self.selection_open, "the selection did not open after the hotkey")
        time.sleep(0.05)  # the window has the keyboard once it is mapped and focused

    def wait(self, condition, message: str, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            self.alive()
            assert time.monotonic() < deadline, f"{message}:\n{self.log()[-4000:]}"
            time.sleep(0.03)

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self._log.close()


def hand_drag(rng: random.Random, width: int, height: int) -> list[str]:
    """xdotool words for a drag as a hand makes it: press, rest, move in steps, rest, release."""
    x, y = rng.randrange(40, width - 400), rng.randrange(40, height - 260)
    w, h = rng.randrange(60, 340), rng.randrange(30, 200)
    words = ["mousemove", str(x), str(y), "sleep", "0.05", "mousedown", "1"]
    words += ["sleep", f"{rng.uniform(0.3, 0.5):.2f}"]
    steps = rng.randrange(4, 9)
    for i in range(1, steps + 1):
        words += ["mousemove", str(x + w * i // steps), str(y + h * i // steps), "sleep", "0.02"]
    words += ["sleep", f"{rng.uniform(0.1, 0.3):.2f}", "mouseup", "1"]
    return words


@pytest.fixture(scope="module")
def terse_tiny_v21(tiny_v21, tmp_path_factory) -> Path:
    """The tiny random checkpoint with <eos> likelier: the same model files, shorter reads."""
    import json
    import shutil

    from safetensors.numpy import load_file, save_file

    folder = tmp_path_factory.mktemp("terse") / "tiny-v21"
    shutil.copytree(tiny_v21, folder)
    vocab = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    eos = next(t["id"] for t in vocab["added_tokens"] if t["content"] == "<eos>")
    weights = load_file(str(folder / "model.safetensors"))
    weights["decoder.output_head.weight"][eos] *= 3  # ~20 tokens on the dark desktop, not 128
    save_file(weights, str(folder / "model.safetensors"))
    return folder


@pytest.fixture
def soaked(desktop, terse_tiny_v21, tmp_path):
    app = SoakedApp(desktop, terse_tiny_v21, tmp_path)
    yield app
    app.stop()


def test_a_soak_of_hotkey_captures_on_a_desktop_with_a_tray(soaked, desktop):
    app, rng = soaked, random.Random(20)
    app.wait_log(r"tray shown", timeout_s=120)
    app.wait_log(r"model ready in ", timeout_s=240)
    assert "without a tray icon" not in app.log()  # trayer is a real tray: the icon is used
    expected, rss = 0, {}
    for i in range(CAPTURES):
        kind = ROUND[i % len(ROUND)]
        if i == min(WARM_UP, CAPTURES // 2):
            rss["start"] = app.rss_mb()
        if kind == "rescan":  # re-scan the last box with its hotkey (no selection), then capture
            expected += 1
            app.xdotool("key", "ctrl+alt+r")
            app.wait(lambda e=expected: app.results() >= e, "re-scan gave no result")
            kind = "drag"
        app.open_selection()
        if kind == "drag":
            app.xdotool(*hand_drag(rng, desktop.width, desktop.height))
            expected += 1
        elif kind == "click":  # a click: the region under it is read, or the notice and a drag
            x, y = rng.randrange(40, desktop.width - 40), rng.randrange(40, desktop.height - 80)
            app.xdotool("mousemove", str(x), str(y), "sleep", "0.3", "click", "1")
            time.sleep(0.3)
            if app.selection_open():
                app.xdotool(*hand_drag(rng, desktop.width, desktop.height))
            expected += 1
        elif kind == "esc":  # Esc with the button still down, then the release on the desktop
            words = hand_drag(rng, desktop.width, desktop.height)
            app.xdotool(*words[: words.index("mouseup")], "key", "Escape", "mouseup", "1")
        elif kind == "right":
            app.xdotool("sleep", "0.2", "click", "3")
        app.wait(
            lambda: not app.selection_open(), f"capture {i} ({kind}): the selection stayed open"
        )
        app.wait(lambda e=expected: app.results() >= e, f"capture {i} ({kind}): no result")
        assert app.results() == expected, f"capture {i} ({kind}): more than one result"
    rss["end"] = app.rss_mb()
    time.sleep(1.0)  # a late, duplicate result would arrive now
    assert app.results() == expected
    # Quit as a user does: the tray icon's menu (trayer docks it at the bottom right). A capture
    # cancelled first takes the last read's card off the screen, wherever it lies.
    app.open_selection()
    app.xdotool("click", "3")
    app.wait(lambda: not app.selection_open(), "the last selection stayed open")
    tray = app.xdotool("search", "--onlyvisible", "--class", "trayer").stdout.split()[-1]
    geometry = app.xdotool("getwindowgeometry", "--shell", tray).stdout
    g = dict(line.split("=") for line in geometry.split())
    cx, cy = int(g["X"]) + int(g["WIDTH"]) // 2, int(g["Y"]) + int(g["HEIGHT"]) // 2
    for _ in range(3):  # the menu may take a while to appear on a loaded machine: try again
        app.xdotool("mousemove", str(cx), str(cy), "click", "3", "sleep", "1.5", "key", "Up")
        app.xdotool("key", "Return")
        try:
            app.wait_log("quitting", timeout_s=10)
            break
        except AssertionError:
            app.xdotool("key", "Escape")
    code = app.process.wait(timeout=30)
    log = app.log()
    print(
        f"\nsoak: {CAPTURES} hotkey captures, {expected} results, exit {code}, "
        f"RSS {rss['start']:.0f} MB after {min(WARM_UP, CAPTURES // 2)} captures → {rss['end']:.0f} MB at the end",
        file=sys.stderr,
    )
    assert code == 0, log[-4000:]
    assert "Traceback" not in log and "ERROR" not in log, log[-4000:]
    assert "QPaintDevice" not in log and "QPainter::" not in log
    assert "quitting" in log
    assert len(list(app.debug_dir.glob("*.json"))) == expected  # one record per result
    assert rss["end"] - rss["start"] < RSS_GROWTH_MB, rss
