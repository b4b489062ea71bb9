"""The XDG desktop portal over D-Bus (jeepney, pure Python): what the Wayland backends share.

A portal call returns a Request object path at once; the answer comes later as that Request's
`Response(u code, a{sv} results)` signal. `Portal.request()` subscribes to the Response *before*
calling (its path is predictable from our bus name and a token we choose), so no answer is missed,
and waits for it: code 0 = done, 1 = the user cancelled, 2 = refused or failed. The wait can be
cancelled from another thread (a `threading.Event`): the Request is then closed, which closes the
desktop's dialog.

xdg-desktop-portal is started on demand (D-Bus activation) and can take half a minute on a fresh
login; `wait_until_up()` probes it (a harmless property read, never the request itself, which
would be taken twice) with a bounded back-off and says which it was: not answering yet, or
answering without the interface.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

BUS_NAME = "org.freedesktop.portal.Desktop"
OBJECT_PATH = "/org/freedesktop/portal/desktop"
REQUEST_INTERFACE = "org.freedesktop.portal.Request"

PORTAL_HINT = (
    "the desktop must run xdg-desktop-portal with a backend for it "
    "(xdg-desktop-portal-gnome, -kde, -wlr or -hyprland)"
)
try:  # name jeepney only where it is missing
    import jeepney as _jeepney_found  # noqa: F401

    INSTALL_HINT = PORTAL_HINT
except ImportError:
    INSTALL_HINT = f"pip install jeepney; {PORTAL_HINT}"


STARTUP_BUDGET_S = 60.0  # how long a capture waits for xdg-desktop-portal to start answering
PROBE_TIMEOUTS_S = (2.0, 3.0, 5.0, 8.0, 12.0)  # one probe each, then the last one again
NOT_OFFERED_ERRORS = (  # the portal answered: it simply lacks the interface
    "org.freedesktop.DBus.Error.UnknownInterface",
    "org.freedesktop.DBus.Error.UnknownProperty",
    "org.freedesktop.DBus.Error.InvalidArgs",
    "org.freedesktop.DBus.Error.UnknownMethod",
)


class PortalError(RuntimeError):
    """The portal is missing, refused, or the user said no; the message says which."""

    def __init__(self, message: str, error_name: str = ""):
        super().__init__(message)
        self.error_name = error_name  # the D-Bus error's name, when the bus or portal sent one


class PortalRefused(PortalError):
    """The desktop answered no: permission denied, or its portal backend failed."""


class PortalNotAnswering(PortalError):
    """xdg-desktop-portal did not answer (yet): still starting, or hung."""


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
        try:
            reply = self.connection.send_and_get_reply(message, timeout=self.timeout_s)
        except TimeoutError as error:
            raise PortalNotAnswering(
                f"the desktop portal did not answer {method} within {self.timeout_s:.0f} s"
            ) from error
        if reply.header.message_type == self._jeepney.MessageType.error:
            name = reply.header.fields.get(self._jeepney.HeaderFields.error_name, "")
            detail = reply.body[0] if reply.body else name
            raise PortalError(f"{interface}.{method}: {detail}", error_name=name)
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

    def wait_until_up(
        self,
        interface: str,
        cancelled: threading.Event | None = None,
        on_retry: Callable[[float], None] | None = None,
        budget_s: float | None = None,
    ) -> int:
        """The interface's version once the portal answers, probing with a bounded back-off.

        `on_retry(seconds waited so far)` is called before each retry. Raises PortalNotAnswering
        when the portal has not answered within `budget_s` (STARTUP_BUDGET_S), PortalError when it answers without
        `interface`, PortalCancelled when `cancelled` is set."""
        cancelled = cancelled or threading.Event()
        budget_s = STARTUP_BUDGET_S if budget_s is None else budget_s
        started = time.monotonic()
        last: PortalError | None = None
        for attempt in itertools.count():
            if cancelled.is_set():
                raise PortalCancelled("cancelled while waiting for the desktop portal")
            waited = time.monotonic() - started
            left = budget_s - waited
            if left <= 0:
                break
            if attempt:
                if on_retry is not None:
                    on_retry(waited)
                if cancelled.wait(min(2.0 ** (attempt - 1), left)):  # 1, 2, 4, … s apart
                    raise PortalCancelled("cancelled while waiting for the desktop portal")
            self.timeout_s = min(PROBE_TIMEOUTS_S[min(attempt, len(PROBE_TIMEOUTS_S) - 1)], left)
            try:
                version = self.version(interface)
            except PortalError as error:
                if error.error_name in NOT_OFFERED_ERRORS:
                    raise PortalError(
                        f"the desktop portal runs but offers no {interface.rsplit('.', 1)[-1]} "
                        "interface (its backend for this desktop is missing: "
                        "xdg-desktop-portal-gnome, -kde, -wlr or -hyprland)",
                        error.error_name,
                    ) from error
                last = error  # not started yet, starting, or failed to start: try again
                continue
            if version <= 0:
                raise PortalError(f"the desktop portal offers no {interface}")
            return version
        raise PortalNotAnswering(
            f"the desktop portal (xdg-desktop-portal) did not answer within {budget_s:.0f} s; "
            "it may still be starting (on a fresh login it can take half a minute)"
            + (f" (last: {last})" if last is not None else ""),
            last.error_name if last is not None else "",
        )

    def request(
        self,
        interface: str,
        method: str,
        signature: str,
        body: tuple,
        timeout_s: float | None,
        cancelled: threading.Event | None = None,
    ) -> dict:
        """Call a Request-returning portal method; the Response's results (a{sv}, values unwrapped).

        The options dict (a{sv}) must be the last argument of `body`; the handle token goes there.
        `timeout_s` None waits for the answer until `cancelled` is set (then the Request is
        closed, and with it the desktop's dialog)."""
        handle_token = token()
        options = dict(body[-1])
        options["handle_token"] = ("s", handle_token)
        handle = f"{OBJECT_PATH}/request/{self.sender}/{handle_token}"
        rule = {"interface": REQUEST_INTERFACE, "member": "Response", "path": handle}
        with self.subscribed(rule) as queue:
            self.call(interface, method, signature, (*body[:-1], options))
            signal = self._response(queue, handle, method, timeout_s, cancelled)
        code, results = signal.body
        if code == 1:
            raise PortalCancelled(f"{method} was cancelled")
        if code != 0:
            raise PortalRefused(
                f"the desktop refused {method} (permission denied, or its portal failed)"
            )
        return {key: value[1] for key, value in results.items()}

    def _response(self, queue, handle: str, method: str, timeout_s, cancelled):
        """The Response signal, waited for in short slices so that `cancelled` is seen at once."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            if cancelled is not None and cancelled.is_set():
                try:  # closes the desktop's dialog; no answer is awaited
                    self.connection.send(
                        self._jeepney.new_method_call(
                            self.address(REQUEST_INTERFACE, handle), "Close"
                        )
                    )
                except OSError:
                    pass
                raise PortalCancelled(f"{method} was cancelled")
            slice_s = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
            if slice_s <= 0:
                raise PortalNotAnswering(
                    f"the desktop did not answer {method} within {timeout_s:.0f} s"
                )
            try:
                return self.connection.recv_until_filtered(queue, timeout=slice_s)
            except TimeoutError:
                continue


def is_installed() -> bool:
    """True when the session bus runs xdg-desktop-portal or can start it (D-Bus activation).

    Answered by the bus itself at once, so it never waits on a portal that is still starting;
    whether the portal offers a given interface is learned when it is used. Never raises."""
    try:
        with Portal(timeout_s=2.0) as portal:
            jeepney = portal._jeepney
            bus = jeepney.message_bus
            for method, body in (("NameHasOwner", (BUS_NAME,)), ("ListActivatableNames", ())):
                reply = portal.connection.send_and_get_reply(
                    jeepney.new_method_call(bus, method, "s" if body else "", body), timeout=2.0
                )
                if reply.header.message_type == jeepney.MessageType.error:
                    continue
                (value,) = reply.body
                if value is True or (isinstance(value, list) and BUS_NAME in value):
                    return True
    except Exception:
        return False
    return False


def has_interface(interface: str) -> bool:
    """True when the session's portal offers `interface` (any version). Never raises."""
    try:
        with Portal(timeout_s=10.0) as portal:  # the first call may start (D-Bus-activate) it
            return portal.version(interface) > 0
    except Exception:
        return False
