"""What the tray and the window that stands in for it (`--no-tray`) share: the same entries, set
the same way. Their entries are QActions in the menu and buttons in the window; both take
setText, setEnabled and setVisible alike, so one set of setters serves both."""

from __future__ import annotations

from PySide6.QtCore import Signal

from app.hotkey.combo import combo_label


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

    HOTKEY_GAP = "\t"  # between an entry's words and its hotkey (the menu's shortcut column)
    entries: dict

    def set_hotkeys(self, capture: str, rescan: str) -> None:
        for name, words, combo in (
            ("capture", "Capture region", capture),
            ("rescan", "Re-scan last region", rescan),
        ):
            gap = f"{self.HOTKEY_GAP}{combo_label(combo)}" if combo else ""
            self.entries[name].setText(words + gap)

    def set_rescan_enabled(self, enabled: bool) -> None:
        self.entries["rescan"].setEnabled(enabled)

    def set_watch_state(self, state: str) -> None:
        """ "watching", "paused" or "stopped": the pause/resume and stop entries follow it."""
        self.entries["watch_toggle"].setVisible(state != "stopped")
        self.entries["watch_stop"].setVisible(state != "stopped")
        self.entries["watch_toggle"].setText(
            "Resume watching" if state == "paused" else "Pause watching"
        )
