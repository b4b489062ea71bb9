"""The tray icon: a view that only emits. Its state (model line, busy icon, hotkeys) is set from outside."""

from __future__ import annotations

from PySide6.QtCore import QObject, QRect, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon, QVBoxLayout, QWidget

from app.platform.sway import follow
from app.ui import theme
from app.ui.guard import qt_override
from app.ui.rich_text import PlainLabel, titled
from app.ui.screens import screen_area
from app.ui.views import EntryView

STATUS_LINE_PX = 380  # a status line in the menu (hotkey problem, watch note) is elided to this


class Tray(EntryView, QObject):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.menu = QMenu()
        self.menu.setStyleSheet(theme.STYLE)
        self.menu.setFont(theme.ui_font(10))
        self.menu.setToolTipsVisible(True)  # an elided status line shows whole on hover
        self.capture_action = self._add("Capture region", self.capture_requested)
        self.page_action = self._add("Read the whole screen", self.page_requested)
        self.hover_action = self.menu.addAction("Hover to read")
        self.hover_action.setCheckable(True)  # checked by the app (set_hover), from the setting
        self.hover_action.triggered.connect(
            lambda: self.hover_toggled.emit(self.hover_action.isChecked())
        )
        self.rescan_action = self._add("Re-scan last region", self.rescan_requested)
        self.rescan_action.setEnabled(False)
        self.hotkey_problem_action = self.menu.addAction("")  # a hotkey that does not work: why
        self.hotkey_problem_action.setEnabled(False)
        self.watch_action = self._add("Watch a region…", self.watch_requested)
        self.watch_toggle_action = self._add("Pause watching", self.watch_toggle_requested)
        self.watch_stop_action = self._add("Stop watching", self.watch_stop_requested)
        self.folder_waiting_action = self.menu.addAction("")
        self.folder_waiting_action.setEnabled(False)  # a count, not an action
        self.watch_note_action = self.menu.addAction("")  # why the watched region is not read
        self.watch_note_action.setEnabled(False)
        self.entries = {
            "capture": self.capture_action,
            "rescan": self.rescan_action,
            "hover": self.hover_action,
            "watch_toggle": self.watch_toggle_action,
            "watch_stop": self.watch_stop_action,
            "folder_waiting": self.folder_waiting_action,
            "hotkey_problem": self.hotkey_problem_action,
            "watch_note": self.watch_note_action,
        }
        self.set_watch_state("stopped")
        self.set_folder_waiting(0)
        self.set_hotkey_problem("")
        self.menu.addSeparator()
        self.history_action = self._add("History…", self.history_requested)
        self.log_action = self._add("Reading log…", self.log_requested)
        self.settings_action = self._add("Settings…", self.settings_requested)
        self.menu.addSeparator()
        self.model_action = self._add("Model: starting…", self.model_requested)
        self.model_action.setEnabled(False)
        self.about_action = self._add("About Hayai", self.about_requested)
        self.menu.addSeparator()
        self.quit_action = self._add("Quit", self.quit_requested)
        self.icon = QSystemTrayIcon(theme.app_icon())
        self.icon.setToolTip("Hayai — starting")
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._on_activated)
        self._busy = False
        self._toast: Toast | None = None  # in place of Qt's own balloon (notify)

    def _add(self, text: str, signal) -> QAction:
        action = self.menu.addAction(text)
        action.triggered.connect(signal.emit)
        return action

    def _set_line(self, line, text: str) -> None:
        super()._set_line(line, text)
        metrics = self.menu.fontMetrics()
        line.setText(metrics.elidedText(text, Qt.TextElideMode.ElideRight, STATUS_LINE_PX))

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def set_model_state(self, text: str, actionable: bool = False) -> None:
        """The state line: "Model: loading…", "Model: ready · cpu · v2.1", or an error (then clickable)."""
        self.model_action.setText(text)
        self.model_action.setEnabled(actionable)
        self.icon.setToolTip(titled("Hayai", text))  # the text names model folders

    def set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.icon.setIcon(theme.app_icon(busy))

    def is_busy(self) -> bool:
        return self._busy

    def notify(self, title: str, message: str, error: bool = False) -> None:
        """The desktop's notification; where there is none (an X11 tray such as trayer or an old
        panel), Qt draws its own balloon, light yellow in a dark app: our toast, by the icon, instead."""
        icon = (
            QSystemTrayIcon.MessageIcon.Warning
            if error
            else QSystemTrayIcon.MessageIcon.Information
        )
        self.icon.showMessage(title, message, icon, 8000)
        balloon = qt_balloon()
        if balloon is not None:
            balloon.close()
            if self._toast is None:
                self._toast = Toast()
            self._toast.show_message(title, message, error, near=self.icon.geometry())

    def _on_activated(self, reason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:  # left click
            self.capture_requested.emit()


def qt_balloon() -> QWidget | None:
    """The balloon Qt drew for QSystemTrayIcon.showMessage, when it drew one (no notification
    service on the desktop); it draws it at once."""
    return next(
        (
            w
            for w in QApplication.topLevelWidgets()
            if w.metaObject().className() == "QBalloonTip" and w.isVisible()
        ),
        None,
    )


NOTICE_TITLE = "Hayai notice"


class Toast(QWidget):
    """A small on-top note in the screen corner, for messages when there is no tray to show them."""

    def __init__(self, parent=None):
        # On Wayland a tooltip needs a parent window to exist at all (an xdg_popup): a plain
        # frameless window there instead, placed by the compositor.
        kind = (
            Qt.WindowType.Tool
            if QGuiApplication.platformName().startswith("wayland")
            else Qt.WindowType.ToolTip
        )
        super().__init__(
            parent,
            kind | Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint,
        )
        self.setWindowTitle(NOTICE_TITLE)  # how Sway's criteria find it (app/platform/sway.py)
        theme.apply(self, "HayaiCard")
        self.setStyleSheet(
            self.styleSheet() + f"QWidget#HayaiCard {{ border: 1px solid {theme.BORDER}; }}"
        )
        self.title = PlainLabel("")  # titles and messages name files, servers' answers
        self.title.setStyleSheet("font-weight: 600;")
        self.body = PlainLabel("")
        self.body.setWordWrap(True)
        self.body.setProperty("role", "muted")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.addWidget(self.title)
        layout.addWidget(self.body)
        self.setFixedWidth(380)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)

    def show_message(
        self,
        title: str,
        message: str,
        error: bool = False,
        ms: int = 8000,
        near: QRect | None = None,
    ) -> None:
        """In the screen's corner, or beside `near` (the tray icon) when given."""
        self.title.setText(title)
        self.title.setStyleSheet(
            f"font-weight: 600; color: {theme.DANGER if error else theme.TEXT};"
        )
        self.body.setText(message)
        self.adjustSize()
        if near is not None and near.isValid():
            area = screen_area(near.center())
            above = near.center().y() > area.center().y()  # a tray at the bottom: above it
            y = near.top() - 8 - self.height() if above else near.bottom() + 8
            x = near.right() - self.width()
            self.move(
                max(area.left(), min(x, area.right() - self.width())),
                max(area.top(), min(y, area.bottom() - self.height())),
            )
        else:
            area = screen_area()
            self.move(area.right() - self.width() - 16, area.bottom() - self.height() - 16)
        self.show()
        self.raise_()
        follow(self)  # on Sway, moved to the corner too (Wayland lets no app place its windows)
        self._timer.start(ms)

    @qt_override
    def mousePressEvent(self, event) -> None:
        self.hide()
