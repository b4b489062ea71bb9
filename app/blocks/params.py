"""Every value the text block finder is tuned by, in one frozen object, each with its reason.

Figures are measured on the five test scans (tests/data/pages, truth in blocks.json; 58 scored
blocks, `note`s left out) and the drawn 1920×1080 screen (app/capture/sample_page.py); the numbers
and commands are in docs/reading.md, "Text blocks by a learned detector".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Params:
    # --- the detector (PP-OCRv6 det small through onnxruntime; app/blocks/detector.py) ----------
    # The image is scaled for the detector to about this many pixels (never enlarged past
    # MAX_ENLARGE): 1.2 MP keeps a 827×1170 scan at its size
    max_pixels: int = 1_300_000
    max_enlarge: float = 1.5
    # DB's binarisation of the probability map and the mean score a line needs (rapidocr's 0.3 and 0.5)
    thresh: float = 0.3
    box_thresh: float = 0.5
    # how far a shrunk text region is grown back out (rapidocr's 1.6)
    unclip_ratio: float = 1.3
    # onnxruntime's threads for one run: the machine's cores, at most this many
    threads: int = 4

    # --- lines into blocks (app/blocks/grouping.py) ---------------------------------------------
    # a line this much longer than thick is a column (tall) or a row (wide); squarer ones (a
    # letter or two) take the direction of the lines they join
    direction_ratio: float = 1.3
    # letters (the larger line's thickness): lines side by side at most this far apart join
    line_gap: float = 0.6
    # ... rows at most this far (horizontal text is set looser: a game's lines 1.5-2 letters apart)
    row_gap: float = 1.0
    # ... when they overlap along their length by this share of the shorter
    side_overlap: float = 0.3
    # ... and they start together, end together or share their middle, within this many letters
    align: float = 0.45
    # ... and their thicknesses (letter sizes) differ at most this many times
    size_ratio: float = 1.6
    # letters: lines one after the other in one column (or row) at most this far apart join
    along_gap: float = 1.0
    # ... when they share this much of the thinner one's thickness (a column the detector cut)
    same_line: float = 0.7
    # luminance steps from the usual level between two lines that still count as their paper (a
    # path of it from one to the other joins them; a balloon's outline or a border walls them off)
    paper_tolerance: int = 60
    # px around a line's letters (the detector's box shrunk to them); marks of ink that run on
    # this far beyond the detector's box are no letters of it (an outline it cuts)
    margin: int = 4

    # --- punctuation alone in a balloon (app/blocks/marks.py) -----------------------------------
    # luminance: a balloon's inside is at least this light
    lone_paper: int = 180
    # px: a balloon's inside is at least this wide and high, and its longer side at most this
    # share of the image's (a panel's white, the page's margin are bigger)
    lone_balloon_min: int = 16
    lone_balloon_max: float = 0.4
    # its pixels fill at least this share of its box (an ellipse 0.79; a fill that leaked out
    # through hatching is a thin tangle)
    lone_fill: float = 0.5
    # the marks it encloses: at least this many pixels each (JPEG specks are fewer), at most this
    # many marks ("……" is six dots), spanning at most this share of the balloon, their middle
    # at most this share of it off the balloon's
    lone_speck: int = 3
    lone_pieces: int = 8
    lone_span: float = 0.7
    lone_middle: float = 0.25
    # a mark is a dot when at most this share of the largest mark; a stroke is upright when
    # this many times as high as wide, or, when solid (filling more than `lone_blot` of its
    # box: a straight "！"), `lone_bar` times (a solid mark less tall is a pupil)
    lone_dot: float = 0.5
    lone_upright: float = 0.9
    lone_blot: float = 0.6
    lone_bar: float = 2.0

    # --- a click (block_at) -------------------------------------------------------------------
    # letters (the block's font size): a click this far outside a block's box still proposes it
    click_reach: float = 0.5
    click_reach_px: int = 16  # ... and at most this many px (big lettering has a long reach)


PARAMS = Params()
