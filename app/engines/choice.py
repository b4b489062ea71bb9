"""Which model Hayai reads with: one answer for the tray app, `hayai ocr`, `hayai bench`,
`hayai serve` and `hayai model info|path`.

In this order:

1. a folder given for this run (`--model DIR`, of a sub-command or of the app);
2. a variant asked for this run (`hayai ocr --variant nova`): that download;
3. the folder chosen in Settings (`model/folder`);
4. the download of the Settings variant (`model/variant`, v2.1 unless changed), in the Hugging
   Face cache.

A chosen folder is used as it is: when it does not exist or lacks a file, loading says so (it is
never replaced by a download). Standard library only; the settings file is read through
app/settings/ (QtCore's QSettings) only when no `Settings` is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from model.config import DEFAULT_VARIANT, ImageCap, declared_cap

# The order above when a command is given neither --model nor --variant (their help, app/cli.py).
SETTINGS_MODEL = (
    "the model folder chosen in Settings, else the download of the Settings variant "
    f"({DEFAULT_VARIANT} unless changed) in the Hugging Face cache"
)
ORIGINS = {  # why this model, in words
    "--model": "the folder given with --model",
    "settings": "the model folder chosen in Settings",
    "--variant": "the download asked for with --variant",
    "download": "the download of the model variant in Settings",
}


@dataclass(frozen=True)
class ModelChoice:
    folder: str | None  # the folder to load; None = the download of `variant`
    # the download to use; with a folder, the variant asked of it (None: the weights decide)
    variant: str | None
    origin: str  # a key of ORIGINS

    @property
    def why(self) -> str:
        return ORIGINS[self.origin]

    @property
    def image_cap(self) -> ImageCap:
        """The model's image cap, known before it loads: every command and the app refuse a larger
        image from its header, in the same words, before the model loads."""
        return declared_cap(self.folder, self.variant)


def resolve_model(folder: str | None = None, variant: str | None = None, settings=None):
    """The model to read with: `folder`/`variant` given for this run (command-line options, None when
    not given) beat `settings` (an app.settings.Settings; the user's settings file when None)."""
    if settings is None:
        settings = user_settings()
    if folder:
        return ModelChoice(str(Path(folder).expanduser()), variant, "--model")
    if variant:
        return ModelChoice(None, variant, "--variant")
    chosen = settings.get("model/folder") if settings is not None else ""
    if chosen:
        overridden = settings is not None and "model/folder" in settings.overrides
        return ModelChoice(chosen, None, "--model" if overridden else "settings")
    return ModelChoice(
        None, settings.get("model/variant") if settings is not None else DEFAULT_VARIANT, "download"
    )


def user_settings():
    """The user's settings as the app reads them (None where Qt's core library cannot load)."""
    try:
        from app.settings import Settings
    except ImportError:  # a server without PySide6's libraries: the defaults
        return None
    return Settings()
