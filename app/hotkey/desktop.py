"""Our combos (`<ctrl>+<alt>+o`) written the way Wayland desktops want them, and the GNOME set-up.

Where the compositor keeps keys to itself and offers no GlobalShortcuts portal, the desktop runs
`hayai capture` on a key instead: GNOME through a custom keybinding (gsettings, which the app can
add for the user), Sway and Hyprland through a config line (which the app prints).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess

from app.hotkey.combo import parse_combo

# every hotkey of the app (app.flows.hotkeys.combos) and the `hayai` command a desktop shortcut runs for it
COMMANDS = {"capture": "capture", "rescan": "capture --repeat", "watch-toggle": "watch --toggle"}
TITLES = {
    "capture": "Hayai: capture a region",
    "rescan": "Hayai: re-scan the last region",
    "watch-toggle": "Hayai: pause or resume watching",
}

# pynput key names -> X keysym names (what GNOME, Sway, Hyprland and the portal spec all use)
KEYSYMS = {
    "esc": "Escape",
    "enter": "Return",
    "backspace": "BackSpace",
    "delete": "Delete",
    "insert": "Insert",
    "home": "Home",
    "end": "End",
    "page_up": "Prior",
    "page_down": "Next",
    "left": "Left",
    "right": "Right",
    "up": "Up",
    "down": "Down",
    "space": "space",
    "tab": "Tab",
    "print_screen": "Print",
    "pause": "Pause",
    "scroll_lock": "Scroll_Lock",
    "caps_lock": "Caps_Lock",
    "num_lock": "Num_Lock",
    "menu": "Menu",
}
MEDIA_KEYSYMS = {
    "media_play_pause": "XF86AudioPlay",
    "media_volume_mute": "XF86AudioMute",
    "media_volume_down": "XF86AudioLowerVolume",
    "media_volume_up": "XF86AudioRaiseVolume",
    "media_previous": "XF86AudioPrev",
    "media_next": "XF86AudioNext",
}
MODIFIER_NAMES = {  # ours -> (portal/XDG shortcuts spec, GNOME accelerator, Sway, Hyprland)
    "ctrl": ("CTRL", "<Control>", "Ctrl", "CTRL"),
    "alt": ("ALT", "<Alt>", "Mod1", "ALT"),
    "shift": ("SHIFT", "<Shift>", "Shift", "SHIFT"),
    "cmd": ("LOGO", "<Super>", "Mod4", "SUPER"),
    "alt_gr": ("ALT", "<Alt>", "Mod5", "ALT"),
}
ORDER = ("ctrl", "alt", "shift", "cmd", "alt_gr")
GNOME_SCHEMA = "org.gnome.settings-daemon.plugins.media-keys"
GNOME_PATH = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/hayai-{name}/"


def keysym(key: str) -> str:
    if key.startswith("<") and key.endswith(">"):
        name = key[1:-1]
        if name.startswith("f") and name[1:].isdigit():
            return name.upper()
        if name.isdigit():
            raise ValueError(f"a virtual key code ({key}) has no name a desktop understands")
        return KEYSYMS.get(name) or MEDIA_KEYSYMS[name]
    return {"+": "plus", "-": "minus", " ": "space"}.get(key, key)


def _parts(combo: str, column: int) -> tuple[list[str], str]:
    parsed = parse_combo(combo)
    mods = [MODIFIER_NAMES[m][column] for m in ORDER if m in parsed.modifiers]
    return mods, keysym(parsed.key)


def label(combo: str) -> str:
    """`<ctrl>+<alt>+o` -> `Ctrl+Alt+O`, for windows and messages."""
    parsed = parse_combo(combo)
    names = {"ctrl": "Ctrl", "alt": "Alt", "shift": "Shift", "cmd": "Super", "alt_gr": "AltGr"}
    key = keysym(parsed.key)
    return "+".join([*(names[m] for m in ORDER if m in parsed.modifiers), key.capitalize()])


def portal_trigger(combo: str) -> str:
    """`<ctrl>+<alt>+o` -> `CTRL+ALT+o` (the XDG shortcuts format the portal's preferred_trigger takes)."""
    mods, key = _parts(combo, 0)
    return "+".join([*mods, key])


def gnome_binding(combo: str) -> str:
    mods, key = _parts(combo, 1)
    return "".join(mods) + key


def sway_binding(combo: str) -> str:
    mods, key = _parts(combo, 2)
    return "+".join([*mods, key])


def hyprland_binding(combo: str) -> tuple[str, str]:
    mods, key = _parts(combo, 3)
    return " ".join(mods), key.upper() if len(key) == 1 else key


def hayai_command() -> str:
    """The absolute command that runs this installation's `hayai` (what a shortcut must call): the
    desktop entry's (the bundle or AppImage itself, this venv's script, ...), quoted for the shell
    that runs a shortcut."""
    import shlex

    from app.platform.desktop_entry import launch_command

    return shlex.join(launch_command())


def desktop() -> str:
    """ "gnome", "sway", "hyprland", "kde" or "other", from the session's environment."""
    names = os.environ.get("XDG_CURRENT_DESKTOP", "").lower().split(":")
    if os.environ.get("HYPRLAND_INSTANCE_SIGNATURE") or "hyprland" in names:
        return "hyprland"
    if os.environ.get("SWAYSOCK") or "sway" in names:
        return "sway"
    if "gnome" in names:
        return "gnome"
    if "kde" in names:
        return "kde"
    return "other"


def config_lines(combos: dict[str, str], kind: str) -> list[str]:
    """The lines to add to Sway's or Hyprland's config for `combos` ({name: combo})."""
    command = hayai_command()
    lines = []
    for name, combo in combos.items():
        if kind == "sway":
            lines.append(f"bindsym {sway_binding(combo)} exec {command} {COMMANDS[name]}")
        else:
            mods, key = hyprland_binding(combo)
            lines.append(f"bind = {mods}, {key}, exec, {command} {COMMANDS[name]}")
    if kind == "sway":  # Wayland apps cannot place their windows; floating keeps the overlay small
        lines.append('for_window [app_id="^hayai$"] floating enable')
    else:
        lines.append("windowrulev2 = float, class:^(hayai)$")
    return lines


def config_file(kind: str) -> str:
    return "~/.config/sway/config" if kind == "sway" else "~/.config/hypr/hyprland.conf"


# --- GNOME: custom keybindings through gsettings --------------------------------------------------


def gnome_can_install() -> bool:
    if shutil.which("gsettings") is None:
        return False
    done = subprocess.run(
        ["gsettings", "list-schemas"], capture_output=True, text=True, timeout=10, check=False
    )
    return done.returncode == 0 and GNOME_SCHEMA in done.stdout.split()


def _gsettings(*args: str) -> str:
    done = subprocess.run(
        ["gsettings", *args], capture_output=True, text=True, timeout=10, check=False
    )
    if done.returncode != 0:
        raise OSError(f"gsettings {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def gnome_install(combos: dict[str, str]) -> list[str]:
    """Add (or update) one GNOME custom keybinding per combo running `hayai capture[ --repeat]`.

    Keeps the user's other custom keybindings; returns the paths written. OSError on failure."""
    listed = _gsettings("get", GNOME_SCHEMA, "custom-keybindings")
    current = [] if listed.startswith("@as") else list(ast.literal_eval(listed))
    command = hayai_command()
    written = []
    for name, combo in combos.items():
        path = GNOME_PATH.format(name=name)
        schema = f"{GNOME_SCHEMA}.custom-keybinding:{path}"
        _gsettings("set", schema, "name", TITLES[name])
        _gsettings("set", schema, "command", f"{command} {COMMANDS[name]}")
        _gsettings("set", schema, "binding", gnome_binding(combo))
        if path not in current:
            current.append(path)
        written.append(path)
    _gsettings("set", GNOME_SCHEMA, "custom-keybindings", str(current))
    return written


def gnome_bindings() -> dict[str, tuple[str, str]]:
    """{path: (command, binding)} of Hayai's GNOME keybindings, for checking what was written."""
    found = {}
    for name in COMMANDS:
        path = GNOME_PATH.format(name=name)
        schema = f"{GNOME_SCHEMA}.custom-keybinding:{path}"
        command = ast.literal_eval(_gsettings("get", schema, "command"))
        binding = ast.literal_eval(_gsettings("get", schema, "binding"))
        if command:
            found[path] = (command, binding)
    return found
