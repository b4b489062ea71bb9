"""The app's global hotkeys: the combos of the settings listened for, the last working ones kept
when new ones cannot be, the desktop's own shortcuts offered where global hotkeys cannot work
(GNOME on Wayland), and everything held while Settings records a combo."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.hotkey.combo import combo_label
from app.platform.backends import setting_override

if TYPE_CHECKING:
    from app.flows.windows import Windows
    from app.settings import Settings

log = logging.getLogger(__name__)


def combos(settings, stored: bool = False) -> dict[str, str]:
    """The hotkeys by command; `stored`: as saved, without this run's `--hotkey`."""
    value = settings.stored if stored else settings.get
    return {
        "capture": value("hotkey/capture"),
        "rescan": value("hotkey/rescan"),
        "watch-toggle": value("reading/watch"),
    }


class HotkeyControl(QObject):
    notice = Signal(str, str, bool)  # title, message, error: for the user
    command = Signal(str)  # a hotkey was pressed: its command ("capture", "rescan", …)
    hotkeys_changed = Signal(str, str)  # the capture and re-scan combos that work, for the views
    problem_changed = Signal(str)  # why a hotkey does not work as set, or ""

    def __init__(
        self, settings: Settings, windows: Windows, hotkeys=None, parent: QObject | None = None
    ):
        super().__init__(parent)
        self.settings = settings
        self.windows = windows  # asks whether to add the desktop's own shortcuts
        self.hotkeys = hotkeys  # GlobalHotkeys (made at start when not given)
        self.error: str | None = None
        self.recording = False  # Settings records a combo: hotkeys and commands wait
        self._working: dict[str, str] | None = None  # the last combos the backend took
        if hotkeys is not None:
            hotkeys.triggered.connect(self.command)

    def start(self) -> None:
        """Listen for the combos of the settings; when they cannot be (an invalid `--hotkey`, a
        combo the backend refuses), the last combos that worked are kept and the views say why."""
        settings = self.settings
        backend = setting_override(settings, "hotkey/backend")
        if self.hotkeys is None:
            try:
                from app.hotkey import GlobalHotkeys
            except ImportError as exc:
                self.error = f"hotkeys unavailable: {exc}"
                log.warning(self.error)
                self._show({}, "Global hotkeys are unavailable here.")
                return
            self.hotkeys = GlobalHotkeys(combos(settings), backend)
            self.hotkeys.triggered.connect(self.command)
        else:
            self.hotkeys.backend = backend
        wanted = combos(settings)
        error = self._listen(wanted)
        self.error = error and str(error)
        if error is None:
            self._working = wanted
            self._show(wanted, "")
            return
        offer = getattr(error, "offer", None)
        if offer is not None:  # e.g. GNOME: desktop shortcuts run these combos for us, if added
            self._show(wanted, "")
            self.offer_shortcuts(*offer)
            return
        kept = self._working
        if kept is None and wanted != combos(settings, stored=True):
            kept = combos(settings, stored=True)  # an invalid --hotkey: the saved combos
        if kept is not None and kept != wanted and self._listen(kept) is None:
            self._working = kept
            label = combo_label(kept["capture"]) if kept.get("capture") else ""
            # what still works first: the tray elides the rest (shown whole on hover)
            kept_words = f"Capture hotkey stays {label}" if label else "Hotkeys unchanged"
            problem = f"{kept_words}: {error}"
            self._show(kept, problem)
        else:
            problem = str(error)
            self._show({}, problem)
        self.notice.emit("Global hotkey unavailable", problem, True)

    def _listen(self, wanted: dict[str, str]):
        """Start the hotkeys with `wanted`; None, or the HotkeyError (or other error) it raised."""
        self.hotkeys.stop()  # so that set_combos does not start the old listener again first
        try:
            self.hotkeys.set_combos(wanted)
            self.hotkeys.start()
        except Exception as exc:  # HotkeyError: Wayland, permission, invalid combo; in GUI words
            return exc
        return None

    def _show(self, shown: dict[str, str], problem: str) -> None:
        """The entries show the combos that work, and what is wrong with the wanted ones."""
        self.hotkeys_changed.emit(shown.get("capture", ""), shown.get("rescan", ""))
        self.problem_changed.emit(problem)

    def offer_shortcuts(self, question: str, install) -> None:
        """The desktop's own shortcuts for Hayai (GNOME): added, left alone, or asked about, as the
        user answered before (`hotkey/desktop_shortcuts`). `install` returns what to say, or
        raises OSError."""
        answer = self.settings.get("hotkey/desktop_shortcuts")
        if answer == "leave":
            log.info("desktop shortcuts left alone (Settings: %s)", answer)
            return
        if answer == "add":  # updated in place each start: the combos may have changed
            try:
                log.info("%s", install())
            except OSError as exc:
                self.notice.emit("Keyboard shortcuts not added", str(exc), True)
            return
        self.windows.ask(
            "Hayai — keyboard shortcuts",
            question + " Hayai remembers your answer (Settings → Desktop shortcuts).",
            ("Add the shortcuts", "Don't add them"),
            lambda yes: self._shortcuts_answered(yes, install),
        )

    def _shortcuts_answered(self, yes: bool, install) -> None:
        self.settings.set("hotkey/desktop_shortcuts", "add" if yes else "leave")
        if not yes:
            return
        try:
            self.notice.emit("Keyboard shortcuts added", install(), False)
        except OSError as exc:
            self.notice.emit("Keyboard shortcuts not added", str(exc), True)

    def suspend(self, suspended: bool) -> None:
        """While Settings records a combo, its keys are a new combo, never a capture."""
        self.recording = suspended
        if self.hotkeys is not None:
            self.hotkeys.suspended = suspended

    def stop(self) -> None:
        if self.hotkeys is not None:
            self.hotkeys.stop()
