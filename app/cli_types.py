"""argparse types of the `hayai` command lines (app/cli.py and the sub-commands' own options, e.g.
app/serve/cli.py): a value that is not one is the command's usage error, in words.

Standard library only, as app/cli.py.
"""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1 (0 steps, beams, runs or crops would do nothing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_ints(text: str) -> tuple[int, ...]:
    """argparse type: whole numbers of at least 1, separated by commas (`1,8,64`)."""
    return tuple(positive_int(part.strip()) for part in text.split(","))


def batch_size(text: str) -> int | str:
    """argparse type: a whole number of at least 1, or `auto` (measured on this device)."""
    return "auto" if text == "auto" else positive_int(text)


def point(text: str) -> tuple[int, int]:
    """argparse type: a point `X,Y` in image pixels (whole numbers, at least 0)."""
    parts = text.split(",")
    try:
        x, y = (int(part.strip()) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a point X,Y of whole numbers") from None
    if x < 0 or y < 0:
        raise argparse.ArgumentTypeError(f"a point's X and Y are at least 0, got {text!r}")
    return x, y
