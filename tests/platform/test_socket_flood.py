"""The control socket under abuse: idle connections time out, a flood keeps the handles bounded even
with a low file-handle limit, and the listener comes back when Qt closed it or its file was deleted."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# A primary's InstanceServer alone, in a child with a small file-handle limit; prints each command.
SERVER = r"""
import resource, sys
from PySide6.QtCore import QCoreApplication, QTimer
from app.platform.single_instance import InstanceServer
app = QCoreApplication([])
open_now = len(__import__("os").listdir("/proc/self/fd"))
resource.setrlimit(resource.RLIMIT_NOFILE, (open_now + 48, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
server = InstanceServer()
server.listen()
server.command.connect(lambda c: print("COMMAND", c, server.open_connections(), flush=True))
def report():
    print("OPEN", server.open_connections(), flush=True)
tick = QTimer(); tick.timeout.connect(report); tick.start(200)
print("LISTENING", flush=True)
app.exec()
"""


def _env(config: Path) -> dict[str, str]:
    return dict(
        os.environ, HAYAI_CONFIG_DIR=str(config), PYTHONPATH=str(REPO), QT_QPA_PLATFORM="offscreen"
    )


def _send(config: Path, command: str = "capture") -> int:
    code = f"from app.platform.single_instance import send; raise SystemExit(0 if send({command!r}) else 3)"
    return subprocess.run(
        [sys.executable, "-c", code], env=_env(config), cwd=REPO, timeout=60
    ).returncode


def _flood(path: str, n: int) -> list[socket.socket]:
    clients = []
    for _ in range(n):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.setblocking(False)
        try:
            c.connect(path)
        except (BlockingIOError, ConnectionRefusedError, OSError):
            pass  # the backlog is full: the kernel refuses; that is the flood
        clients.append(c)
    return clients


def _closed_by_server(c: socket.socket) -> bool:
    try:
        return c.recv(64) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _lines_until(process, prefix: str, timeout_s: float = 60) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if line.startswith(prefix):
            return line.strip()
    raise AssertionError(f"no {prefix!r} from the server; stderr: {process.stderr.read()[-2000:]}")


def test_a_flood_of_idle_connections_never_kills_the_listener(tmp_path):
    config = tmp_path / "cfg"
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER],
        env=_env(config),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _lines_until(server, "LISTENING")
        sock_path = str(config / "instance.sock")
        # WHEN 600 connections arrive and stay silent (far more than the child's ~48 spare handles)
        clients = []
        for _ in range(6):
            clients += _flood(sock_path, 100)
            time.sleep(0.2)
        # THEN the server keeps at most MAX_CONNECTIONS open, and a real command still gets through
        from app.platform.single_instance import MAX_CONNECTIONS

        counts = [int(_lines_until(server, "OPEN").split()[1]) for _ in range(3)]
        assert max(counts) <= MAX_CONNECTIONS
        assert _send(config) == 0
        assert _lines_until(server, "COMMAND").split()[1] == "capture"
        assert os.path.exists(sock_path)
        # AND the idle ones are closed by the server (its timeout), none left open
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(_closed_by_server(c) for c in clients):
            time.sleep(0.2)
        assert all(_closed_by_server(c) for c in clients)
        while int(_lines_until(server, "OPEN").split()[1]) != 0:
            pass
    finally:
        for c in locals().get("clients", []):
            c.close()
        server.terminate()
        server.wait(timeout=20)


@pytest.mark.gui
def test_the_listener_comes_back_when_qt_closes_it_or_the_file_is_deleted(
    qapp, tmp_path, monkeypatch
):
    from app.platform import single_instance

    config = tmp_path / "cfg"
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(config))
    server = single_instance.InstanceServer()
    server.listen()
    got: list[str] = []
    server.command.connect(got.append)
    path = Path(single_instance.server_name())
    try:
        for damage in (
            server._server.close,  # what Qt does itself when accept() fails (EMFILE)
            path.unlink,  # a cleaner removed the socket file
        ):
            damage()
            assert not path.exists()
            deadline = time.monotonic() + 20
            while not path.exists() and time.monotonic() < deadline:
                qapp.processEvents()
                time.sleep(0.02)
            assert path.exists() and server._server.isListening()
            client = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "from app.platform.single_instance import send; raise SystemExit(0 if send('rescan') else 3)",
                ],
                env=_env(config),
                cwd=REPO,
            )
            while client.poll() is None:
                qapp.processEvents()
                time.sleep(0.01)
            qapp.processEvents()
            assert client.returncode == 0
        assert got == ["rescan", "rescan"]
    finally:
        server.close()
