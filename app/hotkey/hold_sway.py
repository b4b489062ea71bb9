"""Hover to read's key on Sway: a binding tells us it went down, the glass hears it come up.

No Wayland client may hear keys meant for others, so while Hover to read is on, Hayai adds a
binding to the running Sway (app/platform/sway.py, `bind`; again after each reload of Sway's
config, and taken away when hover is turned off or Hayai quits):

    bindsym --no-repeat Shift_R nop hayai hover
    for_window [app_id="^hayai$"] floating enable
    no_focus [app_id="^hayai$" title="^Hayai dictionary$"]

Sway runs it (a `nop`: nothing starts) and tells Hayai over IPC; Hayai then lays its glass over the
outputs (app/platform/glass.py), which takes the keyboard: the key's modifier leaving the
keyboard's state is the release, any key pressed meanwhile is typing (`interrupted`), and the
pointer's moves over the glass are where it points. The right-hand modifier is bound because Sway
gives a bound key to the binding alone: programs no longer see it pressed by itself (the modifier
still works with other keys).
"""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QObject, QPoint, Qt, Signal

from app.hotkey.models import HotkeyError
from app.platform import glass as glass_module
from app.platform import sway

log = logging.getLogger(__name__)

SYMBOLS = {"shift": "Shift_R", "ctrl": "Control_R", "alt": "Alt_R", "cmd": "Super_R"}


def instructions(key: str) -> str:
    return (
        f"On Sway, Hover to read listens to {SYMBOLS[key]}: Hayai binds it in Sway while hover is "
        "on, so other programs no longer see it pressed by itself (with other keys it still works "
        "as a modifier). A key typed while it is held ends the hover and goes to no program."
    )


class SwayHeldKey(QObject):
    """As app/hotkey/hold.py's HeldKey (`pressed`, `released`, `interrupted`, `failed`, on the
    GUI thread), plus `pointer()`: where the pointer is over the glass while the key is held."""

    pressed = Signal()
    released = Signal()
    interrupted = Signal()
    failed = Signal(str)  # the key can no longer be heard, or a hold could not start: why
    _event = Signal(int, str)  # (hold, what) from the listener's and the glass's threads

    def __init__(self, key: str, parent: QObject | None = None):
        super().__init__(parent)
        self.key = key
        self.note = instructions(key)  # told when hover is turned on
        self.mask = glass_module.MODIFIER_MASKS[key]
        self.held = False
        self._hold = 0  # the hold under way (or the last): a glass's events carry its number
        self._glass: glass_module.Glass | None = None
        self._where: QPoint | None = None
        self._lock = threading.Lock()  # `_where`, written by the glass's thread
        self._listener: sway.BindingListener | None = None
        self._event.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def start(self) -> None:
        from app.platform.wayland import offered_globals

        self.stop()
        try:
            missing = glass_module.offered(offered_globals())
        except OSError as exc:
            raise HotkeyError(f"Hover to read cannot reach the compositor: {exc}") from None
        if missing:
            raise HotkeyError(
                f"Hover to read needs the compositor's {', '.join(missing)}, which this Sway does "
                "not offer."
            )
        symbol = SYMBOLS[self.key]
        listener = sway.BindingListener(
            on_hover=lambda: self._event.emit(0, "down"),
            on_reload=lambda: self._bind(symbol),
            on_ended=lambda error: self._event.emit(0, f"lost {error}"),
        )
        try:
            listener.start()
            sway.bind(symbol)
        except (OSError, ValueError) as exc:  # refused, gone, or not Sway's JSON
            listener.stop()
            sway.unbind(symbol)  # a line it took before refusing another
            raise HotkeyError(f"Hover to read cannot use Sway's bindings: {exc}") from None
        self._listener = listener
        log.info("hover to read: Sway runs `%s` on %s", sway.HOVER_COMMAND, symbol)

    @staticmethod
    def _bind(symbol: str) -> None:  # the listener's thread: Sway reloaded its config
        try:
            sway.bind(symbol)
        except (OSError, ValueError) as exc:
            log.warning("hover to read: Sway refused the binding again: %s", exc)

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()
            sway.unbind(SYMBOLS[self.key])
        self._end()

    def pointer(self) -> QPoint | None:
        """The pointer over the glass (layout logical px); None until it is known this hold."""
        with self._lock:
            return None if self._where is None else QPoint(self._where)

    def _glass_for(self, hold: int) -> glass_module.Glass:
        """The glass of hold number `hold`: what it tells is dropped once another hold began."""

        def at(x: float, y: float) -> None:
            with self._lock:
                if hold == self._hold:
                    self._where = QPoint(round(x), round(y))

        def modifiers(mask: int) -> None:
            if not mask & self.mask:
                self._event.emit(hold, "up")

        return glass_module.Glass(
            on_pointer=at,
            on_modifiers=modifiers,
            on_key=lambda: self._event.emit(hold, "typed"),
            on_left=lambda: self._event.emit(hold, "up"),  # a lock screen took the keyboard
            on_ended=lambda error: self._event.emit(hold, f"ended {error}"),
        )

    def _deliver(self, hold: int, event: str) -> None:
        what, _, rest = event.partition(" ")
        if what == "down" and self._listener is not None:
            self._begin()
        elif what == "lost" and rest:  # Sway went (not our `stop()`)
            self._listener = None
            self._end()
            self.failed.emit(f"Sway no longer tells Hayai of its key bindings ({rest}).")
        elif hold != self._hold or not self.held:
            return  # an earlier hold's glass
        elif what in ("up", "ended"):
            if rest:
                log.warning("hover to read: the glass went: %s", rest)
            self._end()
            self.released.emit()
        elif what == "typed":
            self._end()
            self.interrupted.emit()

    def _begin(self) -> None:
        if self.held:  # a release the glass never heard: this press starts the hold anew
            self._end()
            self.released.emit()
        with self._lock:
            self._hold += 1
            self._where = None
        glass = self._glass_for(self._hold)
        try:
            glass.show()
        except Exception as exc:  # WaylandError, or words of the compositor we cannot parse
            log.warning("hover to read: the glass cannot be shown: %s", exc)
            self.failed.emit(f"Hover to read cannot lay its glass over the screen: {exc}")
            return
        self._glass = glass
        self.held = True
        self.pressed.emit()

    def _end(self) -> None:
        self.held = False
        glass, self._glass = self._glass, None
        if glass is not None:
            glass.hide()
