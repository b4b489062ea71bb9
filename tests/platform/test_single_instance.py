"""One app per user: forwarding between real processes, unknown messages, stale sockets, racing starts.

The primary in these tests is the real launcher (`app.launcher.main`) in a child process (this file's
`__main__`), with a stand-in recognizer so that no torch import slows it down; it prints every
command it handles.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _env(config: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HAYAI_CONFIG_DIR=str(config),
        QT_QPA_PLATFORM="offscreen",
        PYTHONPATH=str(REPO),
        OMP_NUM_THREADS="1",
        HF_HUB_OFFLINE="1",
    )
    return env


class Primary:
    """A child process whose stdout lines are collected by a thread (select() on a buffered pipe misses lines)."""

    def __init__(self, config: Path, *args: str):
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__)), *args],
            env=_env(config),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.process.stdout:
            self._queue.put(line.strip())

    def wait_for(self, prefix: str, timeout_s: float = 60) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in self.lines:
                if line.startswith(prefix):
                    self.lines.remove(line)
                    return line
            try:
                self.lines.append(self._queue.get(timeout=0.1))
            except queue.Empty:
                if self.process.poll() is not None and self._queue.empty():
                    break
        self.stop()
        raise AssertionError(
            f"no {prefix!r} line; got {self.lines}\n{self.process.stderr.read()[-3000:]}"
        )

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # the app quits cleanly on SIGTERM
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def hayai(config: Path, *args: str, timeout_s: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env=_env(config),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


@pytest.fixture
def config(tmp_path):
    return tmp_path / "cfg"


def test_second_start_and_capture_commands_are_forwarded(config):
    # GIVEN a running app (started without importing torch on the way to its tray)
    primary = Primary(config, "run")
    started = primary.wait_for("STARTED").split()
    assert started[1] == "False", "torch was imported before the tray showed"
    print(f"app start → tray shown: {float(started[2]) * 1000:.0f} ms after interpreter start")
    try:
        # WHEN `hayai capture`, `hayai capture --repeat` and a plain `hayai` start THEN each exits 0 at once
        for args, expected in (
            (["capture"], "capture"),
            (["capture", "--repeat"], "rescan"),
            ([], "capture"),
        ):
            done = hayai(config, *args)
            assert done.returncode == 0, done.stderr
            assert primary.wait_for("COMMAND").split()[1] == expected
    finally:
        assert primary.stop() == 0


def test_unknown_messages_are_ignored_and_the_app_keeps_answering(qapp, config, monkeypatch):
    from PySide6.QtNetwork import QLocalSocket

    from app.platform import single_instance

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(config))
    primary = Primary(config, "run")
    primary.wait_for("STARTED")
    try:
        sock = QLocalSocket()
        sock.connectToServer(single_instance.server_name())
        assert sock.waitForConnected(3000)
        sock.write(b"rm -rf /\n")
        sock.flush()
        assert sock.waitForReadyRead(3000)
        assert bytes(sock.readAll().data()).startswith(b"unknown")
        sock.disconnectFromServer()
        assert single_instance.send("capture")  # still serving
        assert primary.wait_for("COMMAND") == "COMMAND capture"
        assert not any(line.startswith("COMMAND rm") for line in primary.lines)
    finally:
        primary.stop()


def test_a_stale_socket_left_by_a_crash_is_replaced(qapp, config, monkeypatch):
    from app.platform import single_instance

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(config))
    name = single_instance.server_name()
    assert name.endswith("instance.sock")
    # GIVEN a socket file nobody listens on (what a killed app leaves behind)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(name)
    dead.close()
    assert Path(name).exists() and not single_instance.send("capture", timeout_ms=300)
    # WHEN a new primary listens THEN it takes over the name and receives commands
    server = single_instance.InstanceServer()
    server.listen()
    got = []
    server.command.connect(got.append)
    client = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from app.platform.single_instance import send; raise SystemExit(0 if send('rescan') else 3)",
        ],
        env=_env(config),
        cwd=REPO,
    )
    deadline = time.monotonic() + 20
    while client.poll() is None and time.monotonic() < deadline:
        qapp.processEvents()
        time.sleep(0.01)
    qapp.processEvents()
    server.close()
    assert client.returncode == 0
    assert got == ["rescan"]


def test_socket_is_for_the_current_user_only(qapp, config, monkeypatch):
    from app.platform import single_instance

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(config))
    server = single_instance.InstanceServer()
    server.listen()
    try:
        mode = os.stat(single_instance.server_name()).st_mode & 0o777
        assert mode & 0o077 == 0, oct(mode)  # no access for group or others
    finally:
        server.close()


def test_handing_over_never_uses_a_deleted_socket(qapp, config, monkeypatch):
    from app.platform import single_instance

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(config))
    # GIVEN a running app whose command handler runs an event loop (in which the client's
    # disconnection arrives)
    primary = Primary(config, "dialog")
    primary.wait_for("STARTED")
    try:
        # WHEN a second start hands its command over, many times
        for _ in range(40):
            assert single_instance.send("capture")
            assert primary.wait_for("COMMAND") == "COMMAND capture"
    finally:
        assert primary.stop() == 0
    # THEN each was handled once, and the server never called a socket Qt had deleted
    log = primary.process.stderr.read()
    assert "already deleted" not in log and "Traceback" not in log, log[-3000:]
    rest = primary.lines + list(primary._queue.queue)
    assert not any(line.startswith("COMMAND") for line in rest), rest


def test_closing_with_a_connection_open_leaves_no_socket_behind(qapp, config, monkeypatch, capfd):
    import shiboken6
    from PySide6.QtNetwork import QLocalSocket

    from app.platform import single_instance

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(config))
    # GIVEN a client connected to the app, still silent (a `hayai` mid-handover as the app quits)
    server = single_instance.InstanceServer()
    server.listen()
    client = QLocalSocket()
    client.connectToServer(single_instance.server_name())
    assert client.waitForConnected(3000)
    deadline = time.monotonic() + 10
    while server.open_connections() == 0 and time.monotonic() < deadline:
        qapp.processEvents()
    assert server.open_connections() == 1
    # WHEN the app closes the server and it is deleted
    server.close()
    shiboken6.delete(server)
    qapp.processEvents()
    # THEN the connection was closed with it, and nothing called into a deleted socket
    assert "already deleted" not in capfd.readouterr().err
    client.abort()


def _hayai_capture(config: Path, *, user=None, forward_timeout_s: float = 15.0, wrap=()):
    """`hayai capture` in a child process (as `user`, under the `wrap` command), its forwarding
    limited to `forward_timeout_s`."""
    code = (
        f"import app.launcher; app.launcher.FORWARD_TIMEOUT_S = {forward_timeout_s}; "
        "from app.cli import main; raise SystemExit(main(['capture']))"
    )
    return subprocess.run(
        [*wrap, sys.executable, "-c", code],
        env=_env(config),
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        **({"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user else {}),
    )


def test_a_settings_folder_it_cannot_write_is_named_as_the_cause():
    import pwd

    from wayland_session import ensure_traversable, python_for_user, restore_modes

    if os.geteuid() != 0:
        pytest.skip("needs root, to run `hayai` as another user (root may write anywhere)")
    # GIVEN a settings folder the user may read but not write (root's, 0555)
    folder = Path(tempfile.mkdtemp(prefix="hayai-ro-"))
    config = folder / "cfg"
    config.mkdir(mode=0o555)
    folder.chmod(0o755)
    try:
        python_for_user()
        ensure_traversable(REPO)
        # WHEN that user starts `hayai capture`
        done = _hayai_capture(config, user=pwd.getpwnam("nobody"))
    finally:
        restore_modes()
        shutil.rmtree(folder)
    # THEN it ends at once with the folder and the OS's reason, not "another Hayai"
    assert done.returncode == 2, done.stderr
    assert f"cannot write to the settings folder {config} (Permission denied)" in done.stderr
    assert "HAYAI_CONFIG_DIR" in done.stderr and "another Hayai" not in done.stderr


def test_a_read_only_mount_is_named_as_the_cause(tmp_path):
    config = tmp_path / "cfg"
    config.mkdir(mode=0o700)
    remount = f'mount --bind {config} {config} && mount -o remount,bind,ro {config} && exec "$@"'
    wrap = ("unshare", "-m", "sh", "-c", remount, "sh")
    if subprocess.run([*wrap, "true"], capture_output=True).returncode != 0:
        pytest.skip("needs a private mount namespace (unshare -m, as root)")
    done = _hayai_capture(config, wrap=wrap)
    assert done.returncode == 2, done.stderr
    assert f"cannot write to the settings folder {config} (Read-only file system)" in done.stderr


def test_a_lock_held_by_a_silent_process_still_says_another_hayai(qapp, config, monkeypatch):
    from app.platform import single_instance

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(config))
    # GIVEN a live process (this one) holding the lock, with no socket to answer on
    lock = single_instance.lock_file()
    assert lock.tryLock(0)
    try:
        done = _hayai_capture(config, forward_timeout_s=0.5)
    finally:
        lock.unlock()
    assert done.returncode == 1
    assert "another Hayai holds" in done.stderr and "does not answer" in done.stderr


def test_a_command_whose_handler_outlasts_the_senders_wait_runs_once(qapp, config, monkeypatch):
    from app.platform import single_instance

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(config))
    # GIVEN a running app (this process: the lock and the socket) whose watch handler takes longer
    # than `hayai watch --stop` waits for its answer: until that `hayai` has given up and ended
    lock = single_instance.lock_file()
    assert lock.tryLock(0)
    server = single_instance.InstanceServer()
    server.listen()
    handled, got = [], []
    server.command.connect(got.append)
    code = (
        "import app.launcher; app.launcher.FORWARD_TIMEOUT_S = 3; "
        "from app.cli import main; raise SystemExit(main(['watch', '--stop']))"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], env=_env(config), cwd=REPO, stderr=subprocess.PIPE, text=True
    )

    def slow(line):
        handled.append(line)
        child.wait(timeout=60)  # a guard against a hang, not a measurement
        return single_instance.Answer("Stopped watching")

    server.answer = slow
    try:
        while child.poll() is None:
            qapp.processEvents()
            time.sleep(0.01)
        # ... then every connection it made is served: a sentinel after them is answered
        sentinel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sentinel.connect(single_instance.server_name())
        sentinel.sendall(b"capture\n")
        while "capture" not in got or server.open_connections():
            qapp.processEvents()
            time.sleep(0.01)
        sentinel.close()
    finally:
        server.close()
        lock.unlock()
    # THEN the command ran once, and `hayai` said that the app took it but had not answered
    assert handled == ["watch-stop"]
    err = child.stderr.read()
    assert child.returncode == 1 and single_instance.NOT_ANSWERED in err, err


def test_racing_starts_end_as_one_app(config):
    # GIVEN no app WHEN two `hayai capture` start at the same moment
    first = Primary(config, "capture")
    second = Primary(config, "capture")
    try:
        deadline = time.monotonic() + 90
        while (
            first.process.poll() is None
            and second.process.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        # THEN one of them forwarded and exited 0, the other runs the app and handled both captures
        exited, running = (first, second) if first.process.poll() is not None else (second, first)
        assert exited.process.returncode == 0, exited.process.stderr.read()
        assert running.process.poll() is None
        assert running.wait_for("COMMAND") == "COMMAND capture"
        assert running.wait_for("COMMAND") == "COMMAND capture"
    finally:
        first.stop()
        second.stop()


# --- the child: the real launcher with a stand-in recognizer ---------------------------------------

STARTED_AT = time.perf_counter()


def _child(mode: str) -> int:
    sys.path.insert(0, str(HERE.parent))  # appcore_fakes
    import argparse

    from appcore_fakes import FakeRecognizer

    import app.application as application
    import app.engines.worker as worker

    worker.default_factory = lambda **options: FakeRecognizer()

    def handle(self, command):  # print instead of opening a selection (no screens to grab here)
        print("COMMAND", command, flush=True)
        if mode == "dialog":  # a handler that runs an event loop, as a modal dialog's exec() does
            from PySide6.QtCore import QEventLoop, QTimer

            loop = QEventLoop()
            QTimer.singleShot(20, loop.quit)
            loop.exec()

    if mode != "answers":  # "answers": the app's own handler, which answers the watch commands
        application.Application.handle_command = handle
    original_start = application.Application.start

    def start(self):
        original_start(self)
        # the tray path must not import torch (it loads in the worker thread, after the tray shows)
        print(
            "STARTED", "torch" in sys.modules, f"{time.perf_counter() - STARTED_AT:.3f}", flush=True
        )

    application.Application.start = start
    from app.launcher import main

    args = argparse.Namespace(
        model=None,
        hotkey=None,
        no_tray=True,
        verbose=False,
        debug_dir=None,
        install_desktop_entry=False,
        command="capture" if mode == "capture" else None,
        repeat=False,
    )
    return main(args)


if __name__ == "__main__":
    raise SystemExit(_child(sys.argv[1]))
