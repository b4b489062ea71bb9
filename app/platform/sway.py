"""Sway's IPC socket ($SWAYSOCK, i3's protocol): what Hover to read and our windows need of Sway.

- `bind` / `BindingListener`: Hayai adds a key binding `nop hayai hover` to the running Sway
  (`config_lines`, what a config file would hold), and Sway, when it runs it, tells its IPC
  subscribers at once, without starting a process: Hover to read's key on Sway
  (app/hotkey/hold_sway.py) starts there. A reload of Sway's config drops bindings added at run
  time: the listener hears the reload, and the binding is added again.
- `follow(window)` / `place(title, x, y)`: Wayland apps cannot place their own windows; Sway
  moves a floating one where asked, so the popup dictionary stands beside the text as on X11
  (and Hayai knows where its windows are: Hover to read paints them over in its grabs).

Messages: b"i3-ipc", payload length and type (little-endian u32), a JSON payload.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import struct
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

MAGIC = b"i3-ipc"
RUN_COMMAND, SUBSCRIBE = 0, 2
WORKSPACE_EVENT, BINDING_EVENT = 0x80000000, 0x80000005
HOVER_COMMAND = "nop hayai hover"  # what the binding runs: nothing, but Sway tells us
POPUP_TITLE = "Hayai dictionary"  # the popup dictionary's title, which Sway's criteria match
TIMEOUT_S = 1.0  # Sway answers in a millisecond; a Sway that does not is not waited for long
# Sway has a window a frame or two after Qt shows it; the GUI thread waits on Sway briefly
PLACE_TRIES, PLACE_RETRY_MS, PLACE_TIMEOUT_S = 12, 25, 0.1


class SwayError(OSError):
    """No Sway to talk to, or it refused."""


def available() -> bool:
    return bool(os.environ.get("SWAYSOCK"))


class Ipc:
    """One connection: `request(type, payload)` answers with the reply's JSON."""

    def __init__(self, timeout_s: float | None = TIMEOUT_S):
        path = os.environ.get("SWAYSOCK")
        if not path:
            raise SwayError("SWAYSOCK is not set: this is not a Sway session")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        try:
            self.sock.connect(path)
        except OSError as error:
            self.sock.close()
            raise SwayError(f"cannot reach Sway at {path}: {error}") from error

    def request(self, kind: int, payload: str = ""):
        data = payload.encode()
        self.sock.sendall(MAGIC + struct.pack("<II", len(data), kind) + data)
        _, reply = self.message()
        return reply

    def message(self) -> tuple[int, object]:
        header = self._exactly(len(MAGIC) + 8)
        if header[: len(MAGIC)] != MAGIC:
            raise SwayError("not Sway's IPC on SWAYSOCK")
        length, kind = struct.unpack_from("<II", header, len(MAGIC))
        return kind, json.loads(self._exactly(length) or b"null")

    def _exactly(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                raise SwayError("Sway closed its IPC connection")
            data += chunk
        return data

    def close(self) -> None:
        self.sock.close()


def run(command: str, timeout_s: float = TIMEOUT_S) -> list[dict]:
    """Run one Sway command; its results ([{"success": bool, "error": ...}])."""
    ipc = Ipc(timeout_s)
    try:
        reply = ipc.request(RUN_COMMAND, command)
    finally:
        ipc.close()
    return reply if isinstance(reply, list) else []


def place(title: str, x: int, y: int) -> bool:
    """Move our floating window titled `title` so that it stands at (`x`, `y`) of the layout
    (logical px). False when Sway has no such window (not mapped yet) or is not there."""
    criteria = f'[pid={os.getpid()} title="^{re.escape(title)}$"]'
    try:
        results = run(f"{criteria} move absolute position {x} {y}", PLACE_TIMEOUT_S)
    except (OSError, ValueError) as exc:
        log.debug("sway: cannot place %r: %s", title, exc)
        return False
    return bool(results) and all(r.get("success") for r in results)


def follow(window) -> None:
    """On Sway, with Qt on Wayland: move the top-level `window` just shown (a floating one, as
    the config line `for_window [app_id="^hayai$"] floating enable` makes ours) to where Qt
    placed it. Sway has the window once Qt has drawn its first frame, so it is tried again a few
    times; elsewhere nothing happens (X11 places windows itself)."""
    from PySide6.QtGui import QGuiApplication

    if available() and QGuiApplication.platformName().startswith("wayland"):
        _place_soon(window, PLACE_TRIES)


def _place_soon(window, tries: int) -> None:
    from PySide6.QtCore import QTimer

    if not window.isVisible():
        return
    g = window.frameGeometry()
    if place(window.windowTitle(), g.x(), g.y()) or tries <= 1:
        return
    QTimer.singleShot(PLACE_RETRY_MS, window, lambda: _place_soon(window, tries - 1))


def config_lines(key_symbol: str) -> list[str]:
    """What Hover to read needs in Sway's config: the binding that tells Hayai the key went down
    (`--no-repeat`: held, it runs once); our windows floating (a tiled popup would squeeze the
    program being read, and only a floating one can be placed); and the popup dictionary kept
    from taking the keyboard from that program when it appears."""
    return [
        f"bindsym --no-repeat {key_symbol} {HOVER_COMMAND}",
        'for_window [app_id="^hayai$"] floating enable',
        f'no_focus [app_id="^hayai$" title="^{POPUP_TITLE}$"]',
    ]


def bind(key_symbol: str) -> None:
    """Add Hover to read's lines (`config_lines`) to the running Sway; SwayError when refused."""
    for line in config_lines(key_symbol):
        for result in run(line) or [{"success": False, "error": "no answer"}]:
            if not result.get("success"):
                raise SwayError(f"Sway refused `{line}`: {result.get('error', '')}")


def unbind(key_symbol: str) -> None:
    """Take the binding `bind` added away again (quietly: Sway may have gone, or reloaded)."""
    try:
        run(f"unbindsym --no-repeat {key_symbol}")
    except (OSError, ValueError) as exc:
        log.debug("sway: unbind %s: %s", key_symbol, exc)


class BindingListener:
    """Calls `on_hover()` on its own thread each time Sway runs `nop hayai hover`, and
    `on_reload()` after Sway reloaded its config, until `stop()`; `on_ended(error)` once when
    Sway's connection ends ("" after `stop()`)."""

    def __init__(
        self,
        on_hover: Callable[[], None],
        on_reload: Callable[[], None],
        on_ended: Callable[[str], None],
    ):
        self.on_hover = on_hover
        self.on_reload = on_reload
        self.on_ended = on_ended
        self._ipc: Ipc | None = None
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        ipc = Ipc()
        try:
            reply = ipc.request(SUBSCRIBE, json.dumps(["binding", "workspace"]))
        except BaseException:
            ipc.close()
            raise
        if not (isinstance(reply, dict) and reply.get("success")):
            ipc.close()
            raise SwayError(f"Sway refused to tell Hayai of its bindings: {reply}")
        ipc.sock.settimeout(None)  # it waits for the user's key
        self._ipc = ipc
        self._thread = threading.Thread(target=self._listen, name="hayai-sway", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        ipc, self._ipc = self._ipc, None
        if ipc is None:
            return
        self._stopping = True
        try:
            ipc.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        ipc.close()

    @staticmethod
    def _call(callback: Callable[[], None]) -> None:
        try:
            callback()
        except Exception:  # the next event is still heard
            log.exception("sway: an event was not handled")

    def _listen(self) -> None:
        ipc, error = self._ipc, ""
        try:
            while ipc is not None:
                kind, event = ipc.message()
                event = event if isinstance(event, dict) else {}
                command = event.get("binding", {}).get("command", "").strip()
                if kind == BINDING_EVENT and command == HOVER_COMMAND:
                    self._call(self.on_hover)
                elif kind == WORKSPACE_EVENT and event.get("change") == "reload":
                    self._call(self.on_reload)
        except Exception as exc:  # Sway went (a reload keeps the socket; an exit does not)
            if not self._stopping:
                log.warning("sway: its bindings are no longer heard: %s", exc)
                error = str(exc) or type(exc).__name__
        try:
            self.on_ended(error)
        except Exception:
            log.exception("sway: the end of its bindings was not handled")
