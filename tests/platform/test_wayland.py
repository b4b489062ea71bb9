"""The app on a real Wayland compositor: headless Sway with two outputs, scale 1 and scale 2.

Everything runs as an unprivileged user inside the session (tests/platform/wayland_session.py): Sway,
a private D-Bus bus with xdg-desktop-portal + xdg-desktop-portal-wlr (activated on demand, as in a
real session), a virtual pointer, and one window per output painting known noise in that output's
physical pixels. `hayai capture` starts the app (a native Wayland client); the drag is injected
with `swaymsg seat seat0 cursor set|press|release`; the crop saved by --debug-dir must equal the
noise under the box, through grim and through the portal; the clipboard (wl-paste) holds the text.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.wayland, pytest.mark.gui, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUTPUTS = {  # name: (physical size, scale, logical position)
    "HEADLESS-1": ((800, 600), 1, (0, 0)),
    "HEADLESS-2": ((1200, 800), 2, (800, 0)),
}
LAYOUT = (1400, 600)  # the outputs' logical bounding box
SEEDS = {"HEADLESS-1": 11, "HEADLESS-2": 22}
SELECTION_TITLE = "Hayai — select a region"


@pytest.fixture(scope="module")
def sway(tiny_v21):
    from wayland_session import missing_portal, missing_tools, python_for_user, start_sway

    missing = missing_tools() + missing_portal()
    if missing:
        pytest.skip(
            "the Wayland tests need Sway, grim, wl-clipboard, D-Bus and the portals "
            "(apt-get install sway grim wl-clipboard dbus-daemon pipewire xdg-desktop-portal "
            f"xdg-desktop-portal-wlr xdg-desktop-portal-gtk); missing here: {', '.join(missing)}"
        )
    session = start_sway()
    try:
        session.python = python_for_user()
        src = session.mkdir("src")
        for name in ("app", "model", "resources"):
            session.readable(ROOT / name, f"src/{name}")
        session.readable(HERE / "wayland_clients.py", "src/wayland_clients.py")
        session.model = session.readable(tiny_v21, "model-tiny")
        session.src = src
        # the outputs: HEADLESS-1 exists; a second one at scale 2 to its right
        session.swaymsg("create_output")
        for name, ((w, h), scale, (x, y)) in OUTPUTS.items():
            session.swaymsg(f"output {name} resolution {w}x{h} position {x} {y} scale {scale}")
        session.enable_portal()
        env = session.env(PYTHONPATH=str(src))
        client = src / "wayland_clients.py"
        session.pointer = session.popen(
            [session.python, client, "pointer"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert session.pointer.stdout.readline().strip() == "READY"
        session.wait_for(
            lambda: session.swaymsg(kind="get_seats")[0]["capabilities"], "a pointer on seat0"
        )
        for name, seed in SEEDS.items():
            session.swaymsg(f"focus output {name}")
            log = f"image-{name}"
            session.popen([session.python, client, "image", name, seed], env=env, log_name=log)
            (w, h), _, _ = OUTPUTS[name]
            session.wait_for(
                lambda log=log, w=w, h=h: f"PAINT {w} {h}" in _read(session.folder / f"{log}.log"),
                f"the image on {name}",
            )
        session.swaymsg("focus output HEADLESS-1")
        yield session
    finally:
        session.close()


def pointer_line(session, line: str) -> None:
    session.pointer.stdin.write(line + "\n")
    session.pointer.stdin.flush()
    assert session.pointer.stdout.readline().strip() == "FRAME"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def expected_pixels(output: str, box: tuple[int, int, int, int]) -> bytes:
    """RGB bytes of the noise window on `output` inside `box` (that output's physical pixels)."""
    from wayland_clients import noise

    (w, h), _, _ = OUTPUTS[output]
    data = noise(w, h, SEEDS[output])
    x, y, bw, bh = box
    rows = []
    for row in range(y, y + bh):
        line = data[(row * w + x) * 4 : (row * w + x + bw) * 4]
        rows.append(
            bytes(b for i in range(0, len(line), 4) for b in (line[i + 2], line[i + 1], line[i]))
        )
    return b"".join(rows)


def png_rgb(path: Path) -> tuple[tuple[int, int], bytes]:
    from PIL import Image

    with Image.open(path) as image:
        rgb = image.convert("RGB")
        return rgb.size, rgb.tobytes()


class RunningApp:
    def __init__(self, session, backend: str, tag: str):
        self.session = session
        state = self.state = session.mkdir(f"app-{tag}")
        self.debug_dir = session.mkdir(f"app-{tag}/debug")
        self.log_name = f"app-{tag}"
        self.env = session.env(
            PYTHONPATH=str(session.src),
            HAYAI_CONFIG_DIR=str(state / "config"),
            HF_HOME=str(state / "hf"),
        )
        self.env.pop("QT_QPA_PLATFORM")  # the launcher chooses wayland itself
        if os.environ.get("QT_LOGGING_RULES"):  # e.g. qt.qpa.wayland.input=true, to debug a test
            self.env["QT_LOGGING_RULES"] = os.environ["QT_LOGGING_RULES"]
        self.backend = backend

    def capture(self) -> None:
        """`hayai capture`: starts the app (none runs yet) and opens the selection."""
        s = self.session
        argv = [s.python, "-m", "app", "-v", "--no-tray", "--model", s.model]
        argv += ["--debug-dir", self.debug_dir, "--capture-backend", self.backend, "capture"]
        self.argv = argv
        self.process = s.popen(argv, env=self.env, log_name=self.log_name)

    def log(self) -> str:
        return _read(self.session.folder / f"{self.log_name}.log")

    def selection_windows(self) -> list[dict]:
        return [
            w for w in self.session.windows() if (w.get("name") or "").startswith(SELECTION_TITLE)
        ]

    def wait_selection(self, count: int) -> list[dict]:
        def ready():
            if self.process.poll() is not None:
                raise AssertionError(f"the app exited ({self.process.returncode}):\n{self.log()}")
            windows = self.selection_windows()
            return windows if len(windows) == count and all(w["visible"] for w in windows) else None

        return self.session.wait_for(ready, f"{count} selection windows", 240)

    def drag(self, start: tuple[int, int], end: tuple[int, int]) -> None:
        """Press at `start`, move to `end`, release (layout coordinates, logical pixels).

        `swaymsg seat seat0 cursor set|press|release` for the ends; while the button is held,
        Sway 1.7 sends no motion for `cursor set`/`cursor move` until the release, so the moves
        in between go through the virtual pointer (the same wlroots seat, as a real mouse)."""
        s = self.session
        pointer_line(s, f"motion {start[0]} {start[1]} {LAYOUT[0]} {LAYOUT[1]}")
        s.swaymsg(f"seat seat0 cursor set {start[0]} {start[1]}")
        pointer_line(s, "frame")
        s.swaymsg("seat seat0 cursor press button1")
        mid = ((start[0] + end[0]) // 2, (start[1] + end[1]) // 2)
        for x, y in (mid, end):
            pointer_line(s, f"motion {x} {y} {LAYOUT[0]} {LAYOUT[1]}")
        s.swaymsg(f"seat seat0 cursor set {end[0]} {end[1]}")
        s.swaymsg("seat seat0 cursor release button1")

    def select(self, start: tuple[int, int], end: tuple[int, int], windows: int = 2) -> None:
        """Drag until the app logs the selection. A drag that reaches windows before they take
        input (just mapped) is lost; then the selection is still open, or, when only part of it
        arrived and made a too-small box, closed: open it again with `hayai capture`."""
        for _attempt in range(3):
            self.drag(start, end)
            if self.session.poll_for(lambda: "INFO app.ui.selection: selected" in self.log(), 15):
                return
            if not self.selection_windows():
                self.session.run([*self.argv], env=self.env)  # forwarded to the running app
            self.wait_selection(windows)
        raise AssertionError(f"three drags from {start} to {end} selected nothing\n{self.log()}")

    def record(self, number: int = 1) -> dict:
        path = self.debug_dir / f"{number:04d}.json"

        def complete():  # written after the PNG, not atomically: parse once it is whole
            try:
                return json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None

        return self.session.wait_for(complete, f"{path.name} from --debug-dir\n{self.log()}", 60)

    def stop(self) -> None:
        self.session.stop_process(self.process)
        self.session.wait_for(lambda: not self.selection_windows(), "the app's windows to go")


@pytest.fixture
def run_app(sway):
    apps = []

    def start(backend: str, tag: str) -> RunningApp:
        app = RunningApp(sway, backend, tag)
        apps.append(app)
        app.capture()
        return app

    yield start
    for app in apps:
        app.stop()


# --- the tests --------------------------------------------------------------------------------

# Known issue (2026-12-01): after the rest of the suite has run in the same pytest process, Sway
# delivers the test's `cursor press` to no surface of ours (Qt logs Enter, Leave and moves, but no
# press), so the drag selects nothing; the same tests pass alone, as a module, and first in the
# session (tests/conftest.py runs the wayland tests first). Not yet explained: kept running and
# reported (XPASS/XFAIL in `-ra`) rather than skipped, until the leak is found.
DRAG_AFTER_SUITE = pytest.mark.xfail(
    strict=False, reason="a press can go astray after the rest of the suite (see the comment)"
)


@DRAG_AFTER_SUITE
@pytest.mark.parametrize("backend", ["grim", "portal"])
def test_a_drag_on_the_scale_2_output_crops_its_physical_pixels(sway, run_app, backend):
    # GIVEN the app started by `hayai capture` with this capture backend, over two outputs
    app = run_app(backend, f"scale2-{backend}")
    windows = app.wait_selection(2)
    # THEN one fullscreen selection window per output, each on its own output
    assert sorted((w["rect"]["x"], w["rect"]["width"]) for w in windows) == [(0, 800), (800, 600)]
    # WHEN a box is dragged on HEADLESS-2 (logical 800..1400 x 0..400, scale 2)
    app.select((800 + 100, 50), (800 + 250, 150))
    record = app.record()
    # THEN the crop is that box in HEADLESS-2's physical pixels (2x the logical box), exactly
    assert record["screen"] == "HEADLESS-2"
    box = (200, 100, 300, 200)
    assert record["box"] == [800 * 2 + box[0], box[1], box[2], box[3]]  # logical origin × 2
    size, pixels = png_rgb(app.debug_dir / "0001.png")
    assert size == (300, 200)
    assert pixels == expected_pixels("HEADLESS-2", box)
    assert f"capture backend: {backend}" in app.log()
    if backend == "portal":  # told before the first portal capture, once per machine
        assert "may ask once whether Hayai may take screenshots" in app.log()
        assert (app.state / "config" / "portal-note-shown").exists()
        # portal-wlr's world-readable screenshot file is gone: removed as soon as it was opened
        assert not Path("/tmp/out.png").exists()
    # on Wayland the no-tray note is a window of its own (a tooltip would need a parent there)
    assert "Failed to create popup" not in app.log()


@DRAG_AFTER_SUITE
def test_grim_crops_the_scale_1_output_exactly_and_copies_the_text(sway, run_app):
    app = run_app("grim", "scale1-grim")
    app.wait_selection(2)
    app.select((20, 30), (170, 130))
    record = app.record()
    assert record["screen"] == "HEADLESS-1"
    assert record["box"] == [20, 30, 150, 100]
    size, pixels = png_rgb(app.debug_dir / "0001.png")
    assert size == (150, 100)
    assert pixels == expected_pixels("HEADLESS-1", (20, 30, 150, 100))
    # the clipboard is the compositor's (no X11 helper): wl-paste reads what the app copied
    assert record["text"], "the tiny model read nothing: nothing to copy"
    pasted = sway.run(["wl-paste", "--no-newline"], env=app.env, timeout=20).stdout.decode()
    assert pasted == record["text"]


def test_on_sway_the_session_picks_grim_then_the_portal_and_explains_shortcuts(sway):
    # GIVEN the Sway session's environment (XDG_SESSION_TYPE, WAYLAND_DISPLAY), no override
    code = """
import base64
import json
from app.platform.backends import pick
from app.capture import REGISTRY as CAPTURE
from app.capture.backends import grim
from app.hotkey import REGISTRY as HOTKEY
from app.hotkey.backends import wayland
capture = pick(CAPTURE, capability="capture")
grim.is_available = lambda: False  # as on GNOME or KDE, which offer no wlr-screencopy
without_grim = pick(CAPTURE, capability="capture")
hotkey = pick(HOTKEY, capability="hotkey")
print(json.dumps([capture.name, without_grim.name, without_grim.reason, hotkey.name,
                  str(wayland.explain({"capture": "<ctrl>+<alt>+o"}))]))
"""
    done = sway.run([sway.python, "-c", code], env=sway.env(PYTHONPATH=str(sway.src)))
    capture, without_grim, reason, hotkey, message = json.loads(done.stdout.decode())
    # THEN grim (the compositor offers wlr-screencopy), else the portal (xdg-desktop-portal-wlr)
    assert capture == "grim"
    assert without_grim == "portal" and "grim: not available" in reason
    # AND no GlobalShortcuts portal on wlroots: the message carries Sway's config line
    assert hotkey == "wayland"
    assert "bindsym Ctrl+Mod1+o exec" in message and "capture" in message


def test_grim_grabs_a_box_alone_exactly_on_both_scales(sway):
    # GIVEN boxes at odd physical offsets on the scale 1 and the scale 2 output (desktop px: the
    # output's origin in qt_screens plus its image's pixels), as Hover to read and watched regions ask
    boxes = {"HEADLESS-1": (301, 77, 123, 45), "HEADLESS-2": (301, 77, 123, 45)}
    code = """
import base64, json, sys
from PySide6.QtGui import QGuiApplication, QImage
from app.capture.backends import grim
from app.capture.screens import qt_screens
app = QGuiApplication(sys.argv[:1])
out = {}
for name, (x, y, w, h) in json.loads(sys.argv[1]).items():
    ox = {s.name: s.physical[0] for s in qt_screens()}[name]
    image = grim.grab_box((ox + x, y, w, h)).convertToFormat(QImage.Format.Format_RGB888)
    rows = b"".join(bytes(image.constBits())[r * image.bytesPerLine():][: w * 3] for r in range(h))
    out[name] = [image.width(), image.height(), base64.b64encode(rows).decode()]
print(json.dumps(out))
"""
    env = sway.env(PYTHONPATH=str(sway.src))
    done = sway.run([sway.python, "-c", code, json.dumps(boxes)], env=env)
    # WHEN each is grabbed through `grim -g` THEN exactly the box's pixels, in physical pixels
    for name, (width, height, rgb) in json.loads(done.stdout.decode()).items():
        x, y, w, h = boxes[name]
        assert (width, height) == (w, h)
        assert base64.b64decode(rgb) == expected_pixels(name, (x, y, w, h)), name


def test_the_glass_says_where_the_pointer_is_on_both_scales(sway):
    # GIVEN Hover to read's glass over both outputs (scale 1 at 0,0; scale 2 at 800,0)
    code = """
import sys
from app.platform.glass import Glass
glass = Glass(lambda x, y: print("AT", round(x), round(y), flush=True), lambda mask: None,
              lambda: None, lambda: None, lambda error: print("ENDED", error, flush=True))
glass.show()
print("READY", flush=True)
sys.stdin.readline()
glass.hide()
"""
    env = sway.env(PYTHONPATH=str(sway.src))
    child = sway.popen(
        [sway.python, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        # (where the pointer rests, said as the glass appears, may come before READY)
        while (line := child.stdout.readline().strip()) != "READY":
            assert line.startswith("AT "), line
        for x, y in ((300, 200), (1100, 350), (810, 20)):
            # WHEN the pointer moves to a point of the layout (logical px)
            pointer_line(sway, f"motion {x} {y} {LAYOUT[0]} {LAYOUT[1]}")
            sway.swaymsg(f"seat seat0 cursor set {x} {y}")
            pointer_line(sway, "frame")
            # THEN the glass says that point, on either output, whatever its scale
            while (line := child.stdout.readline().strip()) != f"AT {x} {y}":
                assert line.startswith("AT "), line
    finally:
        child.stdin.close()
        assert child.wait(timeout=10) == 0
    assert child.stdout.read().strip() == ""  # hidden by the app: no end to tell of


def test_the_real_portal_answers_a_background_grab_while_the_gui_runs(sway):
    # GIVEN the session's real xdg-desktop-portal + xdg-desktop-portal-wlr, and Qt on Wayland
    code = """
import json, sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from app.capture import background_grab
ticks, out = [], {}
timer = QTimer(); timer.timeout.connect(lambda: ticks.append(time.monotonic())); timer.start(10)
grab = background_grab("portal")
def arrived(captures):
    for name, capture in captures.items():
        capture.image.save(f"{name}.png")
        out[name] = [capture.image.width(), capture.image.height()]
    app.quit()
def failed(message):
    out["failed"] = message
    app.quit()
grab.arrived.connect(arrived)
grab.failed.connect(failed)
started = time.monotonic()
grab.start()
app.exec()
out["ticks"] = len(ticks)
out["seconds"] = time.monotonic() - started
print(json.dumps(out))
"""
    env = sway.env(PYTHONPATH=str(sway.src))
    # WHEN a BackgroundGrab (the app's portal route) asks it for a screenshot
    done = sway.run([sway.python, "-c", code], env=env, timeout=120)
    result = json.loads(done.stdout.decode().strip().splitlines()[-1])
    # THEN the picture arrives through the queued signal, one capture per output, while the GUI
    # thread ran its timer (the request and the answer were waited for elsewhere)
    assert "failed" not in result, result
    assert result["HEADLESS-1"] == [800, 600] and result["HEADLESS-2"] == [1200, 800]
    assert result["ticks"] >= result["seconds"] * 100 * 0.3, result
    # AND its pixels are the outputs' own, and portal-wlr's /tmp/out.png is gone
    size, pixels = png_rgb(sway.folder / "HEADLESS-2.png")
    box = (200, 100, 300, 200)
    from PIL import Image

    crop = Image.frombytes("RGB", size, pixels).crop((200, 100, 500, 300)).tobytes()
    assert crop == expected_pixels("HEADLESS-2", box)
    assert not Path("/tmp/out.png").exists()


def test_a_scale_2_output_left_of_another_keeps_apart_in_desktop_px():
    # GIVEN a laptop's layout: a scale 2 output at 0,0 (logical 600×400) and a scale 1 output
    # to its right at logical 600,0 (Sway of its own: the module's outputs are the other way)
    from wayland_clients import noise
    from wayland_session import missing_tools, python_for_user, start_sway

    if missing_tools():
        pytest.skip(f"needs {', '.join(missing_tools())}")
    session = start_sway()
    try:
        python = python_for_user()
        src = session.mkdir("src")
        session.readable(ROOT / "app", "src/app")
        session.readable(HERE / "wayland_clients.py", "src/wayland_clients.py")
        session.swaymsg("create_output")
        session.swaymsg("output HEADLESS-1 resolution 1200x800 position 0 0 scale 2")
        session.swaymsg("output HEADLESS-2 resolution 800x600 position 600 0 scale 1")
        env = session.env(PYTHONPATH=str(src))
        session.swaymsg("focus output HEADLESS-2")
        session.popen([python, src / "wayland_clients.py", "image", "HEADLESS-2", 33], env=env,
                      log_name="image")  # fmt: skip
        session.wait_for(lambda: "PAINT 800 600" in _read(session.folder / "image.log"), "image")
        code = """
import base64, json, sys
from PySide6.QtGui import QGuiApplication, QImage
from app.capture.backends import grim
from app.capture.screens import qt_screens
app = QGuiApplication(sys.argv[:1])
screens = {s.name: s.physical for s in qt_screens()}
x0 = screens["HEADLESS-2"][0]
image = grim.grab_box((x0 + 301, 77, 123, 45)).convertToFormat(QImage.Format.Format_RGB888)
rows = b"".join(bytes(image.constBits())[r * image.bytesPerLine():][: 123 * 3] for r in range(45))
print(json.dumps([screens, base64.b64encode(rows).decode()]))
"""
        done = session.run([python, "-c", code], env=env)
        screens, rgb = json.loads(done.stdout.decode())
    finally:
        session.close()
    # THEN their desktop px do not overlap (the monitor starts where the laptop's pixels end)
    assert screens["HEADLESS-1"] == [0, 0, 1200, 800]
    assert screens["HEADLESS-2"][:2] == [1200, 0]
    # AND a box on the monitor is grabbed from the monitor, exactly
    data = noise(800, 600, 33)
    expected = b"".join(
        bytes(b for i in range(x * 4, (x + 123) * 4, 4) for b in (data[row * 3200 + i + 2],
              data[row * 3200 + i + 1], data[row * 3200 + i]))
        for row in range(77, 77 + 45) for x in (301,)
    )  # fmt: skip
    assert base64.b64decode(rgb) == expected
