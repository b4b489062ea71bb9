"""One running app per user (and per HAYAI_CONFIG_DIR): later starts forward a command to it.

A lock file decides who is the primary: the process holding `instance.lock` runs the app and
owns the local socket; everyone else connects and sends one line ("capture" or "rescan"), waits
for "ok" and exits. Because the primary holds the lock for its whole life, a socket file left by
a crashed app can be removed safely (QLockFile sees the dead PID and treats its lock as stale).
The socket is created for the current user only; lines that are not known commands are ignored.
The watch commands are answered with what the app did ("ok Watching 780×100 at 1060,730", "ok
Nothing is being watched", "error …"), which `hayai watch` prints: their handler runs before the
answer (`InstanceServer.answer`; it only sets state and timers, never an event loop, and what may
take long, a capture, it starts after answering). The others are answered "ok" first and handed on
after (`command`).

A command runs at most once, whatever the timing: the sender sends it again only when the app
closed the connection without an answer, which it does only before the line arrived (a silent
connection, a flood); once the line is in, the connection is the command's until answered. A sender
whose answer is late (a busy app) does not send again: it waits (`hayai` up to FORWARD_TIMEOUT_S),
then says that the app took the command but has not answered (`NOT_ANSWERED`).

The listener defends itself: a connection that sends no command within IDLE_TIMEOUT_MS is dropped,
at most MAX_CONNECTIONS are open at once (the oldest silent one is closed for a newcomer), and a
watchdog listens again when the listener stopped (Qt closes it when accept() fails, e.g. out of file handles, and removes
`instance.sock`) or the socket file was deleted.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, QTimer, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from app.platform.private_files import StateDirError
from app.settings import config_dir

log = logging.getLogger(__name__)

# a line's first word
COMMANDS = frozenset({"capture", "rescan", "watch", "watch-stop", "watch-toggle"})
ANSWERED = frozenset({"watch", "watch-stop", "watch-toggle"})  # answered with what the app did
_MAX_LINE = 64  # a command is one short line ("watch region=X,Y,W,H"); anything longer is not ours
IDLE_TIMEOUT_MS = 2000  # `hayai capture` sends its line at once; a silent connection is not ours
MAX_CONNECTIONS = 16  # open at once; real clients come one per key press
WATCHDOG_MS = 1000
SEND_TIMEOUT_MS = 2000  # how long `send` waits to connect, and by default for the answer
NOT_ANSWERED = (
    "the running Hayai took the command but has not answered; if it hangs, end it and start again"
)


def server_name() -> str:
    """The socket for this user and config dir: a file in the config dir, or a short name in /tmp.

    Unix socket paths are limited to ~108 bytes, and Windows pipes take plain names only.
    """
    folder = config_dir()
    path = folder / "instance.sock"
    if sys.platform != "win32" and len(str(path).encode()) < 100:
        return str(path)
    try:
        user = getpass.getuser()
    except Exception:  # no user name in some containers
        user = "user"
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:12]
    return f"hayai-{user}-{digest}"


def lock_file() -> QLockFile:
    lock = QLockFile(str(config_dir() / "instance.lock"))
    lock.setStaleLockTime(0)  # held for the app's lifetime; only a dead owner makes it stale
    return lock


def take_lock(lock: QLockFile) -> bool:
    """True once this process holds `lock`, False while another process does. StateDirError when
    no lock can be made there at all (a read-only folder, someone else's): no other Hayai is the
    reason then, and waiting for one would only end in the wrong message."""
    if lock.tryLock(0):
        return True
    if lock.error() == QLockFile.LockError.LockFailedError:
        return False
    folder = Path(lock.fileName()).parent
    probe = folder / f".write-test-{os.getpid()}"
    try:  # what Qt does (create, write a line), for the system's words (Qt says only "permission")
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, f"{os.getpid()}\n".encode())
        finally:
            os.close(fd)
            os.unlink(probe)
        reason = f"Qt could not create {Path(lock.fileName()).name} there"
    except OSError as exc:
        reason = exc.strerror or str(exc)
    raise StateDirError(
        f"cannot write to the settings folder {folder} ({reason}); Hayai keeps its settings and "
        "its single-instance lock there: make the folder writable for your user, or set "
        "HAYAI_CONFIG_DIR to a folder you can write"
    )


@dataclass(frozen=True)
class Answer:
    """What the running app says to a command: what it did ("" for nothing to say), or (`ok`
    False) why it could not."""

    text: str = ""
    ok: bool = True

    def line(self) -> bytes:
        text = " ".join(self.text.split())  # one line
        return f"{'ok' if self.ok else 'error'}{' ' if text else ''}{text}\n".encode()


def send(
    command: str, timeout_ms: int = SEND_TIMEOUT_MS, answer_ms: int | None = None
) -> Answer | None:
    """Deliver one command to the running app (connecting within `timeout_ms`) and wait for its
    answer (`answer_ms`, else `timeout_ms`). None when it was not delivered (no app listening, or
    the connection closed before the line was taken): it may be sent again. An app that took the
    line but has not answered in time will still run it: the answer is then an error saying so
    (`NOT_ANSWERED`), never a reason to send it again."""
    socket = QLocalSocket()
    socket.connectToServer(server_name())
    if not socket.waitForConnected(timeout_ms):
        return None
    socket.write(f"{command}\n".encode())
    socket.flush()
    deadline = time.monotonic() + (timeout_ms if answer_ms is None else answer_ms) / 1000
    reply = b""
    connected = QLocalSocket.LocalSocketState.ConnectedState
    while b"\n" not in reply and time.monotonic() < deadline:
        if not socket.waitForReadyRead(100) and socket.state() != connected:
            break
        reply += bytes(socket.readAll().data())
    reply += bytes(socket.readAll().data())  # what came with the close
    taken = socket.state() == connected or (reply and b"\n" not in reply)
    socket.disconnectFromServer()
    status, _, text = reply.split(b"\n", 1)[0].decode("utf-8", "replace").partition(" ")
    if status in ("ok", "error"):
        return Answer(text, status == "ok")
    if taken:  # still open, or half answered: the app has the line and will run it
        return Answer(NOT_ANSWERED, ok=False)
    return None  # closed before the line was taken (or not ours): not run


class InstanceServer(QObject):
    """The primary's listening socket. Emits `command(str)` for each known command received, but
    for the ANSWERED ones, which `answer(line) -> Answer` runs before the answer is sent."""

    command = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.answer: Callable[[str], Answer | None] | None = None
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_connection)
        self.name = server_name()
        # oldest first; True once its line is in: then it is answered, never dropped for another
        self._open: dict[QLocalSocket, bool] = {}
        self._watchdog = QTimer(self)
        self._watchdog.setInterval(WATCHDOG_MS)
        self._watchdog.timeout.connect(self._check_listening)

    def listen(self) -> None:
        """Call only while holding the instance lock: a leftover socket then belongs to a dead app."""
        self._listen()
        self._watchdog.start()

    def _listen(self) -> None:
        if not self._server.listen(self.name):
            QLocalServer.removeServer(self.name)
            if not self._server.listen(self.name):
                raise OSError(f"cannot listen on {self.name}: {self._server.errorString()}")
        log.debug("single-instance socket %s", self._server.fullServerName())

    def _check_listening(self) -> None:
        """The watchdog: listen again when Qt stopped listening or the socket file is gone."""
        path = self._server.fullServerName()
        gone = path.startswith("/") and not os.path.exists(path)
        if self._server.isListening() and not gone:
            return
        log.warning("the single-instance socket stopped listening; listening again")
        self._server.close()
        try:
            self._listen()
        except OSError as exc:  # still out of file handles, say: the next tick tries again
            log.warning("%s", exc)

    def close(self) -> None:
        self._watchdog.stop()
        self._server.close()
        for socket in list(self._open):  # now: deleted with us, they would signal a dead wrapper
            socket.abort()
            self._forget(socket)

    def open_connections(self) -> int:
        return len(self._open)

    def _forget(self, socket: QLocalSocket) -> None:
        if socket in self._open:
            del self._open[socket]
            socket.deleteLater()

    def _answer(self, line: str) -> Answer:
        """What `answer` did with `line`; a handler that failed is logged and said so."""
        assert self.answer is not None  # only ANSWERED commands come here, once it is set
        try:
            return self.answer(line) or Answer()
        except Exception:
            log.exception("the command %r failed", line)
            return Answer(f"Hayai could not do {line!r}; its log says why (hayai -v)", ok=False)

    def _on_connection(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            # a flood: the oldest silent ones make way, handles bounded (one whose line is in is
            # the command's: its sender waits for the answer and must not send it again)
            silent = [s for s, taken in self._open.items() if not taken]
            while len(self._open) >= MAX_CONNECTIONS and silent:
                oldest = silent.pop(0)
                oldest.abort()
                self._forget(oldest)
            self._serve(socket)

    def _serve(self, socket: QLocalSocket) -> None:
        """Read one line from `socket`, answer it and close the connection, then hand a known
        command on. Nothing touches the socket after the command's handler: a handler that runs an
        event loop (a dialog) lets the closed socket be deleted meanwhile, and a call on it after
        that raised "Internal C++ object (QLocalSocket) already deleted"."""
        socket.setParent(self)
        self._open[socket] = False
        idle = QTimer(socket)
        idle.setSingleShot(True)

        def on_idle() -> None:
            socket.abort()
            self._forget(socket)

        idle.timeout.connect(on_idle)
        idle.start(IDLE_TIMEOUT_MS)
        buffer = bytearray()

        def on_ready() -> None:
            buffer.extend(bytes(socket.readAll().data()))
            if b"\n" not in buffer:
                if len(buffer) > _MAX_LINE:
                    socket.abort()
                return
            socket.readyRead.disconnect(on_ready)  # one line per connection, answered once
            idle.stop()  # the line is in: answered whatever the handler takes
            if socket in self._open:
                self._open[socket] = True
            line = bytes(buffer).split(b"\n", 1)[0].decode("ascii", "replace").strip()
            word = line.split(" ", 1)[0]
            known = word in COMMANDS
            answered = known and word in ANSWERED and self.answer is not None
            if not known:
                log.info(
                    "ignored an unknown message on the single-instance socket: %r",
                    line[:_MAX_LINE],
                )
            reply = (self._answer(line) if answered else Answer()).line() if known else b"unknown\n"
            socket.write(reply)
            socket.flush()
            socket.disconnectFromServer()  # deleted once the answer is out (disconnected)
            if known and not answered:
                self.command.emit(line)

        socket.readyRead.connect(on_ready)
        socket.disconnected.connect(lambda: self._forget(socket))
        if socket.bytesAvailable():
            on_ready()
