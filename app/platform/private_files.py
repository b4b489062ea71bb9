"""Per-user state is private: its folders 0700 and its files 0600, whatever the umask, and fixed up
when an older version (or a careless copy) left them readable by others. No Qt here.

Also the one way to move an unreadable state file aside (`NAME.corrupt-YYYYmmdd-HHMMSS`) so the app
can start afresh, and the one error for a state folder that cannot be used.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


class StateDirError(OSError):
    """A per-user state folder cannot be used (a file is in its place, no permission); one sentence."""


def _tighten(path: Path, mode: int) -> None:
    """Set exactly `mode` on our own `path` (a no-op on Windows, whose ACLs are per-user already)."""
    if os.name == "nt":
        return
    st = os.stat(path)
    if stat.S_IMODE(st.st_mode) != mode and st.st_uid == os.getuid():
        os.chmod(path, mode)


def private_dir(path: str | os.PathLike) -> Path:
    """`path` as a folder only its user can enter (created with its parents when missing)."""
    path = Path(path)
    try:
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise StateDirError(
            f"{path} (or a folder above it) is a file, not a folder; move it or set HAYAI_CONFIG_DIR "
            "to a folder"
        ) from None
    except OSError as e:
        raise StateDirError(f"cannot create the folder {path}: {e.strerror or e}") from None
    try:
        _tighten(path, DIR_MODE)
    except OSError as e:
        raise StateDirError(f"cannot make {path} private: {e.strerror or e}") from None
    return path


def private_file(path: str | os.PathLike) -> Path:
    """A regular file `path` readable by its user only: created empty (mode 0600) when missing,
    its mode fixed when looser. The folder should be a private_dir already."""
    path = Path(path)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
        os.close(fd)
    if path.is_file():
        _tighten(path, FILE_MODE)
    return path


def tighten_file(path: str | os.PathLike) -> None:
    """FILE_MODE on an existing file written by someone else (Qt's lock or INI writer), if it is there."""
    path = Path(path)
    if path.is_file():
        _tighten(path, FILE_MODE)


def move_aside(path: str | os.PathLike) -> Path:
    """Rename an unreadable file (or a folder in a file's place) to NAME.corrupt-DATE; returns the new path."""
    path = Path(path)
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 1
    while aside.exists() or aside.is_symlink():
        aside = aside.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
        n += 1
    path.replace(aside)
    return aside
