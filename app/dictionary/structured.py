"""Yomitan glossary items -> formatted text: Qt rich text for the popup, plain text for JSON/CLI.

A glossary item is a string, `{"type": "text", "text": …}`, `{"type": "image", …}` or
`{"type": "structured-content", "content": NODE}`, where NODE is a string, a list of nodes or an
element `{"tag": …, "content": NODE, "data": {…}, "style": {…}, …}` with HTML-like tags (div, span,
ul/ol/li, table rows, ruby, details/summary, a, img, br). We render a safe subset: text is always
escaped, links and images never load anything, unknown tags keep only their content.
"""

from __future__ import annotations

import html

_BLOCK = {"div", "p", "details", "summary", "ul", "ol", "li", "table", "tr"}
_SKIP = {"rp", "img", "rt"}  # rt is folded into its ruby as （reading）
# How deeply lists and objects of a glossary item are rendered; deeper ones are shown as "…".
# Real dictionaries nest under 20 levels.
MAX_DEPTH = 128


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _data_kinds(node: dict) -> set[str]:
    data = node.get("data")
    if not isinstance(data, dict):
        return set()
    return {str(v) for v in data.values()} | {str(k) for k in data}


def _ruby_text(node, depth: int) -> str:
    """The rt parts of a ruby element (at `depth`), as plain text."""
    parts, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict) and item.get("tag") == "rt":
            # a ruby in an rt: deeper each time
            parts.append(_lines(_walk(item.get("content"), _PlainText(), depth + 2)))
    return "".join(parts)


class _Markup(str):
    """Markup of the renderer's own on the work stack (an element's closing part), never escaped."""


class _PlainText:
    """Plain text: blocks and list items on their own lines, ruby as 漢字（かな）, no images."""

    image = ""  # a {"type": "image"} item

    def text(self, text: str) -> str:
        return text

    def leaf(self, tag: str, node: dict) -> str | None:
        """The output of an element whose content is not rendered, None for the others."""
        if tag == "br":
            return "\n"
        return "" if tag in _SKIP else None

    def ruby(self, reading: str) -> str:
        return f"（{reading}）" if reading else ""

    def element(self, tag: str, node: dict) -> tuple[str, str]:
        block = tag in _BLOCK
        opening = ("\n" if block else "") + ("• " if tag == "li" else "")
        return opening, (" " if tag in ("td", "th") else "") + ("\n" if block else "")


class _RichText:
    """Qt rich text: escaped text, lists and tables, notes and examples styled by their `data`."""

    def __init__(self, muted: str):
        self.muted = muted
        self.image = f'<span style="color:{muted};">[image]</span>'

    def text(self, text: str) -> str:
        return _e(text).replace("\n", "<br>")

    def leaf(self, tag: str, node: dict) -> str | None:
        if tag == "br":
            return "<br>"
        if tag == "img":
            title = node.get("title") or node.get("alt") or "image"
            return f'<span style="color:{self.muted};">[{_e(str(title))}]</span>'
        return "" if tag in ("rt", "rp") else None

    def ruby(self, reading: str) -> str:
        return f'<span style="color:{self.muted}; font-size:8pt;">（{_e(reading)}）</span>'

    def element(self, tag: str, node: dict) -> tuple[str, str]:
        return _element(tag, _data_kinds(node), self.muted)


# The walk keeps a stack of its own instead of recursing: a glossary nested a thousand levels deep
# costs a thousand turns of a loop, never a RecursionError. A list or object deeper than MAX_DEPTH
# (counted from the glossary item) is shown as "…".


def _walk(node, renderer: _PlainText | _RichText, depth: int = 1) -> str:
    """One glossary item or structured-content node (at `depth`) through `renderer`."""
    out: list[str] = []
    stack: list = [(node, depth)]
    while stack:
        item = stack.pop()
        if isinstance(item, _Markup):
            out.append(item)
            continue
        node, depth = item
        if isinstance(node, (str, int, float)):
            out.append(renderer.text(node if isinstance(node, str) else str(node)))
        elif isinstance(node, (list, dict)) and depth > MAX_DEPTH:
            out.append("…")
        elif isinstance(node, list):
            stack.extend((n, depth + 1) for n in reversed(node))
        elif isinstance(node, dict):
            out.append(_visit(node, depth, renderer, stack))
    return "".join(out)


def _visit(node: dict, depth: int, renderer: _PlainText | _RichText, stack: list) -> str:
    """What one object writes now; what it writes later (its content, its closing) goes on `stack`."""
    kind = node.get("type")
    if kind in ("text", "structured-content"):
        stack.append((node.get("text" if kind == "text" else "content"), depth + 1))
        return ""
    if kind == "image":
        return renderer.image
    tag = str(node.get("tag", "span"))
    content = node.get("content")
    leaf = renderer.leaf(tag, node)
    if leaf is not None:
        return leaf
    if tag == "ruby":
        stack.append(_Markup(renderer.ruby(_ruby_text(content, depth))))
        stack.append(([n for n in _as_list(content) if not _is_tag(n, "rt", "rp")], depth + 1))
        return ""
    opening, closing = renderer.element(tag, node)
    stack.append(_Markup(closing))
    stack.append((content, depth + 1))
    return opening


def to_html(node, muted: str = "#9ca3af") -> str:
    """Rich text for one glossary item or structured-content node."""
    return _walk(node, _RichText(muted))


def _element(tag: str, kinds: set[str], muted: str) -> tuple[str, str]:
    """The rich text before and after one element's content."""
    if tag in ("ul", "ol"):
        return f'<{tag} style="margin-top:0px; margin-bottom:0px;">', f"</{tag}>"
    if tag in ("li", "tr", "td", "th"):
        return f"<{tag}>", f"</{tag}>"
    if tag == "table":
        return '<table cellspacing="0" cellpadding="2">', "</table>"
    if tag in ("thead", "tbody", "tfoot"):
        return "", ""
    if tag == "summary":
        return "<b>", "</b><br>"
    style = _style(kinds, muted)
    if tag in ("div", "p", "details"):
        return (f'<div style="{style}">' if style else "<div>"), "</div>"
    if tag == "a":
        return "<u>", "</u>"
    return (f'<span style="{style}">', "</span>") if style else ("", "")


def _style(kinds: set[str], muted: str) -> str:
    """The style of a block or span by what its `data` says it is: an example, a note, a tag."""
    if any("example" in k for k in kinds):
        return "margin-left:10px; font-style:italic;"
    if any(("note" in k or "info" in k or "xref" in k) for k in kinds):
        return f"color:{muted};"
    if any("tag" in k for k in kinds):
        return f"color:{muted}; font-size:8pt;"
    return ""


def _as_list(node) -> list:
    return node if isinstance(node, list) else [node]


def _is_tag(node, *tags: str) -> bool:
    return isinstance(node, dict) and node.get("tag") in tags


def to_text(node) -> str:
    """Plain text for one glossary item: blocks and list items on their own lines, ruby as 漢字（かな）."""
    return _lines(_walk(node, _PlainText()))


def _lines(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def is_plain(item) -> bool:
    """True for a glossary item that is just text (no structure worth rendering as rich text)."""
    return isinstance(item, str) or (isinstance(item, dict) and item.get("type") == "text")
