"""The settings store: `Settings`, QSettings (INI) built on the table (app/settings/table.py),
with the command-line overrides of one run (`overrides_from_args`), and the per-user folders.

Per-user state lives under `HAYAI_CONFIG_DIR` when it is set (tests run side by side that way),
else in the platform's config/data dirs for the app name "hayai" (app/platform/paths.py decides).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal

from app.platform.paths import user_dir
from app.settings.table import BY_KEY, SETTINGS, Setting

log = logging.getLogger(__name__)


# --- where per-user state lives ------------------------------------------------------------------


def config_dir() -> Path:
    """Settings, single-instance socket and lock."""
    return user_dir("config")


def data_dir() -> Path:
    """History database (the dictionary index lives in the cache dir, see app/dictionary/index.py)."""
    return user_dir("data")


def settings_path() -> Path:
    return config_dir() / "settings.ini"


# --- conversion ----------------------------------------------------------------------------------


def convert(setting: Setting, raw: object) -> object:
    """A stored value (INI gives strings) as the setting's type; ValueError when it is not one."""
    if setting.type is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{setting.key}: {raw!r} is not true/false")
    if setting.type is int:
        value = int(str(raw).strip())
        if setting.maximum and not setting.minimum <= value <= setting.maximum:
            raise ValueError(
                f"{setting.key}: {value} is outside {setting.minimum}..{setting.maximum}"
            )
        return value
    text = "" if raw is None else str(raw)
    if setting.choices and text not in setting.choices:
        raise ValueError(f"{setting.key}: {text!r} is not one of {', '.join(setting.choices)}")
    return text


def _looks_corrupt(path: Path) -> bool:
    """Binary garbage or undecodable bytes; Qt's INI reader would silently take them as keys."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    if b"\x00" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


class Settings(QObject):
    """The settings store. `get`/`set` by table key; `changed(set_of_keys)` after every update.

    `overrides` (from the command line) win over stored values for this run and are never saved.
    """

    changed = Signal(object)  # frozenset of keys whose effective value changed

    def __init__(
        self, path: Path | None = None, overrides: dict[str, object] | None = None, parent=None
    ):
        super().__init__(parent)
        self.path = Path(path) if path else settings_path()
        self.moved_aside: Path | None = None  # where a corrupt file went, for a message
        self._qs = self._open()
        self.overrides: dict[str, object] = {}
        for key, value in (overrides or {}).items():
            self.overrides[key] = convert(BY_KEY[key], value)

    def _open(self) -> QSettings:
        from app.platform.private_files import move_aside, tighten_file

        tighten_file(self.path)  # an older version wrote it with the umask's mode
        qs = QSettings(str(self.path), QSettings.Format.IniFormat)
        if self.path.exists() and (
            _looks_corrupt(self.path) or qs.status() != QSettings.Status.NoError
        ):
            del qs
            aside = move_aside(self.path)
            self.moved_aside = aside
            log.warning(
                "settings file %s was unreadable; moved it to %s and using defaults",
                self.path,
                aside,
            )
            qs = QSettings(str(self.path), QSettings.Format.IniFormat)
        return qs

    def get(self, key: str):
        setting = BY_KEY[key]  # KeyError for a typo: better loud than a silent default
        if key in self.overrides:
            return self.overrides[key]
        if not self._qs.contains(key):
            return setting.default
        try:
            return convert(setting, self._qs.value(key))
        except (TypeError, ValueError) as exc:
            log.warning("ignoring stored setting (%s); using the default %r", exc, setting.default)
            return setting.default

    def stored(self, key: str):
        """The saved value, ignoring command-line overrides (what the dialog edits)."""
        saved = self.overrides.pop(key, _MISSING)
        try:
            return self.get(key)
        finally:
            if saved is not _MISSING:
                self.overrides[key] = saved

    def set(self, key: str, value) -> None:
        self.update({key: value})

    def update(self, values: dict[str, object]) -> frozenset[str]:
        """Save several values at once; emits `changed` once with the keys whose effective value changed."""
        before = {key: self.get(key) for key in values}
        for key, value in values.items():
            value = convert(BY_KEY[key], value)
            self._qs.setValue(key, value)
        self._qs.sync()
        from app.platform.private_files import tighten_file

        tighten_file(self.path)  # Qt writes a new file with the umask's mode
        changed = frozenset(key for key in values if self.get(key) != before[key])
        if changed:
            self.changed.emit(changed)
        return changed


_MISSING = object()


def overrides_from_args(args) -> dict[str, object]:
    """The CLI options that override settings for one run (`--model`, `--hotkey`), by table key."""
    overrides: dict[str, object] = {}
    for setting in SETTINGS:
        if not setting.cli:
            continue
        value = getattr(args, setting.cli.lstrip("-").replace("-", "_"), None)
        if value:
            overrides[setting.key] = (
                str(Path(value).expanduser().resolve()) if setting.kind == "folder" else value
            )
            if setting.cli_enables:
                overrides[setting.cli_enables] = True
    return overrides


# --- start at login ------------------------------------------------------------------------------


def apply_start_at_login(enabled: bool):
    """Write or remove the freedesktop autostart entry; returns its path (None when removed/unsupported)."""
    if not sys.platform.startswith("linux"):
        log.info("start at login is only implemented for Linux desktops (freedesktop autostart)")
        return None
    from app.platform.desktop_entry import set_autostart

    return set_autostart(enabled)
