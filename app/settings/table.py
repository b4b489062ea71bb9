"""All user settings in ONE table: one `Setting` row per setting (`SETTINGS`, by key `BY_KEY`).

The table drives the stored defaults and their types (the store, app/settings/__init__.py), the
settings dialog (labels, widgets, help texts, sections), the command-line overrides (`--model`,
`--hotkey`) and the README's settings table (`markdown_table`). Add a setting by adding a row here;
nothing else needs to know the list. The module is long because the rows are data: one per
setting, each with its help sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.config import DEFAULT_VARIANT, DEVICES, PRECISIONS, REQUIRED_FILES_TEXT, VARIANTS


@dataclass(frozen=True)
class Setting:
    key: str  # "section/name", also the INI key
    default: object
    type: type  # bool, int or str
    help: str  # one sentence; the dialog's tooltip
    label: str = ""  # the dialog's label; empty = not shown in the dialog
    choices: tuple[str, ...] = ()  # for str settings with a fixed set of values
    minimum: int = 0
    maximum: int = 0
    kind: str = ""  # widget hint: hotkey, folder, font, url, secret (plain widgets otherwise)
    cli: str = ""  # the command-line option that overrides it for one run
    choice_labels: tuple[str, ...] = ()  # the dialog's words for `choices`, in the same order
    cli_enables: str = ""  # a bool setting that the same option also turns on for that run


# The dialog's words for each drop-down's values (the INI file and the command line keep the codes).
# Keyed by code, so an engine fact added to model/config.py without its words fails at import.
CHOICE_WORDS = {
    "hotkey/backend": {
        "auto": "automatic (by desktop)",
        "pynput": "keyboard listener (X11, Windows, macOS)",
        "portal": "desktop portal shortcuts (Wayland)",
        "wayland": "desktop keyboard shortcuts (Wayland)",
    },
    "capture/backend": {
        "auto": "automatic (by desktop)",
        "mss": "direct screen grab (X11, Windows, macOS)",
        "grim": "grim (Sway, Hyprland, river)",
        "portal": "desktop portal (GNOME, KDE Wayland)",
        "qt": "Qt's screen grab",
    },
    "model/variant": {"v2.1": "Hayai OCR v2.1", "nova": "Hayai OCR v2.5 nova"},
    "model/device": {
        "auto": "automatic (the GPU when there is one)",
        "cpu": "CPU",
        "cuda": "NVIDIA GPU (CUDA)",
        "mps": "Apple GPU (Metal)",
    },
    "model/precision": {
        "auto": "automatic (fast where faithful)",
        "exact": "exact (float32)",
        "fast": "fast (the fastest faithful path)",
    },
    "dictionary/trigger": {"hover": "resting the mouse on a word", "click": "clicking a word"},
    "dictionary/han_language": {"ja": "Japanese", "zh": "Chinese"},
}


def words(key: str, choices: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(CHOICE_WORDS[key][choice] for choice in choices)


# Ctrl+Alt+letter: no GNOME, KDE Plasma, Xfce or Cinnamon default uses O or R (they take T, L, D,
# Del, Esc, Tab and the arrows), and exact matching keeps Ctrl+Shift+Alt+R (GNOME's recorder) apart.
SETTINGS: tuple[Setting, ...] = (
    Setting(
        "hotkey/capture",
        "<ctrl>+<alt>+o",
        str,
        "Global hotkey that freezes the screen and opens the region selection (pynput syntax).",
        "Capture hotkey",
        kind="hotkey",
        cli="--hotkey",
    ),
    Setting(
        "hotkey/rescan",
        "<ctrl>+<alt>+r",
        str,
        "Global hotkey that reads the last boxed region again without selecting (game dialogue).",
        "Re-scan hotkey",
        kind="hotkey",
    ),
    Setting(
        "hotkey/backend",
        "auto",
        str,
        "How global hotkeys are heard: auto picks by session (pynput on X11, Windows and macOS; "
        "the desktop portal's global shortcuts on Wayland where offered, else a desktop shortcut "
        "running `hayai capture`).",
        "Hotkey backend",
        choices=("auto", "pynput", "portal", "wayland"),
        choice_labels=words("hotkey/backend", ("auto", "pynput", "portal", "wayland")),
    ),
    Setting(
        "hotkey/desktop_shortcuts",
        "ask",
        str,
        "Where Hayai cannot hear hotkeys itself but can add them as the desktop's own keyboard "
        "shortcuts (GNOME on Wayland): ask once, add or update them at each start, or leave the "
        "desktop's shortcuts alone.",
        "Desktop shortcuts",
        choices=("ask", "add", "leave"),
        choice_labels=("ask me", "add them for me", "leave them alone"),
    ),
    Setting(
        "capture/backend",
        "auto",
        str,
        "How the screen is read: auto picks by session (mss on X11, Windows and macOS; grim on "
        "Sway, Hyprland and river; the desktop portal on GNOME and KDE Wayland).",
        "Capture method",
        choices=("auto", "mss", "grim", "portal", "qt"),
        choice_labels=words("capture/backend", ("auto", "mss", "grim", "portal", "qt")),
        cli="--capture-backend",
    ),
    Setting(
        "output/auto_copy",
        True,
        bool,
        "Put the text on the clipboard as soon as it is read (for clipboard-watching tools like "
        "Yomitan); Hover to read's stays in its popup.",
        "Copy text automatically",
    ),
    Setting(
        "engine/backend",
        "local",
        str,
        "Where captures are read: by the model on this computer, or by a Hayai server "
        "(`hayai serve`, e.g. a machine with a GPU on your network).",
        "Read with",
        choices=("local", "server"),
        choice_labels=("this computer", "a Hayai server"),
    ),
    Setting(
        "engine/server_url",
        "",
        str,
        "The Hayai server's address, e.g. http://192.168.1.20:8000 (used when reading with a server).",
        "Server address",
        kind="url",
    ),
    Setting(
        "engine/server_key",
        "",
        str,
        "The server's API key (its --api-key); empty when it has none. Stored in the settings file.",
        "Server key",
        kind="secret",
    ),
    Setting(
        "model/variant",
        DEFAULT_VARIANT,
        str,
        "Which downloaded model to use when no model folder is set.",
        "Model variant",
        choices=VARIANTS,
        choice_labels=words("model/variant", VARIANTS),
    ),
    Setting(
        "model/folder",
        "",
        str,
        f"A folder with {REQUIRED_FILES_TEXT}; empty = the downloaded variant.",
        "Model folder",
        kind="folder",
        cli="--model",
    ),
    Setting(
        "model/device",
        "auto",
        str,
        "Where the model runs: auto picks CUDA or MPS when present, else the CPU.",
        "Device",
        choices=DEVICES,
        choice_labels=words("model/device", DEVICES),
    ),
    Setting(
        "model/precision",
        "auto",
        str,
        "exact = float32, the released model's own numbers; fast = the fastest faithful path; "
        "auto = fast where faithful.",
        "Precision",
        choices=PRECISIONS,
        choice_labels=words("model/precision", PRECISIONS),
    ),
    Setting(
        "model/compile",
        False,
        bool,
        "Compile the decoder with torch.compile while the model loads: a slower start (tens of seconds), "
        "faster reading (a quarter off each token on a CPU, more on a GPU). v2.1 only. Needs a C compiler "
        "(and Triton on a GPU); without them it is skipped.",
        "Compile the decoder",
    ),
    Setting(
        "overlay/font_family",
        "Noto Sans CJK JP",
        str,
        "Font of the overlay text; pick one with Japanese/Chinese glyphs.",
        "Overlay font",
        kind="font",
    ),
    Setting(
        "overlay/font_size",
        18,
        int,
        "Size of the overlay text in points.",
        "Font size",
        minimum=8,
        maximum=72,
    ),
    Setting(
        "overlay/vertical",
        False,
        bool,
        "Show text in vertical right-to-left columns by default (vertical Japanese).",
        "Vertical layout by default",
    ),
    Setting(
        "history/enabled",
        True,
        bool,
        "Keep read captures (text and a thumbnail) in the history.",
        "Keep a history",
    ),
    Setting(
        "history/length",
        500,
        int,
        "How many captures the history keeps; older ones are deleted.",
        "History length",
        minimum=1,
        maximum=100_000,
    ),
    Setting(
        "app/start_at_login",
        False,
        bool,
        "Start Hayai when you log in (a freedesktop autostart entry on Linux).",
        "Start at login",
    ),
    Setting(
        "dictionary/trigger",
        "hover",
        str,
        "Open the dictionary popup when the mouse rests on a word (hover) or only on click.",
        "Dictionary opens on",
        choices=("hover", "click"),
        choice_labels=words("dictionary/trigger", ("hover", "click")),
    ),
    Setting(
        "dictionary/han_language",
        "ja",
        str,
        "Language to assume for text made only of Han characters (no kana, no hangul).",
        "Kanji-only text is",
        choices=("ja", "zh"),
        choice_labels=words("dictionary/han_language", ("ja", "zh")),
    ),
    # Hover to read (app/flows/hover.py): off by default, as a Shift held while typing would grab the
    # screen around the pointer each time.
    Setting(
        "hover/enabled",
        False,
        bool,
        "Hover to read: while the hover key is held, the popup dictionary shows the word under the "
        "pointer anywhere on the screen; each new text block there is read by the model (X11, and "
        "Sway, where the right-hand key is bound).",
        "Hover to read",
    ),
    Setting(
        "hover/key",
        "shift",
        str,
        "The key held for Hover to read; pressed together with another key (typing) it reads nothing.",
        "Hover key",
        choices=("shift", "ctrl", "alt"),
        choice_labels=("Shift", "Ctrl", "Alt"),
    ),
    # Anki (through the AnkiConnect add-on); the Anki page of the settings window edits these.
    Setting(
        "anki/enabled",
        True,
        bool,
        "Show “+ Anki” on dictionary entries and a Mine button in the overlay.",
        "Make Anki cards",
        kind="anki",
    ),
    Setting(
        "anki/url",
        "http://127.0.0.1:8765",
        str,
        "Where AnkiConnect listens (Anki with the AnkiConnect add-on).",
        "AnkiConnect address",
        kind="anki",
    ),
    Setting(
        "anki/key",
        "",
        str,
        "AnkiConnect's API key, when its settings set one; empty otherwise.",
        "API key",
        kind="anki",
    ),
    Setting(
        "anki/deck",
        "",
        str,
        "The deck new notes go to; empty = a deck named Hayai, made when missing.",
        "Deck",
        kind="anki",
    ),
    Setting(
        "anki/duplicates",
        "deck",
        str,
        "Where a word already in Anki stops a new note: in the deck (and its subdecks), or "
        "anywhere in the collection (notes of the same note type).",
        "Duplicates",
        choices=("deck", "collection"),
        choice_labels=(
            "looked for in the deck and its subdecks",
            "looked for in the whole collection",
        ),
        kind="anki",
    ),
    Setting(
        "anki/note_type",
        "",
        str,
        "The note type of new notes; empty = Hayai's own note type, made when missing.",
        "Note type",
        kind="anki",
    ),
    Setting(
        "anki/fields",
        "",
        str,
        "Which field of the note type gets what (JSON: field -> marker); empty = Hayai's fields.",
        kind="anki",
    ),
    Setting(
        "anki/tags",
        "hayai",
        str,
        "Tags for new notes, separated by spaces.",
        "Tags",
        kind="anki",
    ),
    # --- keep reading: watched regions, text out, images in (issue #12)
    Setting(
        "reading/watch_interval_ms",
        500,
        int,
        "How often a watched region is checked for new text, in milliseconds (a tiny grab each time).",
        "Check a watched region every (ms)",
        minimum=100,
        maximum=10_000,
    ),
    Setting(
        "reading/watch",
        "<ctrl>+<alt>+w",
        str,
        "Global hotkey that pauses or resumes the watched region.",
        "Pause/resume watching hotkey",
        kind="hotkey",
    ),
    Setting(
        "reading/websocket",
        False,
        bool,
        "Send every read text to WebSocket clients (texthooker pages, other readers) as one message.",
        "WebSocket server",
    ),
    Setting(
        "reading/websocket_address",
        "127.0.0.1:6677",
        str,
        "Where the WebSocket server listens, HOST:PORT; 127.0.0.1 keeps it to this computer.",
        "WebSocket address",
        cli="--websocket",
        cli_enables="reading/websocket",
    ),
    Setting(
        "reading/websocket_format",
        "text",
        str,
        "What each WebSocket message is: the text alone (texthooker pages), or a JSON object with "
        "sentence, process_path, source and time (exSTATic and other JSON clients).",
        "WebSocket messages",
        choices=("text", "json"),
        choice_labels=("plain text", "JSON (exSTATic)"),
        cli="--websocket-format",
    ),
    Setting(
        "reading/websocket_origins",
        "",
        str,
        "Web pages besides this computer's (file://, localhost) that may receive the text: their "
        "origins, such as https://example.org, separated by spaces; any other page is refused.",
        "Also allow pages from",
    ),
    Setting(
        "reading/log_file",
        "",
        str,
        "A plain-text file every read text is appended to, one line each; empty = none.",
        "Append texts to file",
    ),
    Setting(
        "reading/clipboard_images",
        False,
        bool,
        "Read images put on the clipboard by a screenshot tool (ShareX, Flameshot, a snipping tool).",
        "Read clipboard images",
    ),
    Setting(
        "reading/folder",
        "",
        str,
        "A folder whose new image files are read as they appear (a screenshot tool's folder); empty = none.",
        "Read new images in folder",
        kind="folder",
    ),
    Setting(
        "reading/folder_links",
        False,
        bool,
        "Also read links (symlinks) in the watched folder that point to files outside it; off, they are refused.",
        "Follow links out of the folder",
    ),
)

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}
HOTKEY_KEYS = frozenset({"hotkey/capture", "hotkey/rescan", "reading/watch"})  # the combos
HOTKEY_RESTART_KEYS = HOTKEY_KEYS | {"hotkey/backend"}  # a change to one re-registers the hotkeys


def markdown_table() -> str:
    """The README's settings table, made from this one (tests/settings/test_settings.py keeps them equal):
    `python -c "from app.settings.table import markdown_table; print(markdown_table())"`."""

    def default(setting: Setting) -> str:
        if setting.type is bool:
            return "on" if setting.default else "off"
        return f"`{setting.default}`" if setting.default != "" else "(empty)"

    rows = ["| key | default | meaning |", "|---|---|---|"]
    for setting in SETTINGS:
        meaning = setting.help
        if setting.choices:
            meaning += f" ({' / '.join(setting.choices)})"
        if setting.cli:
            meaning += f" Overridden for one run by `{setting.cli}`."
        rows.append(f"| `{setting.key}` | {default(setting)} | {meaning} |")
    return "\n".join(rows)
