"""A pane of glass over every output while Hover to read's key is held, on wlroots Wayland.

Wayland tells a client where the pointer is only over its own surfaces, and which keys are held
only while it has the keyboard. So while the key is held (Sway told us it went down,
app/platform/sway.py), Hayai puts a fully transparent surface on the compositor's overlay layer
over each output (wlr-layer-shell: above every window, full-screen ones too, and no window moves
for it), taking the keyboard: the pointer's moves over it give its place on the screen, the
keyboard's modifiers tell when the key comes up, and any other key pressed meanwhile (typing)
ends the hold. On release the surfaces go, and the keyboard returns to the window that had it.

It speaks the Wayland wire protocol itself on its own connection (app/platform/wayland.py's
framing), one connection per hold on a thread of its own: nothing of it lives between holds, and
nothing runs while the key is up. Positions are the compositor's logical layout pixels, as Qt's
screen geometry is on Wayland.
"""

from __future__ import annotations

import logging
import os
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass

from app.platform.wayland import Connection, WaylandError, check_error, string

log = logging.getLogger(__name__)

LAYER_SHELL = "zwlr_layer_shell_v1"
XDG_OUTPUT = "zxdg_output_manager_v1"
NEEDED = ("wl_compositor", "wl_shm", "wl_seat", LAYER_SHELL, XDG_OUTPUT)

OVERLAY_LAYER = 3
ANCHOR_ALL = 1 | 2 | 4 | 8  # top, bottom, left, right: the whole output
KEYBOARD_EXCLUSIVE = 1
ARGB8888 = 0  # wl_shm's format; all-zero pixels are fully transparent
NAMESPACE = "hayai-hover"
TIMEOUT_S = 1.0  # the compositor answers a mapping in milliseconds: the GUI thread waits no longer

# xkb's real modifiers, in the order every keymap names them (Shift, Lock, Control, Mod1, ...)
MODIFIER_MASKS = {"shift": 1 << 0, "ctrl": 1 << 2, "alt": 1 << 3, "cmd": 1 << 6}


@dataclass
class _Pane:
    output: int  # the wl_output's object id
    x: int = 0  # its logical place in the layout (xdg-output)
    y: int = 0
    surface: int = 0
    layer: int = 0


class Glass:
    """`show()` maps the panes and listens on a thread; `hide()` takes them away (safe twice).

    The callbacks run on the glass's thread: `on_pointer(x, y)` (layout logical px, floats) as
    the pointer enters or moves, `on_modifiers(mask)` with the held modifiers (MODIFIER_MASKS)
    once the glass has the keyboard and at each change, `on_key()` when any key goes down,
    `on_left()` when the keyboard went elsewhere (a lock screen), `on_ended(error)` when the
    compositor ended the connection (never after `hide()`)."""

    def __init__(
        self,
        on_pointer: Callable[[float, float], None],
        on_modifiers: Callable[[int], None],
        on_key: Callable[[], None],
        on_left: Callable[[], None],
        on_ended: Callable[[str], None],
    ):
        self.on_pointer = on_pointer
        self.on_modifiers = on_modifiers
        self.on_key = on_key
        self.on_left = on_left
        self.on_ended = on_ended
        self._connection: Connection | None = None
        self._thread: threading.Thread | None = None
        self._hiding = False

    def show(self) -> None:
        """Connect and map the panes (raises WaylandError when the compositor lacks a protocol or
        refuses), then listen on a thread until `hide()`."""
        self.hide()
        self._hiding = False
        connection = Connection(timeout_s=TIMEOUT_S)
        try:
            panes, ids = _map_panes(connection)
        except BaseException:
            connection.close()
            raise
        connection.sock.settimeout(None)  # from now on it waits for the user's moves
        self._connection = connection
        self._thread = threading.Thread(
            target=self._listen, args=(connection, panes, ids), name="hayai-glass", daemon=True
        )
        self._thread.start()

    def hide(self) -> None:
        connection, self._connection = self._connection, None
        thread, self._thread = self._thread, None
        if connection is None:
            return
        self._hiding = True
        try:
            connection.sock.shutdown(socket.SHUT_RDWR)  # the surfaces go with the connection
        except OSError:
            pass
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2)
        connection.close()

    def _listen(self, connection: Connection, panes: dict[int, _Pane], ids: dict[str, int]) -> None:
        try:
            _events(connection, panes, ids, self)
            error = "the compositor closed the connection"
        except Exception as exc:  # the compositor went away or refused: said, the hold ends
            error = str(exc) or type(exc).__name__
        if self._hiding:
            return
        log.warning("hover: the glass over the screen failed: %s", error)
        try:
            self.on_ended(error)
        except Exception:
            log.exception("hover: the glass's end was not handled")


def offered(globals_: frozenset[str]) -> list[str]:
    """What of NEEDED the compositor lacks (none on Sway, Hyprland, river, KDE's KWin)."""
    return [name for name in NEEDED if name not in globals_]


class _Ids:
    def __init__(self) -> None:
        self.next = (
            3  # after Connection.globals' registry and callback; a client's ids may not skip one
        )

    def new(self) -> int:
        self.next += 1
        return self.next


def _map_panes(connection: Connection) -> tuple[dict[int, _Pane], dict[str, int]]:
    """Bind what the glass needs, learn each output's place, and map one transparent pane on
    each (acked and drawn). Returns {pane surface id: pane} and the bound objects' ids."""
    new = _Ids()
    send = connection.send
    globals_ = connection.globals()
    names = {interface: (name, version) for name, interface, version in globals_}
    missing = [n for n in NEEDED if n not in names]
    if missing:
        raise WaylandError(f"the compositor does not offer {', '.join(missing)}")
    ids: dict[str, int] = {}
    for interface, version in (
        ("wl_compositor", 4), ("wl_shm", 1), ("wl_seat", 5), (LAYER_SHELL, 1), (XDG_OUTPUT, 2)
    ):  # fmt: skip
        ids[interface] = new.new()
        name, offered_version = names[interface]
        connection.bind(name, interface, min(version, offered_version), ids[interface])
    by_xdg: dict[int, _Pane] = {}
    for name, interface, version in globals_:
        if interface == "wl_output":
            pane = _Pane(new.new())
            connection.bind(name, "wl_output", min(version, 2), pane.output)
            xdg = new.new()
            send(ids[XDG_OUTPUT], 1, struct.pack("<II", xdg, pane.output))  # get_xdg_output
            by_xdg[xdg] = pane
    done = new.new()
    send(1, 0, struct.pack("<I", done))
    capabilities = [0]

    def on_output(oid: int, opcode: int, payload: bytes) -> None:
        if oid in by_xdg and opcode == 0:  # zxdg_output_v1.logical_position
            by_xdg[oid].x, by_xdg[oid].y = struct.unpack_from("<ii", payload)
        elif oid == ids["wl_seat"] and opcode == 0:  # wl_seat.capabilities
            capabilities[0] = struct.unpack_from("<I", payload)[0]

    _until(connection, done, on_output)
    if not by_xdg:
        raise WaylandError("the compositor shows no output")
    if not capabilities[0] & 1:
        raise WaylandError("the seat has no pointer")
    ids["pointer"] = new.new()
    send(ids["wl_seat"], 0, struct.pack("<I", ids["pointer"]))  # get_pointer
    if capabilities[0] & 2:  # a keyboard: the key's release is heard (else only hide() ends it)
        ids["keyboard"] = new.new()
        send(ids["wl_seat"], 1, struct.pack("<I", ids["keyboard"]))  # get_keyboard
    return _lay(connection, ids, new, list(by_xdg.values())), ids


def _lay(
    connection: Connection, ids: dict[str, int], new: _Ids, outputs: list[_Pane]
) -> dict[int, _Pane]:
    """One transparent overlay surface on each output, sized by the compositor and shown."""
    send = connection.send
    panes: dict[int, _Pane] = {}
    for pane in outputs:
        pane.surface = new.new()
        send(ids["wl_compositor"], 0, struct.pack("<I", pane.surface))  # create_surface
        pane.layer = new.new()
        send(
            ids[LAYER_SHELL],
            0,
            struct.pack("<IIII", pane.layer, pane.surface, pane.output, OVERLAY_LAYER)
            + string(NAMESPACE),
        )  # get_layer_surface
        send(pane.layer, 1, struct.pack("<I", ANCHOR_ALL))  # set_anchor
        send(pane.layer, 2, struct.pack("<i", -1))  # set_exclusive_zone: over panels too
        send(pane.layer, 4, struct.pack("<I", KEYBOARD_EXCLUSIVE))  # set_keyboard_interactivity
        send(pane.surface, 6)  # commit: the compositor answers with the pane's size
        panes[pane.surface] = pane
    layers = {pane.layer: pane for pane in panes.values()}
    sizes: dict[int, tuple[int, int, int]] = {}

    def on_configure(oid: int, opcode: int, payload: bytes) -> None:
        if oid in layers and opcode == 0:  # zwlr_layer_surface_v1.configure(serial, w, h)
            sizes[oid] = struct.unpack_from("<III", payload)
        elif oid in layers and opcode == 1:
            raise WaylandError("the compositor closed the glass at once")

    done = new.new()
    send(1, 0, struct.pack("<I", done))
    _until(connection, done, on_configure)
    for layer, pane in layers.items():
        if layer not in sizes:
            raise WaylandError("the compositor did not size the glass")
        serial, width, height = sizes[layer]
        send(layer, 6, struct.pack("<I", serial))  # ack_configure
        buffer = _transparent_buffer(connection, ids["wl_shm"], new, max(1, width), max(1, height))
        send(pane.surface, 1, struct.pack("<Iii", buffer, 0, 0))  # attach
        send(pane.surface, 2, struct.pack("<iiii", 0, 0, width, height))  # damage
        send(pane.surface, 6)  # commit: shown
    return panes


def _transparent_buffer(
    connection: Connection, shm: int, new: _Ids, width: int, height: int
) -> int:
    """A wl_buffer of `width`×`height` transparent pixels (a sparse memfd: zeros cost nothing)."""
    size = width * height * 4
    fd = os.memfd_create("hayai-glass", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, size)
        pool, buffer = new.new(), new.new()
        header = struct.pack("<II", shm, ((8 + 8) << 16) | 0)  # wl_shm.create_pool(id, fd, size)
        connection.sock.sendmsg(
            [header + struct.pack("<Ii", pool, size)],
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("<i", fd))],
        )
    finally:
        os.close(fd)  # the compositor holds its own copy
    connection.send(pool, 0, struct.pack("<IiiiiI", buffer, 0, width, height, width * 4, ARGB8888))
    connection.send(pool, 1)  # the pool may go; the buffer keeps the memory
    return buffer


def _until(connection: Connection, callback: int, handle) -> None:
    """Read events, each to `handle`, until wl_callback `callback` is done."""
    while True:
        oid, opcode, payload = connection.event()
        if oid == callback and opcode == 0:
            return
        check_error(oid, opcode, payload)
        handle(oid, opcode, payload)


def _events(
    connection: Connection, panes: dict[int, _Pane], ids: dict[str, int], glass: Glass
) -> None:
    """The hold's events, until the connection is shut."""
    pointer, keyboard = ids["pointer"], ids.get("keyboard", 0)
    layers = {pane.layer: pane for pane in panes.values()}
    under: _Pane | None = None
    while True:
        try:
            oid, opcode, payload = connection.event()
        except WaylandError:
            if glass._hiding:
                return
            raise
        check_error(oid, opcode, payload)
        if oid == pointer and opcode == 0:  # enter(serial, surface, sx, sy)
            _, surface, sx, sy = struct.unpack_from("<IIii", payload)
            under = panes.get(surface)
            if under is not None:
                glass.on_pointer(under.x + sx / 256, under.y + sy / 256)
        elif oid == pointer and opcode == 1:  # leave
            under = None
        elif oid == pointer and opcode == 2 and under is not None:  # motion(time, sx, sy)
            _, sx, sy = struct.unpack_from("<Iii", payload)
            glass.on_pointer(under.x + sx / 256, under.y + sy / 256)
        elif oid == keyboard and opcode == 2:  # leave: another surface has the keyboard now
            glass.on_left()
        elif oid == keyboard and opcode == 3:  # key(serial, time, key, state)
            if struct.unpack_from("<IIII", payload)[3] == 1:  # pressed
                glass.on_key()
        elif (
            oid == keyboard and opcode == 4
        ):  # modifiers(serial, depressed, latched, locked, group)
            glass.on_modifiers(struct.unpack_from("<II", payload)[1])
        elif oid in layers and opcode == 0:  # configure again (an output changed): acked
            connection.send(oid, 6, payload[:4])
        elif oid in layers and opcode == 1:  # closed: the output went
            raise WaylandError("the compositor took the glass away")
