"""The settings dialog, generated from the settings table (app/settings/table.py): one widget per row."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFontComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.engines import REGISTRY, settings_problem, traits
from app.hotkey.combo import combo_label
from app.settings import Settings
from app.settings.table import HOTKEY_KEYS, SETTINGS, Setting
from app.ui import theme
from app.ui.anki_settings import AnkiSettingsPage
from app.ui.hotkey_edit import HotkeyEdit
from app.ui.rich_text import PlainLabel

SECTIONS = {
    "hotkey": "Hotkeys",
    "capture": "Screen capture",
    "output": "Output",
    "engine": "Engine",
    "model": "Model",
    "overlay": "Overlay",
    "history": "History",
    "app": "Startup",
    "dictionary": "Dictionary",
    "hover": "Hover to read",
    "reading": "Keep reading",
}


BY_LABEL = {s.key: s.label for s in SETTINGS}


def _normalized(text: str) -> str:
    from app.hotkey import validate_combo

    return validate_combo(text)


def _validate_hotkey(text: str) -> str | None:
    """None when `text` is a valid combo (or empty = off), else the reason, in GUI words."""
    if not text.strip():
        return None
    try:
        _normalized(text)
    except ImportError:
        return None
    except Exception:  # HotkeyError: a hand-edited settings file
        return f"the saved combination {combo_label(text)} is not valid; click and press new keys."
    return None


class _FolderRow(QWidget):
    """A folder's line edit beside its Browse… button."""

    line: QLineEdit  # the value lives in the line edit


class SettingsDialog(QDialog):
    hotkey_recording = Signal(bool)  # a hotkey field listens for keys (True) or stopped (False)

    def __init__(self, settings: Settings, parent=None, dictionary_store=None):
        super().__init__(parent)
        theme.apply(self)
        self.setWindowTitle(theme.window_title("Settings"))
        self.setWindowIcon(theme.app_icon())
        self.settings = settings
        self.editors: dict[str, QWidget] = {}
        self.error = PlainLabel("")  # may quote what was typed
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)

        # One page per section of the table, in the table's order, picked from a list on the left;
        # the Anki page is its own.
        self.sections = QListWidget()
        self.sections.setObjectName("SettingsSections")
        self.pages = QStackedWidget()
        self.sections.currentRowChanged.connect(self.pages.setCurrentIndex)
        forms: dict[str, QFormLayout] = {}
        for setting in SETTINGS:
            if not setting.label or setting.kind == "anki":  # the Anki page shows those
                continue
            name = SECTIONS.get(setting.key.split("/")[0], "Other")
            form = forms.get(name)
            if form is None:
                form = forms[name] = self._new_tab(name)
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
        # the imported Yomitan dictionaries: their own list (changes apply at once, not on Save)
        from app.ui.dictionary_manager import DictionaryManager

        header = QLabel("Imported dictionaries")
        header.setProperty("role", "section")
        dictionary_form = forms.get("Dictionary") or self._new_tab("Dictionary")
        dictionary_form.addRow(header)
        self.dictionaries = DictionaryManager(dictionary_store)
        self.dictionaries.setToolTip(
            "Yomitan-format dictionaries, used in this order, JMdict at its place among them (move "
            "it down to rank a dictionary before it); changes apply at once"
        )
        dictionary_form.addRow(self.dictionaries)

        self.anki_page = AnkiSettingsPage(settings)
        self._new_tab("Anki").addRow(self.anki_page)
        self.sections.setCurrentRow(0)
        self.sections.setFixedWidth(self.sections.sizeHintForColumn(0) + 28)
        body = QHBoxLayout()
        body.setSpacing(14)
        body.addWidget(self.sections)
        body.addWidget(self.pages, 1)

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
        layout.addLayout(body, 1)
        layout.addLayout(buttons)
        self.setMinimumSize(780, 560)
        backend = self.editors.get("engine/backend")
        if isinstance(backend, QComboBox):  # the server's rows matter only when reading with one
            backend.currentIndexChanged.connect(self._show_engine)
            self._show_engine()

    def open_tab(self, name: str) -> None:
        """Show the page called `name` (e.g. "Anki")."""
        found = self.sections.findItems(name, Qt.MatchFlag.MatchExactly)
        if found:
            self.sections.setCurrentItem(found[0])

    def _new_tab(self, name: str) -> QFormLayout:
        """A page of the dialog (its rows scroll when they are taller than the window)."""
        page = QWidget()
        page.setObjectName("SettingsPage")
        form = QFormLayout(page)
        form.setContentsMargins(4, 4, 4, 4)
        form.setHorizontalSpacing(16)
        form.setVerticalSpacing(8)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setStyleSheet("QScrollArea, #SettingsPage { background: transparent; }")
        scroll.setWidget(page)
        self.pages.addWidget(scroll)
        self.sections.addItem(name)
        return form

    @staticmethod
    def _websocket_problem(values: dict) -> str:
        """Why the WebSocket address cannot be used, or ""."""
        if "reading/websocket_address" not in values:
            return ""
        from app.reading.address import parse_address

        try:
            parse_address(str(values["reading/websocket_address"]))
        except ValueError as exc:
            return f"WebSocket address: {exc}"
        return ""

    def _show_engine(self) -> None:
        backend = self.editors["engine/backend"]
        assert isinstance(backend, QComboBox)  # a choice row (Settings table)
        used = traits(backend.currentData()).settings_keys
        for name in REGISTRY:  # a remote backend's rows mean nothing to the others
            if traits(name).remote:
                for key in traits(name).settings_keys & self.editors.keys():
                    self.editors[key].setEnabled(key in used)

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
            for choice, label in zip(setting.choices, setting.choice_labels or setting.choices):
                combo.addItem(label, choice)  # the words shown, the value stored
            combo.setCurrentIndex(max(0, combo.findData(str(value))))
            return combo
        if setting.kind == "font":
            fonts = QFontComboBox()
            fonts.setCurrentFont(QFont(theme.cjk_font(str(value)).family()))
            return fonts
        if setting.kind == "hotkey":
            recorder = HotkeyEdit(str(value))
            recorder.changed.connect(lambda _: self.check_hotkeys())
            recorder.recording.connect(self.hotkey_recording.emit)
            recorder.refused.connect(
                lambda why, label=setting.label: self.error.setText(f"{label}: {why}")
            )
            return recorder
        line = QLineEdit(str(value))
        if setting.kind == "url":
            line.setPlaceholderText("e.g. http://192.168.1.20:8000")
            return line
        if setting.kind == "secret":
            line.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
            line.setPlaceholderText("none")
            return line
        if setting.kind == "folder":
            line.setPlaceholderText(
                "the downloaded model" if setting.key == "model/folder" else "none"
            )
            row = _FolderRow()
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
                out[key] = editor.currentData()
            elif isinstance(editor, QLineEdit):
                out[key] = editor.text().strip()
            elif isinstance(editor, HotkeyEdit):
                out[key] = editor.combo()
            else:
                assert isinstance(editor, _FolderRow)  # the one editor kind left (_editor)
                out[key] = editor.line.text().strip()
        out.update(self.anki_page.values())
        return out

    def hotkey_problems(self) -> list[str]:
        """What is wrong with the hotkeys as they stand in the dialog (empty: nothing)."""
        values = self.values()
        problems = []
        for key in HOTKEY_KEYS:
            if key in values:
                reason = _validate_hotkey(str(values[key]))
                if reason:
                    problems.append(f"{BY_LABEL[key]}: {reason}")
        combos = [(k, str(values[k])) for k in sorted(HOTKEY_KEYS) if values.get(k)]
        for i, (key, combo) in enumerate(combos):
            if _validate_hotkey(combo) is not None:
                continue
            for other, second in combos[i + 1 :]:
                if _normalized(combo) == _normalized(second):
                    problems.append(
                        f"{BY_LABEL[key]} and {BY_LABEL[other]} cannot both be "
                        f"{combo_label(combo)}: record another combination for one of them."
                    )
        return problems

    def check_hotkeys(self) -> bool:
        """Show the first hotkey problem at once (or clear the message); True when there is none."""
        problems = self.hotkey_problems()
        self.error.setText(problems[0] if problems else "")
        self.save_button.setEnabled(not problems)
        return not problems

    def save(self) -> bool:
        values = self.values()
        if not self.check_hotkeys():
            return False
        problem = (
            self.anki_page.problem() or settings_problem(values) or self._websocket_problem(values)
        )
        if problem:
            self.error.setText(problem)
            return False
        self.settings.update(values)
        self.accept()
        return True
