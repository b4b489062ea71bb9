"""The engine on this computer: the model loaded into this process."""

from __future__ import annotations

from app.engines.base import Traits

INSTALL_HINT = "install hayai-desktop with torch (README, GPU or CPU)"

TRAITS = Traits(remote=False)


def is_compatible() -> bool:
    return True


def is_available() -> bool:
    return True


def load(**options):
    from model import load_recognizer

    recognizer = load_recognizer(**options)
    recognizer.traits = TRAITS  # model/ knows nothing of the app's engines
    return recognizer
