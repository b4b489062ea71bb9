"""`hayai` without a display says so plainly (before Qt aborts with its plugin text), and -v / -vv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import build_parser
from app.launcher import verbosity
from app.platform.display import display_checked

REPO = Path(__file__).resolve().parents[2]


def _hayai(tmp_path, **env_vars):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    env.update(HAYAI_CONFIG_DIR=str(tmp_path / "cfg"), PYTHONPATH=str(REPO), **env_vars)
    return subprocess.run(
        [sys.executable, "-m", "app"], env=env, capture_output=True, text=True, timeout=60
    )


def display_problem(environ=None) -> str | None:
    with display_checked(environ) as problem:
        return problem


def _free_display() -> str:
    number = next(n for n in range(77, 200) if not os.path.exists(f"/tmp/.X11-unix/X{n}"))
    return f":{number}"


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="X11/Wayland systems only")
def test_no_display_is_said_plainly_with_what_to_do(tmp_path):
    result = _hayai(tmp_path)
    assert result.returncode == 1
    err = result.stderr
    assert "no display found" in err
    assert "DISPLAY" in err and "WAYLAND_DISPLAY" in err and "hayai ocr" in err
    assert "qt.qpa" not in err and "plugin" not in err.lower() and "Traceback" not in err


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="X11/Wayland systems only")
def test_an_x_display_that_cannot_be_opened_is_named(tmp_path):
    display = _free_display()
    result = _hayai(tmp_path, DISPLAY=display)
    assert result.returncode == 1
    assert f"cannot open the X display '{display}'" in result.stderr
    assert "qt.qpa" not in result.stderr and "plugin" not in result.stderr.lower()


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="X11/Wayland systems only")
def test_a_wayland_name_without_a_compositor_is_named(tmp_path):
    env = {"WAYLAND_DISPLAY": "wayland-hayai-test", "XDG_RUNTIME_DIR": str(tmp_path)}
    assert "Wayland display 'wayland-hayai-test'" in display_problem(env)


@pytest.mark.xvfb
def test_a_running_x_server_passes(xvfb):
    assert display_problem() is None  # the Xvfb the fixture started: libxcb opened it
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None  # needs no display


@pytest.mark.xvfb
def test_the_check_holds_its_x_connection_until_qt_has_its_own(lone_xvfb):
    if shutil.which("xdpyinfo") is None:
        pytest.skip("xdpyinfo is not installed (apt-get install x11-utils)")
    # GIVEN an X server alone, which ends as its last client leaves (a bare Xvfb resets then, and
    # refuses connections meanwhile: Qt's connection, made right after a check that let go, failed
    # now and then with Qt's plugin abort)
    with display_checked(lone_xvfb.env()) as problem:
        assert problem is None
        # WHEN another client (Qt, in the app) connects while the block is open
        other = subprocess.run(
            ["xdpyinfo"], env=lone_xvfb.env(), capture_output=True, text=True, timeout=20
        )
        # THEN the server is still there for it
        assert other.returncode == 0, other.stderr
        assert lone_xvfb.process.poll() is None
    # and the check lets go once the block ends: the server, alone, ends
    assert lone_xvfb.process.wait(timeout=10) == 0


@pytest.mark.xvfb
@pytest.mark.slow
def test_the_app_starts_on_an_x_server_it_is_alone_on(lone_xvfb, tmp_path):
    # GIVEN an X server with no client, which ends as its last one leaves (as a bare one resets)
    app = subprocess.Popen(
        [sys.executable, "-m", "app", "-v"],
        env=lone_xvfb.env(HAYAI_CONFIG_DIR=str(tmp_path / "cfg"), HF_HUB_OFFLINE="1"),
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # WHEN the app starts on it THEN it comes up (its display check let go of the server
        # only once Qt had its own connection)
        lines = []
        for line in app.stderr:
            lines.append(line)
            if "tray shown" in line:
                break
        assert any("tray shown" in line for line in lines), "".join(lines[-20:])
    finally:
        app.terminate()
        app.communicate(timeout=30)  # what it still writes is read, so it never waits on us


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="X11/Wayland systems only")
def test_asking_for_xcb_explicitly_is_still_checked():
    assert "no display found" in display_problem({"QT_QPA_PLATFORM": "xcb"})
    assert display_problem({"QT_QPA_PLATFORM": "vnc"}) is None


def test_v_is_info_and_vv_or_debug_is_debug():
    parse = build_parser().parse_args
    assert verbosity(parse([])) == 0
    assert verbosity(parse(["-v"])) == 1
    assert verbosity(parse(["-vv"])) == 2
    assert verbosity(parse(["--debug"])) == 2
    assert verbosity(parse(["-v", "--debug"])) == 2


def test_vv_turns_on_debug_logging(tmp_path):
    code = (
        "import logging, sys; from app.cli import build_parser; from app import launcher; "
        "launcher._setup_logging(launcher.verbosity(build_parser().parse_args(sys.argv[1:]))); "
        "print(logging.getLogger('app.x').isEnabledFor(logging.DEBUG), "
        "logging.getLogger('app.x').isEnabledFor(logging.INFO))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = {
        flags: subprocess.run(
            [sys.executable, "-c", code, *flags], env=env, capture_output=True, text=True
        ).stdout.split()
        for flags in ((), ("-v",), ("-vv",), ("--debug",))
    }
    assert out[()] == ["False", "False"]
    assert out[("-v",)] == ["False", "True"]
    assert out[("-vv",)] == ["True", "True"] == out[("--debug",)]
