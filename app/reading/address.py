"""`[HOST:]PORT`, as `hayai --websocket`, the settings and the WebSocket channel read it
(standard library only: the command line parses it before Qt is imported)."""

from __future__ import annotations

DEFAULT_HOST = "127.0.0.1"


def parse_address(text: str) -> tuple[str, int]:
    """`[HOST:]PORT` → (host, port); ValueError with the reason otherwise."""
    text = text.strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = DEFAULT_HOST, text
    host = host.strip("[]") or DEFAULT_HOST
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"{text!r} is not [HOST:]PORT (e.g. 6677 or 127.0.0.1:6677)") from None
    if not 1 <= number <= 65535:
        raise ValueError(f"{text!r}: the port must be 1 to 65535")
    return host, number
