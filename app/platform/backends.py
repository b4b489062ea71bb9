"""One backend dispatcher shared by every capability (capture, hotkey, ...).

A capability keeps an ordered registry `{name: module}` (most preferred first). Each backend module
exposes `is_compatible()` (reads only the environment: cheap, easy to parametrize in tests),
`is_available()` (may import a library or probe a binary), `INSTALL_HINT` (what to install when it
is missing) and its action. `pick()` returns the first backend that is compatible and available; an
override (setting or CLI) always wins over the order. Every decision is logged and remembered in
`chosen()` so the `-v` system-info block can say which backend ran and why.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

log = logging.getLogger(__name__)


class Backend(Protocol):
    """What pick() reads of every backend module; each capability's own protocol adds its action."""

    INSTALL_HINT: str

    def is_compatible(self) -> bool: ...

    def is_available(self) -> bool: ...


B = TypeVar("B", bound=Backend)


class BackendError(RuntimeError):
    """No usable backend (or an unknown / unusable override); the message says what to do."""


@dataclass(frozen=True)
class Choice(Generic[B]):
    capability: str
    name: str
    module: B
    reason: str


_chosen: dict[str, Choice] = {}


def setting_override(settings, key: str) -> str | None:
    """A backend setting (`capture/backend`, `hotkey/backend`) as `pick`'s override: None for "auto"."""
    value = settings.get(key)
    return None if value == "auto" else value


def pick(
    registry: Mapping[str, B], override: str | None = None, *, capability: str = "backend"
) -> Choice[B]:
    """Choose a backend from `registry` (ordered by preference); `override` names one explicitly.

    An override wins even when `is_compatible()` says no (the user knows their system better than
    our environment sniffing), but it must be available: otherwise the error carries its install hint.
    """
    if override:
        if override not in registry:
            raise BackendError(
                f"unknown {capability} backend {override!r}; choose one of: {', '.join(registry)}"
            )
        module = registry[override]
        if not module.is_available():
            raise BackendError(
                f"{capability} backend {override!r} is not available: {module.INSTALL_HINT}"
            )
        compatible = module.is_compatible()
        reason = "override" + ("" if compatible else " (not the usual choice for this session)")
        return _remember(Choice(capability, override, module, reason))

    skipped: list[str] = []
    hints: list[str] = []
    for name, module in registry.items():
        if not module.is_compatible():
            skipped.append(f"{name}: not compatible")
            continue
        if not module.is_available():
            skipped.append(f"{name}: not available")
            hints.append(f"{name}: {module.INSTALL_HINT}")
            continue
        reason = "first compatible and available" + (
            f" (skipped {'; '.join(skipped)})" if skipped else ""
        )
        return _remember(Choice(capability, name, module, reason))
    detail = "; ".join(skipped) or "empty registry"
    hint = (" To fix: " + " ".join(hints)) if hints else ""
    raise BackendError(f"no {capability} backend works here ({detail}).{hint}")


def _remember(choice: Choice[B]) -> Choice[B]:
    previous = _chosen.get(choice.capability)
    level = logging.DEBUG if previous and previous.name == choice.name else logging.INFO
    log.log(level, "%s backend: %s (%s)", choice.capability, choice.name, choice.reason)
    _chosen[choice.capability] = choice
    return choice


def chosen() -> dict[str, str]:
    """`{capability: "name (reason)"}` of the latest pick per capability, for diagnostics."""
    return {cap: f"{c.name} ({c.reason})" for cap, c in _chosen.items()}


def session_type() -> str:
    """ "wayland", "x11", "windows", "macos" or "unknown", read from the environment only."""
    if sys.platform == "win32":
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    if os.environ.get("XDG_SESSION_TYPE", "").lower() == "wayland" or os.environ.get(
        "WAYLAND_DISPLAY"
    ):
        return "wayland"
    if os.environ.get("DISPLAY"):
        return "x11"
    return "unknown"
