"""Which Wayland protocols the compositor offers, read straight off its socket (no library needed).

A few lines of the Wayland wire protocol: connect to `$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY`, ask
wl_display for its registry, sync, and collect the `global` events until the sync callback fires.
`offered_globals()` answers e.g. whether `zwlr_screencopy_manager_v1` (what grim needs) is there,
exactly, instead of guessing from the desktop's name. The result is cached per display.
"""

from __future__ import annotations

import os
import socket
import struct
from functools import lru_cache
from pathlib import Path

SCREENCOPY = "zwlr_screencopy_manager_v1"
DISPLAY_ID, REGISTRY_ID, CALLBACK_ID = 1, 2, 3


class WaylandError(OSError):
    """No compositor to talk to, or it answered with an error."""


def socket_path(display: str | None = None) -> Path:
    display = display if display is not None else os.environ.get("WAYLAND_DISPLAY", "")
    if not display:
        raise WaylandError("WAYLAND_DISPLAY is not set")
    if display.startswith("/"):
        return Path(display)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime:
        raise WaylandError("XDG_RUNTIME_DIR is not set")
    return Path(runtime) / display


def string(text: str) -> bytes:
    """A string argument as the wire protocol carries it."""
    data = text.encode() + b"\0"
    return struct.pack("<I", len(data)) + data + b"\0" * (-len(data) % 4)


def read_string(payload: bytes, offset: int) -> tuple[str, int]:
    """The string argument at `offset` of an event's payload, and the offset after it."""
    (length,) = struct.unpack_from("<I", payload, offset)
    offset += 4
    text = payload[offset : offset + length - 1].decode(errors="replace")
    return text, offset + length + (-length % 4)


def check_error(object_id: int, opcode: int, payload: bytes) -> None:
    """Raise the compositor's wl_display.error(object, code, message), where this event is one."""
    if object_id == DISPLAY_ID and opcode == 0:
        message, _ = read_string(payload, 8)
        raise WaylandError(f"compositor error: {message}")


class Connection:
    """A raw client connection: send requests, read events. Enough for the registry and tests."""

    def __init__(self, display: str | None = None, timeout_s: float = 5.0):
        path = socket_path(display)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        try:
            self.sock.connect(str(path))
        except OSError as error:
            self.sock.close()
            raise WaylandError(f"cannot connect to the compositor at {path}: {error}") from error
        self._buffer = b""

    def send(self, object_id: int, opcode: int, payload: bytes = b"") -> None:
        size = 8 + len(payload)
        self.sock.sendall(struct.pack("<II", object_id, (size << 16) | opcode) + payload)

    def event(self) -> tuple[int, int, bytes]:
        while True:
            if len(self._buffer) >= 8:
                object_id, word = struct.unpack_from("<II", self._buffer)
                size = word >> 16
                if size < 8:
                    raise WaylandError("malformed message from the compositor")
                if len(self._buffer) >= size:
                    payload = self._buffer[8:size]
                    self._buffer = self._buffer[size:]
                    return object_id, word & 0xFFFF, payload
            chunk = self.sock.recv(65536)
            if not chunk:
                raise WaylandError("the compositor closed the connection")
            self._buffer += chunk

    def globals(self) -> list[tuple[int, str, int]]:
        """Every global the compositor announces, (name, interface, version), one per output
        too; leaves the registry bound as object 2 (and used object 3: a client's next id is 4)."""
        self.send(DISPLAY_ID, 1, struct.pack("<I", REGISTRY_ID))  # wl_display.get_registry
        self.send(DISPLAY_ID, 0, struct.pack("<I", CALLBACK_ID))  # wl_display.sync
        found: list[tuple[int, str, int]] = []
        while True:
            object_id, opcode, payload = self.event()
            if object_id == REGISTRY_ID and opcode == 0:  # wl_registry.global
                (name,) = struct.unpack_from("<I", payload)
                interface, offset = read_string(payload, 4)
                (version,) = struct.unpack_from("<I", payload, offset)
                found.append((name, interface, version))
            elif object_id == CALLBACK_ID and opcode == 0:  # wl_callback.done
                return found
            check_error(object_id, opcode, payload)

    def registry(self) -> dict[str, tuple[int, int]]:
        """`{interface: (global name, version)}` (the last of several outputs); as `globals`."""
        return {interface: (name, version) for name, interface, version in self.globals()}

    def bind(self, name: int, interface: str, version: int, new_id: int) -> None:
        """wl_registry.bind with an untyped new_id (name, interface, version, id)."""
        payload = struct.pack("<I", name) + string(interface) + struct.pack("<II", version, new_id)
        self.send(REGISTRY_ID, 0, payload)

    def close(self) -> None:
        self.sock.close()


@lru_cache(maxsize=8)
def _globals_of(path: str) -> frozenset[str]:
    connection = Connection(path)
    try:
        return frozenset(connection.registry())
    finally:
        connection.close()


def offered_globals(display: str | None = None) -> frozenset[str]:
    """The interface names the compositor announces; WaylandError when there is no compositor."""
    try:
        return _globals_of(str(socket_path(display)))
    except OSError as error:
        raise WaylandError(str(error)) from error


def offers(interface: str) -> bool:
    try:
        return interface in offered_globals()
    except WaylandError:
        return False
