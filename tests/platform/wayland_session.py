"""A real headless Sway for the Wayland tests, run as an unprivileged user (Sway refuses root).

`start_sway()` starts, as that user and with its own XDG_RUNTIME_DIR: a private D-Bus session
bus and Sway on the headless wlroots backend (pixman renderer, no input devices);
`enable_portal()` adds PipeWire so that the bus can activate xdg-desktop-portal +
xdg-desktop-portal-wlr when the app first calls the portal. Every child of the tests (the app, the
image client, grim, wl-paste, swaymsg) runs through `session.run()` / `session.popen()`, which set
the user and the environment. When the tests run as root, a system user `hayaitest` is created once
(or reused); as any other user, that user itself runs everything.

The app and the venv must be readable by that user: `session.readable(path)` copies a file tree into
the session's folder (owned by the user), and `ensure_traversable()` opens the execute bit for
others on the folders above the venv when they lack it (a checkout under /root).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TEST_USER = "hayaitest"
TOOLS = ("sway", "swaymsg", "grim", "wl-paste", "dbus-daemon")
PORTAL_BINARIES = (
    "/usr/libexec/xdg-desktop-portal",
    "/usr/libexec/xdg-desktop-portal-wlr",
    "/usr/libexec/xdg-desktop-portal-gtk",  # its Access portal: xdg-desktop-portal < 1.17 offers
    # Screenshot only beside one
    "/usr/bin/pipewire",
    "/usr/bin/dbus-update-activation-environment",
)

SWAY_CONFIG = """\
default_border none
default_floating_border none
focus_follows_mouse no
mouse_warping none
# headless outputs draw the cursor into every frame (no cursor plane): hide it when idle, so
# screenshots taken between injected moves hold the windows' pixels only
seat seat0 hide_cursor 100
# the test's image windows fill their outputs; the app's windows float above them, as the line
# Hayai prints for Sway users says (the selection windows are fullscreen either way)
for_window [app_id="^hayai$"] floating enable
"""


PORTAL_WLR_CONFIG = """\
[screencast]
output_name=HEADLESS-1
chooser_type=none
"""


def missing_tools() -> list[str]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    return missing


def missing_portal() -> list[str]:
    return [path for path in PORTAL_BINARIES if not Path(path).exists()]


def _test_user() -> pwd.struct_passwd:
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid())
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--create-home",
                "--home-dir",
                f"/var/lib/{TEST_USER}",
                "--shell",
                "/usr/sbin/nologin",
                TEST_USER,
            ],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(TEST_USER)


_OPENED: list[
    tuple[Path, int]
] = []  # folders given the execute bit for others, with their old mode


def ensure_traversable(path: Path) -> None:
    """Let other users reach `path` (execute bit on each folder above it, where it is missing);
    `restore_modes()` takes the bits back when the session ends."""
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        if not mode & 0o001:
            _OPENED.append((folder, mode))
            folder.chmod(mode | 0o001)


def restore_modes() -> None:
    """Undo `ensure_traversable`: a test run leaves /root (or a home folder) as private as it was."""
    while _OPENED:
        folder, mode = _OPENED.pop()
        try:
            folder.chmod(mode & 0o7777)
        except OSError:
            pass


@dataclass
class SwaySession:
    user: pwd.struct_passwd
    folder: Path  # owned by the user: runtime dir, config, copies, outputs of the app
    runtime_dir: Path
    bus_address: str
    wayland_display: str
    swaysock: str
    processes: list[subprocess.Popen] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    # --- running things as the user ------------------------------------------------------------

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.folder / "home"),
            "USER": self.user.pw_name,
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
            "XDG_SESSION_TYPE": "wayland",
            "XDG_CURRENT_DESKTOP": "sway",
            "WAYLAND_DISPLAY": self.wayland_display,
            "SWAYSOCK": self.swaysock,
            "DBUS_SESSION_BUS_ADDRESS": self.bus_address,
            "XDG_CONFIG_HOME": str(self.folder / "home" / ".config"),
            "XDG_CACHE_HOME": str(self.folder / "home" / ".cache"),
            "XDG_DATA_HOME": str(self.folder / "home" / ".local" / "share"),
            "HF_HUB_OFFLINE": "1",
            "OMP_NUM_THREADS": "1",
            "QT_QPA_PLATFORM": "wayland",
        }
        env.update(extra)
        return env

    def _as_user(self) -> dict:
        if os.geteuid() != 0:
            return {}
        return {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}

    def popen(self, argv, env=None, log_name: str | None = None, **kw) -> subprocess.Popen:
        if log_name is not None:
            log = self.folder / f"{log_name}.log"
            self.logs.append(log)
            handle = open(log, "ab")  # noqa: SIM115 - the child owns it
            kw.setdefault("stdout", handle)
            kw.setdefault("stderr", subprocess.STDOUT)
        process = subprocess.Popen(
            [str(a) for a in argv],
            env=env or self.env(),
            cwd=self.folder,
            start_new_session=True,
            **self._as_user(),
            **kw,
        )
        self.processes.append(process)
        return process

    def run(self, argv, env=None, timeout: float = 60, check: bool = True, **kw):
        result = subprocess.run(
            [str(a) for a in argv],
            env=env or self.env(),
            cwd=self.folder,
            capture_output=True,
            timeout=timeout,
            **self._as_user(),
            **kw,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"{argv} failed ({result.returncode}):\n{result.stdout!r}\n{result.stderr!r}"
            )
        return result

    def swaymsg(self, *args: str, kind: str | None = None):
        argv = ["swaymsg", *(["-t", kind] if kind else []), "--", *args] if args else None
        if argv is None:
            argv = ["swaymsg", "-t", kind]
        result = self.run(argv, timeout=20)
        text = result.stdout.decode()
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text

    def outputs(self) -> list[dict]:
        return self.swaymsg(kind="get_outputs")

    def tree(self) -> dict:
        return self.swaymsg(kind="get_tree")

    def windows(self) -> list[dict]:
        found = []

        def walk(node):
            if node.get("pid") and node.get("type") in ("con", "floating_con"):
                found.append(node)
            for child in node.get("nodes", []) + node.get("floating_nodes", []):
                walk(child)

        walk(self.tree())
        return found

    def poll_for(self, predicate, timeout_s: float):
        """`predicate()`'s first true value within `timeout_s`, else None."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.1)
        return None

    def wait_for(self, predicate, what: str, timeout_s: float = 30):
        value = self.poll_for(predicate, timeout_s)
        if not value:
            raise AssertionError(f"timed out waiting for {what}\n{self.log_tail()}")
        return value

    def log_tail(self, lines: int = 30) -> str:
        parts = []
        for log in self.logs:
            try:
                text = log.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            parts.append(f"--- {log.name}\n" + "\n".join(text))
        return "\n".join(parts)

    def readable(self, source: Path, name: str) -> Path:
        """A copy of `source` (file or folder) in the session folder, owned by the user."""
        target = self.folder / name
        if source.is_dir():
            shutil.copytree(
                source, target, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True
            )
        else:
            shutil.copy2(source, target)
        self.chown(target)
        return target

    def chown(self, path: Path) -> None:
        if os.geteuid() != 0:
            return
        for item in [path, *(path.rglob("*") if path.is_dir() else [])]:
            os.chown(item, self.user.pw_uid, self.user.pw_gid, follow_symlinks=False)

    def mkdir(self, name: str) -> Path:
        path = self.folder / name
        path.mkdir(parents=True, exist_ok=True)
        self.chown(path)
        return path

    # --- the portal ----------------------------------------------------------------------------

    def enable_portal(self) -> None:
        """Let D-Bus activate xdg-desktop-portal (and -wlr) inside this session, as a real session
        does: PipeWire running (xdg-desktop-portal-wlr exits without it) and the compositor's
        variables in the bus's activation environment."""
        # Non-interactive, whatever the version: no chooser (slurp, a menu) ever waits for a click.
        # 0.7 reads these for screen casts; its screenshots of all outputs need no chooser.
        config = self.folder / "home" / ".config" / "xdg-desktop-portal-wlr"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config").write_text(PORTAL_WLR_CONFIG)
        self.chown(config)
        self.popen(["pipewire"], log_name="pipewire")
        self.wait_for(lambda: (self.runtime_dir / "pipewire-0").exists(), "pipewire")
        self.run(
            [
                "dbus-update-activation-environment",
                "WAYLAND_DISPLAY",
                "XDG_CURRENT_DESKTOP",
                "XDG_SESSION_TYPE",
                "SWAYSOCK",
            ]
        )
        # Start it now, before any Qt client asks it for settings: answered = ready for the app.
        self.run(
            [
                "dbus-send",
                "--session",
                "--print-reply",
                "--reply-timeout=30000",
                "--dest=org.freedesktop.portal.Desktop",
                "/org/freedesktop/portal/desktop",
                "org.freedesktop.DBus.Properties.Get",
                "string:org.freedesktop.portal.Screenshot",
                "string:version",
            ],
            timeout=40,
        )

    # --- ending --------------------------------------------------------------------------------

    def stop_process(self, process: subprocess.Popen) -> None:
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                return
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)

    def close(self) -> None:
        for process in reversed(self.processes):
            self.stop_process(process)
        shutil.rmtree(self.folder, ignore_errors=True)
        restore_modes()


def start_sway(timeout_s: float = 30, config: str = SWAY_CONFIG) -> SwaySession:
    user = _test_user()
    folder = Path(tempfile.mkdtemp(prefix="hayai-sway-"))
    folder.chmod(0o755)
    runtime = folder / "run"
    runtime.mkdir(mode=0o700)
    for sub in ("home", "home/.config", "home/.cache", "home/.local/share"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "sway.config").write_text(config)
    if os.geteuid() == 0:
        for item in [folder, *folder.rglob("*")]:
            os.chown(item, user.pw_uid, user.pw_gid)
    bus = f"unix:path={runtime}/bus"
    session = SwaySession(user, folder, runtime, bus, "wayland-hayai", "")
    session.swaysock = str(runtime / "sway-ipc.sock")
    dbus = session.popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address={bus}"],
        log_name="dbus",
    )
    session.wait_for(lambda: (runtime / "bus").exists() or dbus.poll() is not None, "dbus")
    env = session.env(
        WLR_BACKENDS="headless",
        WLR_LIBINPUT_NO_DEVICES="1",
        WLR_RENDERER="pixman",
        WLR_HEADLESS_OUTPUTS="1",
    )
    env.pop("WAYLAND_DISPLAY")
    env.pop("SWAYSOCK")
    sway = session.popen(["sway", "-c", folder / "sway.config"], env=env, log_name="sway")

    def ready():
        if sway.poll() is not None:
            raise AssertionError(f"sway exited with {sway.returncode}\n{session.log_tail()}")
        sockets = [p for p in runtime.glob("wayland-*") if not p.name.endswith(".lock")]
        ipc = list(runtime.glob("sway-ipc.*.sock"))
        if sockets and ipc:
            session.wayland_display = sockets[0].name
            session.swaysock = str(ipc[0])
            return True
        return False

    try:
        session.wait_for(ready, "sway to start", timeout_s)
    except BaseException:
        session.close()
        raise
    return session


def python_for_user() -> str:
    """The interpreter the tests run with, made reachable by the test user."""
    for path in {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent}:
        ensure_traversable(path)
    return sys.executable
