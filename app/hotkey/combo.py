"""Hotkey combos in pynput syntax (`<ctrl>+<alt>+o`): validation, normalization, and exact matching.

Pure Python (no pynput import: it needs a display just to be imported), so settings dialogs and the
CLI can validate combos anywhere. The matcher fires only when exactly the combo's modifiers are held,
unlike pynput's GlobalHotKeys, which also fires on supersets (GNOME's Ctrl+Shift+Alt+R screen
recorder would trigger a Ctrl+Alt+R hotkey).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from app.hotkey.models import HotkeyError

MODIFIERS = ("ctrl", "alt", "shift", "cmd", "alt_gr")  # canonical order in normalized combos
MODIFIER_ALIASES = {
    "control": "ctrl",
    "ctrl_l": "ctrl",
    "ctrl_r": "ctrl",
    "alt_l": "alt",
    "alt_r": "alt",
    "option": "alt",
    "shift_l": "shift",
    "shift_r": "shift",
    "cmd_l": "cmd",
    "cmd_r": "cmd",
    "super": "cmd",
    "win": "cmd",
}
# Keys that may stand alone: pressing them while typing does not happen by accident.
LONE_KEYS = {f"f{i}" for i in range(1, 21)} | {
    "print_screen",
    "pause",
    "scroll_lock",
    "insert",
    "menu",
}
NAMED_KEYS = LONE_KEYS | {
    "backspace",
    "caps_lock",
    "delete",
    "down",
    "end",
    "enter",
    "esc",
    "home",
    "left",
    "page_down",
    "page_up",
    "right",
    "space",
    "tab",
    "up",
    "num_lock",
    "media_play_pause",
    "media_volume_mute",
    "media_volume_down",
    "media_volume_up",
    "media_previous",
    "media_next",
}

EXAMPLE = "e.g. <ctrl>+<alt>+o"


@dataclass(frozen=True)
class Combo:
    modifiers: frozenset[str]
    key: str  # a lower-case character, "<name>" for a named key, or "<vk>" for a virtual key code

    def __str__(self) -> str:
        mods = [f"<{m}>" for m in MODIFIERS if m in self.modifiers]
        return "+".join([*mods, self.key])


def _split(text: str) -> list[str]:
    # A trailing "+" after a "+" is the plus key itself: "<ctrl>++".
    if text.endswith("++"):
        return [*text[:-2].split("+"), "+"]
    return text.split("+")


def parse_combo(text: str) -> Combo:
    """Parse `text`; HotkeyError names the part that is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise HotkeyError(f"the hotkey is empty; write one in pynput syntax, {EXAMPLE}")
    modifiers: list[str] = []
    keys: list[str] = []
    for raw in _split(text.strip()):
        part = raw.strip().lower()
        if not part:
            raise HotkeyError(f"{text!r} has an empty part (a stray '+'); {EXAMPLE}")
        if len(part) == 1:
            keys.append(part)
        elif part.startswith("<") and part.endswith(">") and len(part) > 2:
            name = MODIFIER_ALIASES.get(part[1:-1], part[1:-1])
            if name in MODIFIERS:
                if name in modifiers:
                    raise HotkeyError(f"{text!r} names <{name}> twice")
                modifiers.append(name)
            elif name in NAMED_KEYS:
                keys.append(f"<{name}>")
            elif name.isdigit():
                keys.append(f"<{int(name)}>")
            else:
                raise HotkeyError(
                    f"{raw.strip()!r} in {text!r} is not a key pynput knows; {EXAMPLE}"
                )
        else:
            bare = MODIFIER_ALIASES.get(part, part)
            if bare in MODIFIERS or bare in NAMED_KEYS:
                raise HotkeyError(
                    f"{raw.strip()!r} in {text!r} must be written in angle brackets: <{bare}>"
                )
            raise HotkeyError(
                f"{raw.strip()!r} in {text!r} is not a key (one character or <name>); {EXAMPLE}"
            )
    if not keys:
        raise HotkeyError(f"{text!r} has only modifiers; add a key, {EXAMPLE}")
    if len(keys) > 1:
        raise HotkeyError(
            f"{text!r} has more than one key besides the modifiers ({' and '.join(keys)})"
        )
    key = keys[0]
    if not modifiers and key.strip("<>") not in LONE_KEYS:
        raise HotkeyError(
            f"{text!r} has no modifier, so it would fire while typing; add <ctrl>, <alt>, <shift> or <cmd>"
        )
    return Combo(frozenset(modifiers), key)


# How each platform writes the modifiers in its menus and settings (macOS: ⌃ Control, ⌥ Option, ⌘ Command).
MODIFIER_LABELS = {
    "linux": {"ctrl": "Ctrl", "alt": "Alt", "shift": "Shift", "cmd": "Super", "alt_gr": "AltGr"},
    "win32": {"ctrl": "Ctrl", "alt": "Alt", "shift": "Shift", "cmd": "Win", "alt_gr": "AltGr"},
    "darwin": {
        "ctrl": "Control",
        "alt": "Option",
        "shift": "Shift",
        "cmd": "Cmd",
        "alt_gr": "AltGr",
    },
}
KEY_LABELS = {
    "print_screen": "Print",
    "page_up": "PgUp",
    "page_down": "PgDown",
    "scroll_lock": "ScrollLock",
    "caps_lock": "CapsLock",
    "num_lock": "NumLock",
    "esc": "Esc",
}


def combo_label(text: str, platform: str = sys.platform) -> str:
    """`<ctrl>+<alt>+o` → `Ctrl+Alt+O` (the way the platform writes it); "" for an empty combo."""
    if not text or not text.strip():
        return ""
    try:
        combo = parse_combo(text)
    except HotkeyError:  # show what is stored, readably, even when it is not a valid combo
        parts = [p.strip("<>") for p in text.split("+")]
        return "+".join(p.capitalize() if len(p) > 1 else p.upper() for p in parts)
    names = MODIFIER_LABELS.get(platform, MODIFIER_LABELS["linux"])
    mods = [names[m] for m in MODIFIERS if m in combo.modifiers]
    key = combo.key
    if len(key) == 1:
        label = key.upper()
    elif key.strip("<>").isdigit():
        label = f"Key {key.strip('<>')}"
    else:
        name = key.strip("<>")
        label = KEY_LABELS.get(name) or name.replace("_", " ").title().replace(" ", "")
    return "+".join([*mods, label])


def validate_combo(text: str) -> str:
    """The normalized combo (`<ctrl>+<alt>+o`); HotkeyError with the invalid part otherwise."""
    return str(parse_combo(text))


class ComboMatcher:
    """Turns a stream of key presses/releases (tokens like "ctrl", "o", "<f9>") into hotkey names.

    Fires when the last key of a combo goes down while exactly its modifiers are held; holding the
    key (auto-repeat) does not fire again until it is released.
    """

    def __init__(self, combos: dict[str, str]):
        self._targets = {name: parse_combo(combo) for name, combo in combos.items()}
        self._held: set[str] = set()
        self._down: set[str] = set()

    def press(self, token: str) -> str | None:
        if token in MODIFIERS:
            self._held.add(token)
            return None
        if token in self._down:
            return None  # auto-repeat
        self._down.add(token)
        for name, combo in self._targets.items():
            if combo.key == token and combo.modifiers == self._held:
                return name
        return None

    def release(self, token: str) -> None:
        self._held.discard(token)
        self._down.discard(token)
