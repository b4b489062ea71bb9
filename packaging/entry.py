"""Entry point of the PyInstaller bundle: the same as the `hayai` console script."""

import multiprocessing
import sys

from app.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # harmless unless something starts worker processes (Windows/macOS)
    sys.exit(main())
