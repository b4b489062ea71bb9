"""`hayai watch [--region X,Y,W,H | --last] [--interval S]`, `hayai watch --stop|--toggle`, and the value of
`hayai --websocket [HOST:]PORT` (read by `app.reading.address`).

Like `hayai capture`, the command goes to the running app over the single-instance socket (the app is
started when none runs); the region is in virtual-desktop physical pixels, as `--debug-dir`'s `box`.
Standard library only (parsed before Qt is imported).
"""

from __future__ import annotations

import argparse

from app.reading.address import parse_address
from app.reading.last_region import MIN_SIDE


def region(text: str) -> tuple[int, int, int, int]:
    try:
        x, y, w, h = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not X,Y,W,H (four whole numbers, e.g. 100,800,1200,200)"
        ) from None
    if w < MIN_SIDE or h < MIN_SIDE:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the width and height must be at least {MIN_SIDE}"
        )
    return x, y, w, h


def interval(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0.1 <= seconds <= 10:
        raise argparse.ArgumentTypeError(f"{text}: the interval must be 0.1 to 10 seconds")
    return seconds


def websocket_address(text: str) -> str:
    """argparse type of `hayai --websocket [HOST:]PORT`: the address as HOST:PORT."""
    try:
        host, port = parse_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "watch",
        help="tell the running app to watch a region and read it whenever its text changes "
        "(starts the app if needed)",
        description="Without --region or --last the app asks you to box the region.",
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--region",
        type=region,
        metavar="X,Y,W,H",
        help="the region in virtual-desktop physical pixels (as --debug-dir's box)",
    )
    which.add_argument("--last", action="store_true", help="watch the last boxed region")
    which.add_argument("--stop", action="store_true", help="stop watching")
    which.add_argument(
        "--toggle", action="store_true", help="pause or resume watching (as its hotkey does)"
    )
    p.add_argument(
        "--interval",
        type=interval,
        metavar="S",
        help="seconds between checks (default: the setting, 0.5)",
    )


def message(args) -> str:
    """The line sent to the running app."""
    if args.stop:
        return "watch-stop"
    if args.toggle:
        return "watch-toggle"
    parts = ["watch"]
    if args.region:
        parts.append("region=" + ",".join(str(v) for v in args.region))
    elif args.last:
        parts.append("last")
    if args.interval:
        parts.append(f"interval={args.interval:g}")
    return " ".join(parts)


def parse_message(rest: str) -> dict:
    """The app's side of `message`: {"region": (x, y, w, h) | None, "last": bool, "interval_ms": int | None}.

    ValueError on anything else (the socket carries only our own lines, but never trust it blindly).
    """
    out: dict = {"region": None, "last": False, "interval_ms": None}
    for part in rest.split():
        key, _, value = part.partition("=")
        try:
            if key == "region":
                out["region"] = region(value)
            elif key == "last" and not value:
                out["last"] = True
            elif key == "interval":
                out["interval_ms"] = round(interval(value) * 1000)
            else:
                raise ValueError(f"unknown watch option {part!r}")
        except argparse.ArgumentTypeError as exc:
            raise ValueError(str(exc)) from None
    return out
