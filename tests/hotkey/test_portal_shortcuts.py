"""The GlobalShortcuts hotkey backend against a stand-in portal on a private D-Bus session bus.

Debian 12's portals do not offer GlobalShortcuts (KDE Plasma 6, GNOME 48+ and Hyprland do), so a
small service here plays org.freedesktop.portal.Desktop by the portal specification: the real
dbus-daemon carries the calls, the Request/Response round trips, and the Activated signal.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time

import pytest

pytest.importorskip("jeepney")

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_return, new_signal  # noqa: E402
from jeepney.bus_messages import message_bus  # noqa: E402
from jeepney.io.blocking import open_dbus_connection  # noqa: E402

PATH = "/org/freedesktop/portal/desktop"
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>{address}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*"/>
    <allow send_type="signal"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="signal"/>
    <allow receive_type="error"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
SHORTCUTS = "org.freedesktop.portal.GlobalShortcuts"


class FakePortal(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.connection = open_dbus_connection(bus="SESSION")
        self.connection.send_and_get_reply(
            message_bus.RequestName("org.freedesktop.portal.Desktop")
        )
        self.bound: list = []
        self.closed: list[str] = []
        self.session_handle = ""
        self._stopping = threading.Event()

    def _respond(self, sender: str, token: str, results: dict) -> None:
        request = f"{PATH}/request/{sender.lstrip(':').replace('.', '_')}/{token}"
        address = DBusAddress(request, interface="org.freedesktop.portal.Request")
        self.connection.send(new_signal(address, "Response", "ua{sv}", (0, results)))

    def run(self) -> None:
        while not self._stopping.is_set():
            try:
                message = self.connection.receive(timeout=0.2)
            except TimeoutError:
                continue
            except OSError:
                return
            header = message.header
            if header.message_type != MessageType.method_call:
                continue
            member = header.fields.get(HeaderFields.member)
            sender = header.fields.get(HeaderFields.sender)
            if member == "Get":
                self.connection.send(new_method_return(message, "v", (("u", 1),)))
            elif member == "CreateSession":
                (options,) = message.body
                token = options["handle_token"][1]
                self.session_handle = f"{PATH}/session/x/{options['session_handle_token'][1]}"
                self.connection.send(new_method_return(message, "o", (f"{PATH}/request/x",)))
                self._respond(sender, token, {"session_handle": ("o", self.session_handle)})
            elif member == "BindShortcuts":
                session, shortcuts, _parent, options = message.body
                self.bound = shortcuts
                self.connection.send(new_method_return(message, "o", (f"{PATH}/request/y",)))
                described = [
                    (sid, {"trigger_description": ("s", props["preferred_trigger"][1])})
                    for sid, props in shortcuts
                ]
                self._respond(
                    sender, options["handle_token"][1], {"shortcuts": ("a(sa{sv})", described)}
                )
            elif member == "Close":
                self.closed.append(header.fields.get(HeaderFields.path))
                self.connection.send(new_method_return(message))

    def activate(self, shortcut_id: str) -> None:
        address = DBusAddress(PATH, interface=SHORTCUTS)
        body = (self.session_handle, shortcut_id, 0, {})
        self.connection.send(new_signal(address, "Activated", "osta{sv}", body))

    def stop(self) -> None:
        self._stopping.set()
        self.join(timeout=5)
        self.connection.close()


@pytest.fixture
def session_bus(tmp_path, monkeypatch):
    if shutil.which("dbus-daemon") is None:
        pytest.skip("dbus-daemon is not installed (apt-get install dbus-daemon)")
    address = f"unix:path={tmp_path}/bus"
    # A bus of its own with no service folders: nothing may D-Bus-activate the machine's real portal.
    config = tmp_path / "bus.conf"
    config.write_text(BUS_CONFIG.format(address=address))
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while not (tmp_path / "bus").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    yield address
    daemon.terminate()
    daemon.wait(timeout=10)


def test_shortcuts_are_bound_through_the_portal_and_fire(session_bus):
    from app.hotkey.backends import portal

    # GIVEN a desktop whose portal offers GlobalShortcuts
    assert not portal.is_available()  # nothing owns the portal's name yet
    fake = FakePortal()
    fake.start()
    try:
        assert portal.is_available()
        # WHEN the backend starts with our two combos
        fired: list[str] = []
        listening = portal.start(
            {"capture": "<ctrl>+<alt>+o", "rescan": "<ctrl>+<alt>+r"}, fired.append
        )
        # THEN both are bound with the combos as preferred triggers, in the portal's format
        assert [(sid, props["preferred_trigger"][1]) for sid, props in fake.bound] == [
            ("capture", "CTRL+ALT+o"),
            ("rescan", "CTRL+ALT+r"),
        ]
        # AND an activation by the desktop reaches on_trigger with the shortcut's name
        fake.activate("rescan")
        deadline = time.monotonic() + 20
        while not fired and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fired == ["rescan"]
        # AND stopping closes the portal session (which unbinds the shortcuts)
        listening.stop()
        deadline = time.monotonic() + 10
        while not fake.closed and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fake.closed == [fake.session_handle]
    finally:
        fake.stop()
