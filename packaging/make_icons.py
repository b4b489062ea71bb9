"""Write the app icons resources/icons/hayai.svg and hayai-busy.svg.

    QT_QPA_PLATFORM=offscreen python packaging/make_icons.py

The kana あ is taken from Noto Sans CJK JP Bold as outlines (Qt's QPainterPath), so the SVG needs
no font on the user's machine. Motif: a seal-red rounded square, four white selection corners
(the box you drag), the kana inside. The busy variant is amber with a small clock badge.
Also writes hayai-256.png (AppImage .DirIcon, source for .ico/.icns).
Run by hand when the design changes; the files are committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "resources" / "icons"
FONT = "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"
GLYPH = "あ"
SIZE = 64  # viewBox units; at 16 px one pixel is 4 units, so strokes are at least 4 wide


def glyph_path(char: str, box: float, cx: float, cy: float) -> str:
    """SVG path data for `char` scaled to fit a `box`-unit square centred on (cx, cy)."""
    from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication, QPainterPath

    app = QGuiApplication.instance() or QGuiApplication(sys.argv)  # noqa: F841 (fonts need an app)
    font_id = QFontDatabase.addApplicationFont(FONT)
    families = QFontDatabase.applicationFontFamilies(font_id)
    if not families:
        sys.exit(f"could not load {FONT}: install fonts-noto-cjk")
    family = next((f for f in families if "JP" in f), families[0])
    font = QFont(family)
    font.setPixelSize(100)
    font.setWeight(QFont.Weight.Bold)
    path = QPainterPath()
    path.addText(0, 0, font, char)
    rect = path.boundingRect()
    scale = box / max(rect.width(), rect.height())
    dx = cx - (rect.x() + rect.width() / 2) * scale
    dy = cy - (rect.y() + rect.height() / 2) * scale
    out: list[str] = []
    i = 0
    while i < path.elementCount():
        e = path.elementAt(i)
        x, y = e.x * scale + dx, e.y * scale + dy
        if e.isMoveTo():
            out.append(f"M{x:.2f} {y:.2f}")
            i += 1
        elif e.isLineTo():
            out.append(f"L{x:.2f} {y:.2f}")
            i += 1
        else:  # CurveTo is followed by two CurveToData elements (control point 2, end point)
            c2, end = path.elementAt(i + 1), path.elementAt(i + 2)
            out.append(
                f"C{x:.2f} {y:.2f} {c2.x * scale + dx:.2f} {c2.y * scale + dy:.2f} "
                f"{end.x * scale + dx:.2f} {end.y * scale + dy:.2f}"
            )
            i += 3
    return " ".join(out) + " Z"


def corners(inset: float, arm: float, width: float) -> str:
    """Four L-shaped selection corners as one stroked path."""
    a, b = inset, SIZE - inset
    return (
        f'<path d="M{a} {a + arm}V{a}H{a + arm} M{b - arm} {a}H{b}V{a + arm} '
        f'M{b} {b - arm}V{b}H{b - arm} M{a + arm} {b}H{a}V{b - arm}" '
        f'fill="none" stroke="#ffffff" stroke-width="{width}" stroke-linecap="round" stroke-linejoin="round"/>'
    )


def icon(top: str, bottom: str, glyph: str, badge: str = "") -> str:
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}" height="{SIZE}" viewBox="0 0 {SIZE} {SIZE}">
  <title>Hayai</title>
  <defs>
    <linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="{top}"/>
      <stop offset="1" stop-color="{bottom}"/>
    </linearGradient>
  </defs>
  <rect x="1" y="1" width="{SIZE - 2}" height="{SIZE - 2}" rx="14" fill="url(#bg)"/>
  {corners(9, 12, 4.5)}
  <path d="{glyph}" fill="#ffffff"/>{badge}
</svg>
"""


# A clock badge in the lower right corner, over the selection corner: "working on it".
BUSY_BADGE = """
  <circle cx="49" cy="49" r="13" fill="#1f2937" stroke="#ffffff" stroke-width="3"/>
  <path d="M49 41V49L54.5 52.5" fill="none" stroke="#ffffff" stroke-width="3.5" stroke-linecap="round" stroke-linejoin="round"/>"""


def render_png(svg: Path, png: Path, size: int) -> None:
    """A PNG of the SVG for places that want a bitmap (AppImage .DirIcon, .ico/.icns sources)."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(str(svg)).render(painter, QRectF(0, 0, size, size))
    painter.end()
    image.save(str(png))


def main() -> int:
    ICONS.mkdir(parents=True, exist_ok=True)
    glyph = glyph_path(GLYPH, box=34, cx=SIZE / 2, cy=SIZE / 2 + 0.5)
    (ICONS / "hayai.svg").write_text(icon("#ef4444", "#b91c1c", glyph))
    (ICONS / "hayai-busy.svg").write_text(icon("#f59e0b", "#c2410c", glyph, BUSY_BADGE))
    render_png(ICONS / "hayai.svg", ICONS / "hayai-256.png", 256)
    print(f"wrote {ICONS}/hayai.svg, hayai-busy.svg, hayai-256.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
