"""One guard for every Qt virtual override (paintEvent, mouse and key events, eventFilter, …).

A Python exception that leaves an override unwinds through Qt's C++ frames: PySide prints it and
carries on with a half-done event, and a paint event that raised leaves its QPainter open, after
which Qt aborts ("Cannot destroy paint device that is being painted", then a segfault). So every
override in app/ is decorated with `@qt_override`: an exception is logged with its traceback, any
QPainter still open in the failed frames is ended, and the Qt base class's own implementation
answers instead (nothing for a paint event, `False` for an event filter, the default size hint).
`tests/ui/test_guard.py` checks that every override in app/ carries it.
"""

from __future__ import annotations

import functools
import logging

from PySide6.QtGui import QPainter

log = logging.getLogger(__name__)

GUARDED = "__qt_override_guarded__"  # set on each guarded function (the test looks for it)


def qt_override(method):
    """Decorate a Qt virtual override so that no exception escapes it (see the module's doc)."""
    name = method.__name__

    @functools.wraps(method)
    def guarded(self, *args):
        try:
            return method(self, *args)
        except Exception as error:
            log.error(
                "error in %s.%s (the event was dropped)",
                type(self).__name__,
                name,
                exc_info=error,
            )
            _end_painters(error.__traceback__)
            return _base_answer(self, guarded, name, args)

    setattr(guarded, GUARDED, True)
    return guarded


def _end_painters(traceback) -> None:
    """End every QPainter still active in the frames the exception went through."""
    while traceback is not None:
        for value in list(traceback.tb_frame.f_locals.values()):
            if isinstance(value, QPainter) and value.isActive():
                value.end()
        traceback = traceback.tb_next


def _base_answer(widget, guarded, name: str, args: tuple):
    """What the next class after the overriding one answers (Qt's own default, usually)."""
    for owner in type(widget).__mro__:
        if owner.__dict__.get(name) is guarded:
            try:
                return getattr(super(owner, widget), name)(*args)
            except Exception:  # the base is Qt's C++ or another guarded override: never expected
                log.exception("the base %s.%s failed too", owner.__name__, name)
                return False if name in ("event", "eventFilter") else None
    return None
