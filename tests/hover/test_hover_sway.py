"""Hover to read on Sway (headless, tests/platform/wayland_session.py), driven as a user drives it:
a virtual keyboard presses the key the app binds in Sway, a virtual pointer moves over another
program's window of drawn Japanese.

The two programs are test_hover_xvfb.py's parts, as on X11: `text` shows the blocks and says where
each word is; `app` runs the app with Hover to read on, the real text detector and popup
dictionary, and a stand-in engine that answers the text drawn in the block it is given, printing
its state as JSON lines. Here the key's press reaches the app through Sway's IPC, the pointer and
the key's release through the app's glass (app/platform/glass.py), the grabs through grim, and the
popup is placed by Sway (app/platform/sway.py's `follow`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.wayland, pytest.mark.gui, pytest.mark.slow]

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
SIZE = (1280, 690)  # the output, which the other program's (tiled) window fills
SHIFT_R, A = 54, 30  # evdev key codes
SHIFT = 1  # its modifier mask


def session_child(session, argv, env):
    """A process of the session (as its user) whose `PREFIX {json}` lines the test reads."""
    from process_lines import ProcessLines

    return ProcessLines(
        session.popen(
            argv,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
    )


@pytest.fixture(scope="module")
def sway():
    sys_path = str(ROOT / "tests" / "platform")
    import sys

    if sys_path not in sys.path:
        sys.path.insert(0, sys_path)
    from wayland_session import SWAY_CONFIG, missing_tools, python_for_user, start_sway

    missing = missing_tools()
    if missing:
        pytest.skip(f"Hover to read on Sway needs {', '.join(missing)} (apt-get install sway grim)")
    # Sway as a user starts it: none of our rules (the app adds what hover needs)
    session = start_sway(config=SWAY_CONFIG.replace('for_window [app_id="^hayai$"]', "# "))
    try:
        session.python = python_for_user()
        src = session.mkdir("src")
        for name in ("app", "model", "resources"):
            session.readable(ROOT / name, f"src/{name}")
        session.readable(
            ROOT / "tests" / "platform" / "wayland_clients.py", "src/wayland_clients.py"
        )
        session.readable(HERE.with_name("test_hover_xvfb.py"), "src/hover_parts.py")
        session.src = src
        session.swaymsg(f"output HEADLESS-1 resolution {SIZE[0]}x{SIZE[1]} position 0 0 scale 1")
        env = session.env(PYTHONPATH=str(src))
        session.input = {}
        for kind in ("pointer", "keyboard"):
            client = session.popen(
                [session.python, src / "wayland_clients.py", kind], env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert client.stdout.readline().strip() == "READY"
            session.input[kind] = client
        yield session
    finally:
        session.close()


def _line(session, kind: str, line: str) -> None:
    client = session.input[kind]
    client.stdin.write(line + "\n")
    client.stdin.flush()
    assert client.stdout.readline().strip() in ("FRAME", "DONE")


def point(session, x: int, y: int) -> None:
    """The pointer to (x, y) of the layout, as a mouse moves it (the seat's motion, then a frame)."""
    _line(session, "pointer", f"motion {x} {y} {SIZE[0]} {SIZE[1]}")
    session.swaymsg(f"seat seat0 cursor set {x} {y}")
    _line(session, "pointer", "frame")


def key(session, code: int, down: bool, mods: int) -> None:
    """A key pressed or released, and the modifiers held after it (`mods`), as a keyboard does."""
    _line(session, "keyboard", f"key {code} {int(down)} {mods}")


def test_hover_to_read_on_sway(sway, dictionary_index):
    # GIVEN Sway as it starts (no binding of ours in its config), another program showing
    # Japanese, and the app with Hover to read on (which binds right Shift in Sway itself)
    config = sway.mkdir("cfg")
    index = config / "cache" / "dictionary" / dictionary_index.name
    index.parent.mkdir(parents=True)
    sway.readable(dictionary_index, f"cfg/cache/dictionary/{dictionary_index.name}")
    sway.chown(config)
    env = sway.env(PYTHONPATH=str(sway.src), HAYAI_CONFIG_DIR=str(config))
    parts = sway.src / "hover_parts.py"
    text = session_child(sway, [sway.python, parts, "text"], env)
    app = None
    try:
        shown = text.wait_for("SHOWN", timeout_s=60)
        app = session_child(sway, [sway.python, parts, "app"], env)
        app.wait_for("READY", timeout_s=240)

        def state(check, timeout_s: float = 120):
            return app.wait_for("STATE", check, timeout_s)

        # WHEN the pointer rests on 天 of the first block and right Shift goes down
        point(sway, *shown["where"][0]["天気"])
        key(sway, SHIFT_R, True, SHIFT)
        # THEN the popup shows 天気's entry, the whole text read with 天気 marked: one read
        first = state(lambda s: s["visible"] and s["marked"] == "天気")
        assert first["headword"] == "天気"
        assert first["read_text"] == "今日はいい天気ですね。散歩に行きましょう。"
        assert first["reads"] == 1
        # AND Sway put it beside the text, where the app placed it, never over the text
        placed = wait_popup(sway, first["popup"])
        assert not overlaps(placed, shown["boxes"][0])
        if os.environ.get("HAYAI_SCREENSHOT_DIR"):  # to look at, as Sway shows it
            shot = sway.folder / "hover-sway.png"
            sway.run(["grim", shot])
            shutil.copy(shot, Path(os.environ["HAYAI_SCREENSHOT_DIR"]) / shot.name)

        # WHEN the pointer moves to another word of the same block
        point(sway, *shown["where"][0]["散歩"])
        second = state(lambda s: s["visible"] and s["marked"].startswith("散歩"))
        print("timing, 散歩 (another word):", second["timing"])  # seen with -s, never asserted
        # THEN its entry, without a second read
        assert second["reads"] == 1

        # WHEN the pointer goes just beside the popup (where Sway has it), over the other
        # program's blank paper: the picture grabbed around the pointer holds the popup
        x0, y0, x1, y1 = wait_popup(sway, second["popup"])
        point(sway, x1 + 12, (y0 + y1) // 2)
        beside = state(lambda s: s["finds"] > second["finds"])
        # THEN the detector found nothing where our window was, and nothing more was read
        assert beside["grabs_with_own_windows"] >= 1
        assert beside["finds_over_own_windows"] == 0
        assert beside["reads"] == 1

        # WHEN the pointer reaches the other block: it is read, its word shown
        point(sway, *shown["where"][1]["猫"])
        third = state(lambda s: s["visible"] and s["marked"] == "猫")
        print("timing, 猫 (a new block):", third["timing"])
        assert third["read_text"] == "吾輩は猫である。名前はまだ無い。"
        assert third["reads"] == 2

        # WHEN the key comes up (heard through the glass) THEN the hold ends and the popup hides
        key(sway, SHIFT_R, False, 0)
        state(lambda s: not s["visible"] and not s["held"])

        # WHEN the key goes down again and a letter is typed while it is held
        key(sway, SHIFT_R, True, SHIFT)
        state(lambda s: s["held"])
        key(sway, A, True, SHIFT)
        # THEN that is typing: the hold ends though the key is still down
        state(lambda s: not s["held"])
        key(sway, A, False, SHIFT)
        key(sway, SHIFT_R, False, 0)

        # WHEN Sway reloads its config (which drops bindings added at run time)
        assert sway.swaymsg("reload")[0]["success"]
        time.sleep(1)
        # THEN the app has bound the key again: a press starts a hold, the release ends it
        key(sway, SHIFT_R, True, SHIFT)
        state(lambda s: s["held"])
        key(sway, SHIFT_R, False, 0)
        state(lambda s: not s["held"])

        # AND both reads reached the history as source "hover"
        from test_hover_xvfb import assert_both_read_as_hover

        assert_both_read_as_hover(app)
        # AND once the app quits, Sway has its binding no more
        app.send("quit")
        assert app.process.wait(timeout=30) == 0
        gone = sway.run(["swaymsg", "--", "unbindsym --no-repeat Shift_R"], check=False)
        assert "Could not find binding" in gone.stdout.decode(), gone.stdout
    finally:
        for part in (app, text):
            if part is not None:
                sway.stop_process(part.process)


def wait_popup(session, popup: list[int]) -> list[int]:
    """The popup's box on the screen, as Sway has it, once it is where the app put it."""

    def placed():
        for window in session.windows():
            if window.get("name") == "Hayai dictionary":
                r = window["rect"]
                box = [r["x"], r["y"], r["x"] + r["width"], r["y"] + r["height"]]
                return box if box == popup else None
        return None

    return session.wait_for(placed, f"the popup at {popup}\n{session.windows()}", 30)


def overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
