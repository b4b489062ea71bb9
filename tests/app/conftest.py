"""Fixtures for the app tests: Qt's offscreen platform by default, and a real X server (Xvfb) on demand.

Widget tests run under `QT_QPA_PLATFORM=offscreen` (set here, before any QApplication exists).
Tests that need real X11 input or capture take the `xvfb` fixture: one Xvfb per test session on a
free display number (Xvfb picks it and reports it through -displayfd once it accepts connections),
DISPLAY set for the test, the server killed at the end. Qt's platform is fixed per process, so tests
that need Qt on X11 (xcb) run their Qt part in a subprocess with `xvfb.env()`.

The `desktop` fixture is a desktop as a user has one: its own Xvfb with a real window manager
(openbox) and a real system tray (trayer, docked at the bottom right), so the app runs with its
tray icon, its windows are managed (focus, stacking, fullscreen requests) and a hand's pauses
between press and move reach it as on a real desktop. Skipped when openbox or trayer is missing.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[2]
XVFB_SIZE = (1280, 720)


@dataclass
class XServer:
    display: str
    width: int
    height: int
    process: subprocess.Popen

    def env(self, **extra: str) -> dict[str, str]:
        """Environment for a child process that talks to this server (Qt on xcb, X11 session)."""
        env = dict(os.environ)
        for key in (
            "WAYLAND_DISPLAY",
            "QT_SCALE_FACTOR",
            "QT_SCREEN_SCALE_FACTORS",
            "QT_QPA_PLATFORM",
        ):
            env.pop(key, None)
        env.update(
            DISPLAY=self.display,
            XDG_SESSION_TYPE="x11",
            QT_QPA_PLATFORM="xcb",
            PYTHONPATH=str(REPO),
            OMP_NUM_THREADS="1",
        )
        env.update(extra)
        return env

    def xdotool(self, *args: str) -> str:
        if shutil.which("xdotool") is None:
            pytest.skip("xdotool is not installed (apt-get install xdotool)")
        result = subprocess.run(
            ["xdotool", *args], env=self.env(), capture_output=True, text=True, timeout=20
        )
        assert result.returncode == 0, f"xdotool {' '.join(args)} failed: {result.stderr}"
        return result.stdout


def start_xvfb(
    width: int = XVFB_SIZE[0], height: int = XVFB_SIZE[1], timeout_s: float = 15.0
) -> XServer:
    binary = shutil.which("Xvfb")
    if binary is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb); X11 tests skipped")
    read_fd, write_fd = os.pipe()
    process = subprocess.Popen(
        [
            binary,
            "-displayfd",
            str(write_fd),
            "-screen",
            "0",
            f"{width}x{height}x24",
            "-nolisten",
            "tcp",
            "+extension",
            "RECORD",
        ],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    os.close(write_fd)
    # Xvfb writes the number, then a newline, once it accepts connections; closing the pipe before
    # the newline arrives kills it ("Cannot write display number"), so read up to the newline.
    received = b""
    deadline = time.monotonic() + timeout_s
    try:
        while not received.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([read_fd], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(read_fd, 64) if ready else b""
            if not chunk:
                break
            received += chunk
    finally:
        os.close(read_fd)
    number = received.decode().strip() if received.endswith(b"\n") else ""
    if not number:
        process.kill()
        _, err = process.communicate(timeout=5)
        raise RuntimeError(
            f"Xvfb did not become ready within {timeout_s} s: {err.decode(errors='replace')[-500:]}"
        )
    return XServer(f":{number}", width, height, process)


@pytest.fixture(scope="session")
def xvfb_server():
    server = start_xvfb()
    yield server
    server.process.terminate()
    try:
        server.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture
def xvfb(xvfb_server, monkeypatch):
    """A running Xvfb with DISPLAY (and an X11 session type) set for this test."""
    monkeypatch.setenv("DISPLAY", xvfb_server.display)
    monkeypatch.setenv("XDG_SESSION_TYPE", "x11")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    return xvfb_server


@dataclass
class Desktop(XServer):
    """An Xvfb with a window manager and a tray running on it (see `start_desktop`)."""

    helpers: tuple[subprocess.Popen, ...] = ()

    def stop(self) -> None:
        for process in (*self.helpers, self.process):
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()


def _x_ready(server: XServer, check: str, timeout_s: float) -> bool:
    """Poll `check` (a Python snippet on python-xlib's `d`, the display) until it is true."""
    code = (
        f"from Xlib import display\nd = display.Display()\nraise SystemExit(0 if ({check}) else 1)"
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = subprocess.run([sys.executable, "-c", code], env=server.env(), capture_output=True)
        if done.returncode == 0:
            return True
        time.sleep(0.2)
    return False


WM_RUNNING = "d.screen().root.get_full_property(d.intern_atom('_NET_SUPPORTING_WM_CHECK'), 0)"
TRAY_RUNNING = "d.get_selection_owner(d.intern_atom('_NET_SYSTEM_TRAY_S0')) != 0"


def start_desktop(width: int = XVFB_SIZE[0], height: int = XVFB_SIZE[1]) -> Desktop:
    """A fresh Xvfb, openbox on it, then trayer; returns once both have claimed their X selections."""
    for binary, package in (("openbox", "openbox"), ("trayer", "trayer")):
        if shutil.which(binary) is None:
            pytest.skip(
                f"{binary} is not installed (apt-get install {package}); desktop tests skipped"
            )
    server = start_xvfb(width, height)
    desktop = Desktop(server.display, width, height, server.process)
    env = desktop.env()
    quiet = {"env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    wm = subprocess.Popen(["openbox", "--sm-disable"], **quiet)
    desktop.helpers = (wm,)
    if not _x_ready(desktop, WM_RUNNING, 20):
        desktop.stop()
        raise RuntimeError("openbox did not start on the test desktop")
    tray = subprocess.Popen(
        ["trayer", "--edge", "bottom", "--align", "right", "--widthtype", "request",
         "--height", "24", "--SetDockType", "true", "--transparent", "false"],
        **quiet,
    )  # fmt: skip
    desktop.helpers = (tray, wm)
    if not _x_ready(desktop, TRAY_RUNNING, 20):
        desktop.stop()
        raise RuntimeError("trayer did not take the system tray selection on the test desktop")
    return desktop


@pytest.fixture(scope="module")
def desktop():
    """A desktop with a window manager (openbox) and a system tray (trayer), for one test module."""
    server = start_desktop()
    yield server
    server.stop()


def run_child(
    script: Path, *args: str, env: dict[str, str], timeout_s: float = 60
) -> subprocess.CompletedProcess:
    """Run `python script args` (a test file's `__main__` part) and fail with its output if it fails."""
    result = subprocess.run(
        [sys.executable, str(script), *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    assert result.returncode == 0, (
        f"child {script.name} {args} failed:\n{result.stdout}\n{result.stderr}"
    )
    return result


@pytest.fixture
def child():
    """`child(script, *args, env=...)`: run a test file's `__main__` part in a fresh process."""
    return run_child
