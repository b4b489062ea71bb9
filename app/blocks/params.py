"""Every value the text block finder is tuned by, in one frozen object, each with its reason.

"Scans" below: the five test scans (tests/data/pages, truth in blocks.json: 58 scored blocks, `note`s
left out, 50 clicks on drawing), scored by the issue's rule (a box matches a block when it covers
≥ 70% of it and is at most twice its area) at their size and shown at 60%; "the drawn screen":
app/capture/sample_page.py. Today: 55 and 52 of 58 blocks, 47 and 46 quiet art clicks. Where a
value says "flat", the scores did not move over the range named. docs/reading.md, "Text blocks by
a learned detector", has the runs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Params:
    # --- the detector (PP-OCRv6 det small through onnxruntime; app/blocks/detector.py) ----------
    # The image is seen by the detector at about this many pixels, enlarged at most max_enlarge
    # times. The detector finds letters of about 21-38 px best: scans at their size (letters ~30
    # px) found 50, 52, 53, 54, 55 of 58 blocks at 0.5, 0.7, 0.9, 1.1, 1.3 MP; shown at 60%
    # (letters ~18 px) 44 as they are, 51-53 enlarged 1.25-1.5 times, 50 at 2. Its time grows
    # with the pixels: 1.4-1.7 s of CPU at 1.3 MP on a shared 2-core Xeon (1.0 MP: 1.3 s)
    max_pixels: int = 1_300_000
    max_enlarge: float = 1.5
    # DB's binarisation of the probability map and the mean score a line needs (rapidocr's
    # values). A lower box_thresh finds more specks than letters: 0.4 found 000b's わ but merged
    # 002a's ギャ～ with its neighbour; 0.3 gave 4 more boxes on no text and no block
    thresh: float = 0.3
    box_thresh: float = 0.5
    # how far a shrunk text region is grown back out: rapidocr's 1.6 let the boxes of a balloon's
    # columns overlap a fifth of a letter and two balloons' texts touch (scans: 41 of 58 blocks
    # with the first grouping rule, 45 at 1.3); the box is shrunk to its letters anyway (`margin`)
    unclip_ratio: float = 1.3
    # onnxruntime's threads for one run: the machine's cores, at most this many
    threads: int = 4

    # --- lines into blocks (app/blocks/grouping.py) ---------------------------------------------
    # a line this much longer than thick is a column (tall) or a row (wide); squarer ones (a
    # letter or two) take the direction of the lines they join (flat from 1.1 to 1.6)
    direction_ratio: float = 1.3
    # letters (the larger line's thickness): columns side by side at most this far apart join.
    # The columns of one balloon stand 0.1-0.4 letters apart (their boxes shrunk to the letters),
    # two balloons' texts from 0.3 letters on: scans 54 at 0.4, 55 at 0.6 and 0.8 (51 at 60%)
    line_gap: float = 0.6
    # ... rows at most this far: horizontal text is set looser (a game's lines 1.5-2 letters
    # apart: 0.7 letters of white between 64 px letters 110 px apart); scans flat from 0.6
    row_gap: float = 1.0
    # ... when they overlap along their length by this share of the shorter (flat to 0.5)
    side_overlap: float = 0.3
    # ... and start together, end together or share their middle within this many letters: the
    # lines of one block did within 0.43 on the scans (both sizes), those of two balloons drawn
    # into one white were 1.0 and more apart; 0.3 lost 1 and 2 blocks
    align: float = 0.45
    # ... and their thicknesses (letter sizes) differ at most this many times (ruby and titles
    # apart): 1.3 lost a block shown at 60%, flat to 2.0
    size_ratio: float = 1.6
    # letters: lines one after the other in one column (or row) at most this far apart join (a
    # column the detector cut in two; flat from 0.5 to 1.5)
    along_gap: float = 1.0
    # ... when they share this much of the thinner one's thickness: two balloons' columns one
    # above the other stand offset (001a's どっから and 初めて share 0.55): 0.5 lost 2 blocks
    same_line: float = 0.7
    # luminance steps from a line's paper level (its box's median) that still count as paper:
    # lines join only within one connected area of it (a balloon's inside, a box; an outline or a
    # border between them keeps them apart); and ink beyond it is a line's letters. 40 lost a
    # block at each size, flat to 80
    paper_tolerance: int = 60
    # px around a line's letters (the detector's box shrunk to them); marks of ink that run on
    # this far beyond the detector's box are no letters of it (an outline it cuts). The issue asks
    # for a few px at most; 2 px made boxes smaller than the truth's (45 of 58), 4-6 px 55
    margin: int = 4
    # px: a line whose letters span less than this either way is a speck (002a's 5×13 px mark)
    min_letter: int = 8

    # --- punctuation alone in a balloon (app/blocks/marks.py) -----------------------------------
    # The detector gives a lone "！" or "．．．" almost no chance of text (000b's "！" 0.01, 002b's
    # "．．．" 0.05 at most): this second look finds both, and each balloon of a rendered page of
    # "！", "？", "…", "！！" (tests/blocks), with no box on the scans' drawing.
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
    # this many times as high as wide (Noto's "？" hook: 18×19 px), or, when solid (filling more
    # than `lone_blot` of its box: a straight "！"), `lone_bar` times (a solid mark less tall is a
    # pupil)
    lone_dot: float = 0.5
    lone_upright: float = 0.9
    lone_blot: float = 0.6
    lone_bar: float = 2.0

    # --- a click (block_at) -------------------------------------------------------------------
    # letters (the block's font size): a click this far outside a block's box still proposes it
    # (in the balloon's white beside its text), and at most this many px (big lettering would
    # reach far): from half a letter and 16 px to 1.5 letters and 40 px the scans' clicks stayed
    # 53 and 51 of 58, their quiet art clicks 47-46 and 47-46
    click_reach: float = 1.0
    click_reach_px: int = 24


PARAMS = Params()
