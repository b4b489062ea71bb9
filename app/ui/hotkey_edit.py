"""A hotkey field that records the keys pressed in it: shown the way the platform writes them
(`Ctrl+Alt+O`), stored in the settings' pynput syntax (`<ctrl>+<alt>+o`), checked as it is pressed.

Click the field (or tab into it), press the combination; Esc gives up and keeps the old one,
Backspace or the ✕ button turns the hotkey off.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QToolButton, QWidget

from app.hotkey.combo import LONE_KEYS, combo_label, validate_combo
from app.hotkey.models import HotkeyError
from app.ui.guard import qt_override

_K = Qt.Key
NAMED: dict[int, str] = {  # Qt.Key is an IntEnum: key_token looks up event.key() ints
    _K.Key_Print: "print_screen",
    _K.Key_Pause: "pause",
    _K.Key_ScrollLock: "scroll_lock",
    _K.Key_Insert: "insert",
    _K.Key_Menu: "menu",
    _K.Key_Backspace: "backspace",
    _K.Key_Delete: "delete",
    _K.Key_Down: "down",
    _K.Key_Up: "up",
    _K.Key_Left: "left",
    _K.Key_Right: "right",
    _K.Key_End: "end",
    _K.Key_Home: "home",
    _K.Key_PageUp: "page_up",
    _K.Key_PageDown: "page_down",
    _K.Key_Return: "enter",
    _K.Key_Enter: "enter",
    _K.Key_Escape: "esc",
    _K.Key_Space: "space",
    _K.Key_Tab: "tab",
}
MODIFIER_KEYS = {
    _K.Key_Control,
    _K.Key_Shift,
    _K.Key_Alt,
    _K.Key_AltGr,
    _K.Key_Meta,
    _K.Key_Super_L,
    _K.Key_Super_R,
}
PROMPT = "Press the keys…"


def _modifiers(mods: Qt.KeyboardModifier) -> list[str]:
    """Qt's modifiers → pynput names. On macOS Qt reports ⌘ as Control and ⌃ as Meta."""
    mac = sys.platform == "darwin"
    table = (
        (Qt.KeyboardModifier.ControlModifier, "cmd" if mac else "ctrl"),
        (Qt.KeyboardModifier.AltModifier, "alt"),
        (Qt.KeyboardModifier.ShiftModifier, "shift"),
        (Qt.KeyboardModifier.MetaModifier, "ctrl" if mac else "cmd"),
    )
    return [name for flag, name in table if mods & flag]


def _is_focus_move(key: int, mods: Qt.KeyboardModifier) -> bool:
    return key in (_K.Key_Tab, _K.Key_Backtab) and not (
        mods & ~Qt.KeyboardModifier.ShiftModifier & ~Qt.KeyboardModifier.KeypadModifier
    )


def key_token(key: int) -> str | None:
    """A Qt key → the pynput key part of a combo ("o", "<f9>", "<page_up>"); None if unknown."""
    if _K.Key_A <= key <= _K.Key_Z or _K.Key_0 <= key <= _K.Key_9:
        return chr(key).lower()
    if _K.Key_F1 <= key <= _K.Key_F20:
        return f"<f{key - _K.Key_F1 + 1}>"
    if key in NAMED:
        return f"<{NAMED[key]}>"
    if 0x21 <= key <= 0x7E:  # punctuation, as the keyboard layout delivers it
        return chr(key).lower()
    return None


def recorded_combo(key: int, mods: Qt.KeyboardModifier) -> tuple[str, str]:
    """(combo in pynput syntax, "") for a key press, or ("", why it cannot be a hotkey)."""
    token = key_token(key)
    if token is None:
        return "", "That key cannot be a global hotkey; use a letter, a digit or F1–F20."
    names = _modifiers(mods)
    if not names and token.strip("<>") not in LONE_KEYS:
        return "", (
            "Hold Ctrl, Alt, Shift or Super with that key: a key on its own would fire while you type."
        )
    try:
        return validate_combo("+".join([*(f"<{n}>" for n in names), token])), ""
    except HotkeyError as error:
        return "", f"That combination cannot be a hotkey ({error})."


class HotkeyEdit(QWidget):
    """`combo()` is the stored (pynput) text; `changed(combo)` after each recording, `refused(why)`;
    `recording(True)` while the field listens for keys (the global hotkeys are suspended then),
    `recording(False)` after."""

    changed = Signal(str)
    refused = Signal(str)
    recording = Signal(bool)

    def __init__(self, combo: str = "", parent=None):
        super().__init__(parent)
        self._combo = ""
        self.field = QLineEdit()
        self.field.setReadOnly(True)
        self.field.setPlaceholderText("off: click and press the keys")
        self.field.setCursor(Qt.CursorShape.PointingHandCursor)
        self.field.installEventFilter(self)
        self.clear_button = QToolButton()
        self.clear_button.setText("✕")
        self.clear_button.setToolTip("Turn this hotkey off")
        self.clear_button.clicked.connect(lambda: self._record(""))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.clear_button)
        self.set_combo(combo)

    def combo(self) -> str:
        return self._combo

    def set_combo(self, combo: str) -> None:
        self._combo = combo.strip()
        self._show()

    def label(self) -> str:
        return combo_label(self._combo)

    def _show(self, text: str | None = None) -> None:
        self.field.setText(self.label() if text is None else text)
        self.clear_button.setEnabled(bool(self._combo))

    def _record(self, combo: str) -> None:
        self._combo = combo
        self._show()
        self.changed.emit(combo)

    # --- recording -------------------------------------------------------------------------------

    @qt_override
    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if watched is self.field:
            if kind == event.Type.FocusIn:
                self._show("")
                self.field.setPlaceholderText(PROMPT)
                self.recording.emit(True)
            elif kind == event.Type.FocusOut:
                self.field.setPlaceholderText("off: click and press the keys")
                self._show()
                self.recording.emit(False)
            elif kind == event.Type.KeyPress:
                if _is_focus_move(event.key(), event.modifiers()):
                    return False  # Tab / Shift+Tab still move on: keyboard users are not trapped
                self.key_pressed(event.key(), event.modifiers())
                return True
            elif kind == event.Type.ShortcutOverride:  # the dialog's own shortcuts wait their turn
                event.accept()
                return True
        return super().eventFilter(watched, event)

    def key_pressed(self, key: int, mods: Qt.KeyboardModifier) -> None:
        """One key press while recording (the event filter calls this; tests may too)."""
        plain = not _modifiers(mods)
        if key in MODIFIER_KEYS:  # Ctrl+Alt+… so far: say what is held
            held = _modifiers(mods)
            label = combo_label("+".join([*(f"<{n}>" for n in held), "x"])) if held else ""
            self.field.setText(label[:-1] + "…" if label else "")
            return
        if plain and key == _K.Key_Escape:  # give up: the old hotkey stays
            self.field.clearFocus()
            self._show()
            return
        if plain and key in (_K.Key_Backspace, _K.Key_Delete):
            self._record("")
            return
        combo, why = recorded_combo(key, mods)
        if why:
            self._show("")
            self.refused.emit(why)
            return
        self._record(combo)
