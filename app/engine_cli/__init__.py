"""`hayai ocr` (`ocr`), `hayai bench` (`bench`: the engine's benchmark) and `hayai model` (`model`):
the engine from the command line, one module per sub-command (no Qt here). A CLI, not a library:
what others need is in app/engines/local.py and model/images.py.

Bad input never prints a traceback: a file that cannot be read becomes an error line, a model
that cannot be loaded a one-line message, and the exit code says which.
"""

from __future__ import annotations

import sys


def _fail(message: str, code: int = 2) -> int:
    print(f"hayai: {message}", file=sys.stderr)
    return code
