"""Global hotkeys behind one interface: `GlobalHotkeys(...).start()` → `triggered(name)` on the GUI thread.

Backends: pynput (X11, Windows, macOS), portal (the desktop portal's GlobalShortcuts on Wayland) and
wayland (no portal shortcuts: sets up or explains the `hayai capture` route)."""

from app.hotkey.combo import parse_combo, validate_combo
from app.hotkey.main import DEFAULT_HOTKEYS, REGISTRY, GlobalHotkeys
from app.hotkey.models import CLI_ROUTE, HotkeyError

__all__ = [
    "CLI_ROUTE",
    "DEFAULT_HOTKEYS",
    "GlobalHotkeys",
    "HotkeyError",
    "REGISTRY",
    "parse_combo",
    "validate_combo",
]
