"""The settings dialog, generated from the settings table (app/settings.py): one widget per row."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFontComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.settings import SETTINGS, Setting, Settings
from app.ui import theme

SECTIONS = {
    "hotkey": "Hotkeys",
    "capture": "Screen capture",
    "output": "Output",
    "model": "Model",
    "overlay": "Overlay",
    "history": "History",
    "app": "Startup",
    "dictionary": "Dictionary",
}


def _validate_hotkey(text: str) -> str | None:
    """None when `text` is a valid combo (or empty = off), else the reason."""
    if not text.strip():
        return None
    try:
        from app.hotkey import validate_combo
    except ImportError:
        return None
    try:
        validate_combo(text)
    except Exception as exc:  # HotkeyError with the invalid part
        return str(exc)
    return None


class SettingsDialog(QDialog):
    def __init__(self, settings: Settings, parent=None):
        super().__init__(parent)
        theme.apply(self)
        self.setWindowTitle("Hayai — Settings")
        self.setWindowIcon(theme.app_icon())
        self.settings = settings
        self.editors: dict[str, QWidget] = {}
        self.error = QLabel("")
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)

        form = QFormLayout()
        form.setHorizontalSpacing(16)
        form.setVerticalSpacing(8)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        section = None
        for setting in SETTINGS:
            if not setting.label:
                continue
            name = SECTIONS.get(setting.key.split("/")[0], "Other")
            if name != section:
                section = name
                header = QLabel(name)
                header.setProperty("role", "section")
                form.addRow(header)
            editor = self._editor(setting)
            editor.setToolTip(setting.help)
            self.editors[setting.key] = editor
            label = "" if setting.type is bool else setting.label
            if setting.key in settings.overrides:
                note = QLabel(f"({setting.cli} overrides this for the current run)")
                note.setProperty("role", "muted")
                box = QVBoxLayout()
                box.setSpacing(2)
                box.addWidget(editor)
                box.addWidget(note)
                form.addRow(label, box)
            else:
                form.addRow(label, editor)

        save = QPushButton("Save")
        save.setProperty("role", "primary")
        save.setDefault(True)
        cancel = QPushButton("Cancel")
        save.clicked.connect(self.save)
        cancel.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.error, 1)
        buttons.addWidget(cancel)
        buttons.addWidget(save)
        self.save_button = save

        layout = QVBoxLayout(self)
        layout.setContentsMargins(22, 16, 22, 18)
        layout.setSpacing(12)
        title = QLabel("Settings")
        title.setProperty("role", "title")
        layout.addWidget(title)
        layout.addLayout(form)
        layout.addLayout(buttons)
        self.setMinimumWidth(560)

    def _editor(self, setting: Setting) -> QWidget:
        value = self.settings.stored(setting.key)
        if setting.type is bool:
            box = QCheckBox(setting.label)
            box.setChecked(bool(value))
            return box
        if setting.type is int:
            spin = QSpinBox()
            spin.setRange(setting.minimum, setting.maximum)
            spin.setValue(int(value))
            return spin
        if setting.choices:
            combo = QComboBox()
            combo.addItems(list(setting.choices))
            combo.setCurrentText(str(value))
            return combo
        if setting.kind == "font":
            fonts = QFontComboBox()
            fonts.setCurrentFont(QFont(theme.cjk_font(str(value)).family()))
            return fonts
        line = QLineEdit(str(value))
        if setting.kind == "hotkey":
            line.setPlaceholderText("e.g. <ctrl>+<alt>+o   (empty = off)")
            return line
        if setting.kind == "folder":
            line.setPlaceholderText("the downloaded model")
            row = QWidget()
            h = QHBoxLayout(row)
            h.setContentsMargins(0, 0, 0, 0)
            h.addWidget(line, 1)
            browse = QPushButton("Browse…")
            browse.clicked.connect(lambda: self._browse(line))
            h.addWidget(browse)
            row.line = line  # the value lives in the line edit
            return row
        return line

    def _browse(self, line: QLineEdit) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Model folder", line.text())
        if folder:
            line.setText(folder)

    def values(self) -> dict[str, object]:
        """What the widgets hold now, by table key."""
        out: dict[str, object] = {}
        for key, editor in self.editors.items():
            if isinstance(editor, QCheckBox):
                out[key] = editor.isChecked()
            elif isinstance(editor, QSpinBox):
                out[key] = editor.value()
            elif isinstance(editor, QFontComboBox):
                out[key] = editor.currentFont().family()
            elif isinstance(editor, QComboBox):
                out[key] = editor.currentText()
            elif isinstance(editor, QLineEdit):
                out[key] = editor.text().strip()
            else:
                out[key] = editor.line.text().strip()
        return out

    def save(self) -> bool:
        values = self.values()
        problems = []
        for key in ("hotkey/capture", "hotkey/rescan"):
            if key in values:
                reason = _validate_hotkey(str(values[key]))
                if reason:
                    problems.append(f"{key.split('/')[1].capitalize()} hotkey: {reason}")
        capture, rescan = values.get("hotkey/capture"), values.get("hotkey/rescan")
        if capture and capture == rescan:
            problems.append("The capture and re-scan hotkeys are the same.")
        if problems:
            self.error.setText(" ".join(problems))
            return False
        self.error.setText("")
        self.settings.update(values)
        self.accept()
        return True
