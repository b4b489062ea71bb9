"""Wayland clients the tests run inside the headless Sway (as its user): `python wayland_clients.py ...`

pointer                 a wlr virtual pointer, kept until stdin closes: Sway's seat then has a
                        pointer, so `swaymsg seat seat0 cursor ...` reaches clients (headless
                        Sway has no input devices of its own); each line on stdin sends a
                        pointer frame (answered by FRAME)
keyboard                a wlr virtual keyboard (US layout), kept until stdin closes: Sway runs
                        its bindings for it as for a real one; each stdin line `key CODE 1|0
                        MODS` (an evdev code pressed or released, and the modifiers then held: a
                        virtual keyboard says them itself, here with the key) is answered DONE
image OUTPUT SEED       a window on OUTPUT painting seeded noise 1:1 in that output's physical
                        pixels, filling it (Sway tiles a lone window over the whole output);
                        prints READY once shown
"""

from __future__ import annotations

import random
import struct
import sys
import time

VIRTUAL_POINTER = "zwlr_virtual_pointer_manager_v1"
VIRTUAL_KEYBOARD = "zwp_virtual_keyboard_manager_v1"
US_KEYMAP = """xkb_keymap {
  xkb_keycodes { include "evdev+aliases(qwerty)" };
  xkb_types { include "complete" };
  xkb_compat { include "complete" };
  xkb_symbols { include "pc+us+inet(evdev)" };
};
"""


def noise(width: int, height: int, seed: int) -> bytes:
    """`width*height` RGB32 pixels (alpha byte 0xff) of seeded noise, as QImage Format_RGB32 bytes."""
    data = bytearray(random.Random(seed).randbytes(width * height * 4))
    data[3::4] = b"\xff" * (width * height)
    return bytes(data)


def pointer() -> int:
    from app.platform.wayland import Connection

    connection = Connection()
    globals_ = connection.registry()
    if VIRTUAL_POINTER not in globals_:
        print(f"no {VIRTUAL_POINTER}", flush=True)
        return 1
    name, version = globals_[VIRTUAL_POINTER]
    connection.bind(name, VIRTUAL_POINTER, min(version, 1), 4)
    connection.send(4, 0, struct.pack("<II", 0, 5))  # create_virtual_pointer(seat=null, id=5)
    connection.send(1, 0, struct.pack("<I", 6))  # sync: the pointer exists once this is done
    while True:
        object_id, opcode, _ = connection.event()
        if object_id == 6:
            break
    print("READY", flush=True)
    # Each line on stdin ends the seat's current pointer frame: Sway's `seat ... cursor set`
    # sends wl_pointer.motion without the wl_pointer.frame that makes clients act on it.
    callback = 7
    for line in sys.stdin:
        words = line.split()
        if words and words[0] == "motion":  # motion X Y WIDTH HEIGHT: absolute, in the layout
            x, y, width, height = (int(v) for v in words[1:5])
            millis = int(time.monotonic() * 1000) & 0xFFFFFFFF
            connection.send(5, 1, struct.pack("<IIIII", millis, x, y, width, height))
        connection.send(5, 4)  # zwlr_virtual_pointer_v1.frame
        connection.send(1, 0, struct.pack("<I", callback))  # wl_display.sync: it was handled
        while connection.event()[0] != callback:
            pass
        callback += 1
        print("FRAME", flush=True)
    return 0


def keyboard() -> int:
    import itertools
    import os
    import socket

    from app.platform.wayland import Connection

    connection = Connection()
    globals_ = connection.registry()
    if VIRTUAL_KEYBOARD not in globals_:
        print(f"no {VIRTUAL_KEYBOARD}", flush=True)
        return 1
    name, version = globals_["wl_seat"]
    connection.bind(name, "wl_seat", 1, 4)
    name, version = globals_[VIRTUAL_KEYBOARD]
    connection.bind(name, VIRTUAL_KEYBOARD, 1, 5)
    connection.send(5, 0, struct.pack("<II", 4, 6))  # create_virtual_keyboard(seat, id=6)
    keymap = US_KEYMAP.encode() + b"\0"
    fd = os.memfd_create("keymap")
    os.write(fd, keymap)
    header = struct.pack("<II", 6, (16 << 16) | 0)  # keymap(format, fd, size): fd out of band
    connection.sock.sendmsg(
        [header + struct.pack("<II", 1, len(keymap))],
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("<i", fd))],
    )
    os.close(fd)
    callback = 7
    for line in itertools.chain(["sync"], sys.stdin):
        words = line.split()
        millis = int(time.monotonic() * 1000) & 0xFFFFFFFF
        if words and words[0] == "key":
            # a keyboard's modifiers change with its key, before Sway answers anyone (wlroots
            # updates them as it handles the key): the two requests go in one write, so that Sway
            # reads them together
            key = struct.pack("<III", millis, int(words[1]), int(words[2]))
            mods = struct.pack("<IIII", int(words[3]), 0, 0, 0)
            connection.sock.sendall(
                struct.pack("<II", 6, (8 + len(key)) << 16 | 1) + key
                + struct.pack("<II", 6, (8 + len(mods)) << 16 | 2) + mods
            )  # fmt: skip
        connection.send(1, 0, struct.pack("<I", callback))  # wl_display.sync: it was handled
        while connection.event()[0] != callback:
            pass
        callback += 1
        print("DONE" if words != ["sync"] else "READY", flush=True)
    return 0


def image(output: str, seed: int) -> int:
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtWidgets import QApplication, QWidget

    app = QApplication(sys.argv[:1])
    app.setDesktopFileName("hayai-test-image")
    screens = {s.name(): s for s in QGuiApplication.screens()}
    screen = screens[output]

    class ImageWindow(QWidget):
        def __init__(self):
            super().__init__(None, Qt.WindowType.FramelessWindowHint)
            self.setWindowTitle(f"image {output}")
            self.image = None

        def paintEvent(self, event):
            dpr = self.devicePixelRatioF()
            w, h = round(self.width() * dpr), round(self.height() * dpr)
            if self.image is None or (self.image.width(), self.image.height()) != (w, h):
                self.image = QImage(noise(w, h, seed), w, h, w * 4, QImage.Format.Format_RGB32)
                self.image = self.image.copy()
                self.image.setDevicePixelRatio(dpr)  # one image pixel = one device pixel
                print("PAINT", w, h, dpr, flush=True)
            QPainter(self).drawImage(QPoint(0, 0), self.image)

    window = ImageWindow()
    window.winId()
    window.windowHandle().setScreen(screen)
    window.show()
    app.processEvents()
    print("READY", flush=True)
    return app.exec()


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "pointer":
        raise SystemExit(pointer())
    if mode == "keyboard":
        raise SystemExit(keyboard())
    raise SystemExit(image(sys.argv[2], int(sys.argv[3])))
