"""Linux desktop integration: `hayai --install-desktop-entry` and the login autostart entry.

Writes the desktop entry (from resources/hayai.desktop) and the SVG icon into the user's XDG data
folder, so Hayai shows up in the application menu with its "Capture region" / "Re-scan" actions,
which desktop shortcuts on Wayland can use. Exec= gets the absolute command of *this* install (the
venv's script, the PyInstaller binary or the AppImage), so launching from the menu works even when
the venv is not on PATH. No Qt here: plain files only.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import resources

APP_ID = "hayai"


def data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def entry_path() -> Path:
    return data_home() / "applications" / f"{APP_ID}.desktop"


def icon_path() -> Path:
    return data_home() / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"


def autostart_path() -> Path:
    return config_home() / "autostart" / f"{APP_ID}.desktop"


def launch_command() -> list[str]:
    """The argv that starts this very installation of Hayai."""
    if os.environ.get("APPIMAGE"):  # set by the AppImage runtime: the .AppImage file itself
        return [os.environ["APPIMAGE"]]
    if getattr(sys, "frozen", False):  # PyInstaller bundle: dist/hayai/hayai
        return [sys.executable]
    script = Path(sys.executable).parent / "hayai"  # the console script of this venv / prefix
    if script.is_file():
        return [str(script)]
    found = shutil.which("hayai")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "app"]


def _exec_value(argv: list[str]) -> str:
    """Quote an argv for Exec= (Desktop Entry spec: double quotes, `"` `` ` `` `$` `\\` escaped)."""
    out = []
    for arg in argv:
        if arg and all(c.isalnum() or c in "/._-+=:,@" for c in arg):
            out.append(arg)
        else:
            escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
            out.append(f'"{escaped}"')
    # A literal % must be doubled; then the file's own string escaping doubles every backslash.
    return " ".join(out).replace("%", "%%").replace("\\", "\\\\")


def render_entry(command: list[str] | None = None, extra: dict[str, str] | None = None) -> str:
    """The desktop entry text with Exec= pointing at `command` (default: this installation)."""
    exe = _exec_value(command or launch_command())
    lines = []
    for line in resources.path(resources.DESKTOP_ENTRY).read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec=hayai"):
            line = "Exec=" + exe + line[len("Exec=hayai") :]
        lines.append(line)
    if extra:  # appended to the [Desktop Entry] group, which comes first in the template
        first_action = next(
            (i for i, ln in enumerate(lines) if ln.startswith("[Desktop Action")), len(lines)
        )
        while first_action > 0 and not lines[first_action - 1].strip():
            first_action -= 1
        lines[first_action:first_action] = [f"{k}={v}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def _refresh_menus() -> None:
    """Best effort: tell the desktop that applications/icons changed (harmless when missing)."""
    for tool, arg in (
        ("update-desktop-database", entry_path().parent),
        ("gtk-update-icon-cache", data_home() / "icons" / "hicolor"),
    ):
        if shutil.which(tool):
            subprocess.run(
                [tool, "-q", str(arg)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )


def install(command: list[str] | None = None) -> Path:
    """Write the desktop entry and the icon for the current user; return the entry's path."""
    entry, icon = entry_path(), icon_path()
    entry.parent.mkdir(parents=True, exist_ok=True)
    icon.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(resources.path(resources.ICON), icon)
    entry.write_text(render_entry(command), encoding="utf-8")
    entry.chmod(0o755)  # some file managers only trust executable launchers
    _refresh_menus()
    return entry


def uninstall() -> list[Path]:
    """Remove what install() and set_autostart() wrote; return the removed paths."""
    removed = []
    for path in (entry_path(), icon_path(), autostart_path()):
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed


def set_autostart(enabled: bool, command: list[str] | None = None) -> Path | None:
    """Create or remove ~/.config/autostart/hayai.desktop (freedesktop autostart); return the path when enabled."""
    path = autostart_path()
    if not enabled:
        path.unlink(missing_ok=True)
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_entry(command, {"X-GNOME-Autostart-enabled": "true"}), encoding="utf-8")
    return path


def main(args=None) -> int:
    """`hayai --install-desktop-entry`: install and say where, and how to bind a shortcut."""
    if sys.platform != "linux":
        print(
            "--install-desktop-entry is for Linux desktops (freedesktop.org); nothing to do here.",
            file=sys.stderr,
        )
        return 2
    try:
        entry = install()
    except OSError as exc:
        print(f"could not write the desktop entry: {exc}", file=sys.stderr)
        return 1
    print(f"desktop entry: {entry}")
    print(f"icon:          {icon_path()}")
    print(f"runs:          {shlex.join(launch_command())}")
    print("Wayland: bind `hayai capture` to a key in your desktop's keyboard-shortcut settings.")
    return 0
