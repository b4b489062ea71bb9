"""The engine on this computer: the model loaded into this process."""

from __future__ import annotations

INSTALL_HINT = "install hayai-desktop with torch (README, GPU or CPU)"


def is_compatible() -> bool:
    return True


def is_available() -> bool:
    return True


def load(**options):
    from model import load_recognizer

    return load_recognizer(**options)
