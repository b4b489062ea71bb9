"""The engine's exceptions, importable without torch (the app's worker and dialogs catch them by class).

Every message is meant for the user: it says what is wrong and what to do.
"""

from __future__ import annotations


class ModelNotFoundError(FileNotFoundError):
    """A model folder or one of its files is missing; the message says how to get it."""

    def __str__(self) -> str:  # FileNotFoundError would print "[Errno None] ..." otherwise
        return self.args[0] if self.args else "model not found"


class WeightsError(ValueError):
    """The files are there but unusable: corrupt, truncated, or not shaped like a Hayai checkpoint."""


class TokenizerError(WeightsError):
    """tokenizer.json (or tokenizer_config.json) cannot be read or lacks the special tokens."""


class DownloadError(RuntimeError):
    """A download failed: offline, not found, checksum mismatch, disk full, ..."""


class DownloadCancelled(DownloadError):
    """The caller set the `cancel` event; the partial file is kept and the next download resumes it."""


__all__ = [
    "DownloadCancelled",
    "DownloadError",
    "ModelNotFoundError",
    "TokenizerError",
    "WeightsError",
]
