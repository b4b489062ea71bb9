"""Interface of the hotkey capability."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

# Said wherever a global hotkey cannot work: the one route that always works.
CLI_ROUTE = (
    "Bind `hayai capture` (and `hayai capture --repeat` to re-scan) as a custom shortcut in your "
    "desktop's keyboard settings; the tray menu works too."
)


class HotkeyError(RuntimeError):
    """A hotkey cannot be used: invalid combo, Wayland session, missing permission. The app keeps running.

    `offer` is something the app can do about it for the user, when there is one: (a question for
    a window, the action; the action returns what to tell the user, or raises OSError)."""

    def __init__(self, message: str, offer: tuple[str, Callable[[], str]] | None = None):
        super().__init__(message)
        self.offer = offer


class Listening(Protocol):
    def stop(self) -> None: ...


class HotkeyBackend(Protocol):
    """What a module in app/hotkey/backends/ provides (app/platform/backends.py explains the first three)."""

    INSTALL_HINT: str

    def is_compatible(self) -> bool: ...

    def is_available(self) -> bool: ...

    def start(self, combos: dict[str, str], on_trigger: Callable[[str], None]) -> Listening:
        """Listen for `combos` ({name: normalized combo}); call `on_trigger(name)` from any thread."""
        ...
