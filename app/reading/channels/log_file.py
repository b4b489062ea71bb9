"""Text out to a file: `TextLogFile` appends each text as one line."""

from __future__ import annotations

from pathlib import Path


class TextLogFile:
    """Appends each text as one line (line breaks inside it become spaces), UTF-8."""

    def __init__(self, path: str):
        self.path = Path(path).expanduser()

    def append(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(" ".join(text.splitlines()) + "\n")
