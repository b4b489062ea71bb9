"""A stand-in xdg-desktop-portal with the Screenshot interface, D-Bus-activated by a test's own bus.

Real GNOME and KDE portals cannot run here, so this plays their quirks by the portal
specification: it may take a while to start (the bus holds the calls meanwhile, as with a fresh
login's xdg-desktop-portal), the first Screenshot may wait on a "permission dialog" (an answer
delay, or no answer at all until the request is closed), and it answers with code 0 and a file
URI, 1 (the user cancelled) or 2 (refused). The screenshot file is written world-readable into
--folder, as xdg-desktop-portal-wlr writes /tmp/out.png. Every call is logged to --log, one JSON
line each, for the test to read.

    python screenshot_portal.py --image IMAGE --folder DIR --log FILE
        [--start-delay S] [--first-answer-delay S | --first-answer never] [--code N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

BUS_NAME = "org.freedesktop.portal.Desktop"
PATH = "/org/freedesktop/portal/desktop"
SCREENSHOT = "org.freedesktop.portal.Screenshot"
REQUEST = "org.freedesktop.portal.Request"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--image", required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--start-delay", type=float, default=0.0)
    parser.add_argument("--first-answer-delay", default="0")  # seconds, or "never"
    parser.add_argument("--code", type=int, default=0)
    args = parser.parse_args()
    log_path = Path(args.log)

    def log(**event) -> None:
        with log_path.open("a") as handle:
            handle.write(json.dumps(event) + "\n")

    log(event="started", pid=os.getpid())
    time.sleep(args.start_delay)  # still starting: the bus keeps the callers' messages waiting
    connection = open_dbus_connection(bus="SESSION")
    connection.send_and_get_reply(message_bus.RequestName(BUS_NAME))
    log(event="owns the name")
    pending: dict[str, tuple[float, str]] = {}  # request path -> (due time, sender), or never
    requests = 0
    while True:
        now = time.monotonic()
        for handle, (due, _sender) in list(pending.items()):
            if due <= now:
                del pending[handle]
                results = {}
                if args.code == 0:
                    target = Path(args.folder) / "out.png"
                    shutil.copyfile(args.image, target)
                    target.chmod(0o644)  # as portal-wlr's /tmp/out.png: every user can read it
                    results = {"uri": ("s", target.as_uri())}
                address = DBusAddress(handle, interface=REQUEST)
                connection.send(new_signal(address, "Response", "ua{sv}", (args.code, results)))
                log(event="answered", handle=handle, code=args.code)
        try:
            message = connection.receive(timeout=0.05)
        except TimeoutError:
            continue
        header = message.header
        if header.message_type != MessageType.method_call:
            continue
        member = header.fields.get(HeaderFields.member)
        sender = header.fields.get(HeaderFields.sender, "")
        if member == "Get":
            interface, _prop = message.body
            if interface == SCREENSHOT:
                connection.send(new_method_return(message, "v", (("u", 2),)))
            else:
                error = "org.freedesktop.DBus.Error.UnknownInterface"
                connection.send(new_error(message, error, "s", (f"no {interface}",)))
        elif member == "Screenshot":
            _parent, options = message.body
            token = options["handle_token"][1]
            handle = f"{PATH}/request/{sender.lstrip(':').replace('.', '_')}/{token}"
            connection.send(new_method_return(message, "o", (handle,)))
            requests += 1
            delay = args.first_answer_delay if requests == 1 else "0"
            due = float("inf") if delay == "never" else time.monotonic() + float(delay)
            pending[handle] = (due, sender)
            log(event="Screenshot", handle=handle, options=sorted(options))
        elif member == "Close":
            handle = header.fields.get(HeaderFields.path)
            pending.pop(handle, None)  # a closed request is never answered
            connection.send(new_method_return(message))
            log(event="Close", handle=handle)


if __name__ == "__main__":
    main()
