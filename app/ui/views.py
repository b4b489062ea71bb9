"""What the tray and the window that stands in for it (`--no-tray`) share: the same entries, set
the same way. Their entries are QActions in the menu and buttons in the window; both take
setText, setEnabled and setVisible alike, so one set of setters serves both."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QApplication, QWidget

from app.hotkey.combo import combo_label
from app.ui.rich_text import tooltip

# Qt's own widget for the tray icon on X11 (embedded in the desktop's tray, XEMBED): part of the
# panel, not a window of ours; hiding it takes the icon out of the tray for good.
TRAY_ICON_WIDGET = "QSystemTrayIconSys"


def own_windows(exclude=()) -> list[QWidget]:
    """Every visible top-level window of this app (menus and toasts too), but `exclude`."""
    return [
        w
        for w in QApplication.topLevelWidgets()
        if w.isVisible() and w not in exclude and w.metaObject().className() != TRAY_ICON_WIDGET
    ]


class EntryView:
    """Mixed into Tray and MainWindow (before their Qt base, which makes the signals real); each
    fills `self.entries` (name → QAction or button). The views only emit; the application wires
    both the same way."""

    capture_requested = Signal()
    page_requested = Signal()  # "Read the whole screen": every text block of the screen read
    rescan_requested = Signal()
    history_requested = Signal()
    settings_requested = Signal()
    model_requested = Signal()
    about_requested = Signal()
    quit_requested = Signal()
    log_requested = Signal()
    watch_requested = Signal()
    watch_toggle_requested = Signal()
    watch_stop_requested = Signal()
    hover_toggled = Signal(bool)  # the user switched "Hover to read" on or off

    HOTKEY_GAP = "\t"  # between an entry's words and its hotkey (the menu's shortcut column)
    entries: dict

    def set_hotkeys(self, capture: str, rescan: str) -> None:
        for name, words, combo in (
            ("capture", "Capture region", capture),
            ("rescan", "Re-scan last region", rescan),
        ):
            gap = f"{self.HOTKEY_GAP}{combo_label(combo)}" if combo else ""
            self.entries[name].setText(words + gap)

    def set_hover(self, on: bool, key: str, problem: str = "") -> None:
        """The "Hover to read" entry: checked while on, with the key to hold; its tooltip says
        why it cannot work here (`problem`, "" when it can)."""
        entry = self.entries["hover"]
        entry.setChecked(on)
        entry.setText(f"Hover to read{self.HOTKEY_GAP}hold {key}")
        entry.setToolTip(tooltip(problem) if problem else "")

    def set_rescan_enabled(self, enabled: bool) -> None:
        self.entries["rescan"].setEnabled(enabled)

    def set_watch_state(self, state: str) -> None:
        """ "watching", "paused" or "stopped": the pause/resume and stop entries follow it."""
        self.entries["watch_toggle"].setVisible(state != "stopped")
        self.entries["watch_stop"].setVisible(state != "stopped")
        self.entries["watch_toggle"].setText(
            "Resume watching" if state == "paused" else "Pause watching"
        )
        if state == "stopped":
            self.set_watch_note("")

    def set_watch_note(self, note: str) -> None:
        """Why the watched region is not read now ("Covered by the Hayai window"), or ""."""
        self._set_line(self.entries["watch_note"], note)

    def set_hotkey_problem(self, problem: str) -> None:
        """Why a hotkey does not work as set, or "": in the entries, not only in a passing toast."""
        self._set_line(self.entries["hotkey_problem"], problem)

    def _set_line(self, line, text: str) -> None:
        """A status line among the entries ("" hides it); the tray elides long ones."""
        line.setText(text)
        line.setToolTip(tooltip(text) if text else "")  # the user's own typing may be in it
        line.setVisible(bool(text))

    def set_folder_waiting(self, count: int) -> None:
        """Images of the watched folder not read yet: a line that shows only while there are any."""
        entry = self.entries["folder_waiting"]
        entry.setText(f"Watched folder: {count} image{'s' if count != 1 else ''} to read")
        entry.setVisible(count > 0)
