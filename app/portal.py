"""The XDG desktop portal over D-Bus (jeepney, pure Python): what the Wayland backends share.

A portal call returns a Request object path at once; the answer comes later as that Request's
`Response(u code, a{sv} results)` signal. `Portal.request()` subscribes to the Response *before*
calling (its path is predictable from our bus name and a token we choose), so no answer is missed,
and waits for it: code 0 = done, 1 = the user cancelled, 2 = refused or failed.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

BUS_NAME = "org.freedesktop.portal.Desktop"
OBJECT_PATH = "/org/freedesktop/portal/desktop"
REQUEST_INTERFACE = "org.freedesktop.portal.Request"

INSTALL_HINT = (
    "pip install jeepney; the desktop must run xdg-desktop-portal with a backend for it "
    "(xdg-desktop-portal-gnome, -kde, -wlr or -hyprland)"
)


class PortalError(RuntimeError):
    """The portal is missing, refused, or the user said no; the message says which."""


class PortalCancelled(PortalError):
    """The user closed the portal's dialog."""


def _jeepney():
    try:
        import jeepney
        from jeepney.io import blocking
    except ImportError as error:
        raise PortalError(f"the desktop portal needs jeepney ({INSTALL_HINT})") from error
    return jeepney, blocking


def token() -> str:
    return "hayai" + secrets.token_hex(6)


class Portal:
    """One session-bus connection to the portal. `with Portal() as portal: ...`."""

    def __init__(self, timeout_s: float = 5.0):
        jeepney, blocking = _jeepney()
        self._jeepney = jeepney
        self.timeout_s = timeout_s
        try:
            self.connection = blocking.open_dbus_connection(bus="SESSION")
        except Exception as error:  # no bus address, no bus, authentication
            raise PortalError(f"no D-Bus session bus: {error}") from error
        self.sender = self.connection.unique_name.lstrip(":").replace(".", "_")

    def __enter__(self) -> Portal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.connection.close()

    def address(self, interface: str, path: str = OBJECT_PATH):
        return self._jeepney.DBusAddress(path, bus_name=BUS_NAME, interface=interface)

    def call(self, interface: str, method: str, signature: str, body: tuple, path=OBJECT_PATH):
        """A plain method call; its reply's body. PortalError on a D-Bus error."""
        message = self._jeepney.new_method_call(
            self.address(interface, path), method, signature, body
        )
        reply = self.connection.send_and_get_reply(message, timeout=self.timeout_s)
        if reply.header.message_type == self._jeepney.MessageType.error:
            raise PortalError(f"{interface}.{method}: {reply.body[0] if reply.body else reply}")
        return reply.body

    def version(self, interface: str) -> int:
        """The portal interface's `version` property; PortalError when the portal lacks it."""
        (value,) = self.call("org.freedesktop.DBus.Properties", "Get", "ss", (interface, "version"))
        return int(value[1])

    @contextmanager
    def subscribed(self, rule_kwargs: dict) -> Iterator:
        """A queue of the signals matching the rule, subscribed on the bus while inside."""
        jeepney = self._jeepney
        rule = jeepney.MatchRule(type="signal", **rule_kwargs)
        bus = jeepney.message_bus
        self.connection.send_and_get_reply(
            jeepney.new_method_call(bus, "AddMatch", "s", (rule.serialise(),)),
            timeout=self.timeout_s,
        )
        with self.connection.filter(rule, bufsize=64) as queue:
            yield queue
        try:
            self.connection.send(
                jeepney.new_method_call(bus, "RemoveMatch", "s", (rule.serialise(),))
            )
        except OSError:
            pass

    def request(
        self, interface: str, method: str, signature: str, body: tuple, timeout_s: float
    ) -> dict:
        """Call a Request-returning portal method; the Response's results (a{sv}, values unwrapped).

        The options dict (a{sv}) must be the last argument of `body`; the handle token goes there."""
        handle_token = token()
        options = dict(body[-1])
        options["handle_token"] = ("s", handle_token)
        handle = f"{OBJECT_PATH}/request/{self.sender}/{handle_token}"
        rule = {"interface": REQUEST_INTERFACE, "member": "Response", "path": handle}
        with self.subscribed(rule) as queue:
            self.call(interface, method, signature, (*body[:-1], options))
            try:
                signal = self.connection.recv_until_filtered(queue, timeout=timeout_s)
            except TimeoutError as error:
                raise PortalError(
                    f"the desktop did not answer {method} within {timeout_s:.0f} s"
                ) from error
        code, results = signal.body
        if code == 1:
            raise PortalCancelled(f"{method} was cancelled")
        if code != 0:
            raise PortalError(
                f"the desktop refused {method} (permission denied, or its portal failed)"
            )
        return {key: value[1] for key, value in results.items()}


def has_interface(interface: str) -> bool:
    """True when the session's portal offers `interface` (any version). Never raises."""
    try:
        with Portal(timeout_s=10.0) as portal:  # the first call may start (D-Bus-activate) it
            return portal.version(interface) > 0
    except Exception:
        return False
