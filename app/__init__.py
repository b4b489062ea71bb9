"""Hayai Desktop: everything with a window, a hotkey or the clipboard lives in this package."""

__version__ = "0.1.0"
