"""A manual check that mokuro itself accepts what `hayai page --mokuro` writes (not collected by
pytest: mokuro pulls in its own OCR stack, so it is installed by hand in a throwaway venv, never in
the project's). Run:

    python -m venv /tmp/mk && /tmp/mk/bin/pip install --no-deps mokuro==0.2.5 loguru natsort fire \\
        yattag tqdm
    hayai page VOL --mokuro VOL --model DIR
    PYTHONPATH=<the project venv's site-packages> /tmp/mk/bin/python tests/mokuro_check.py VOL

mokuro's own pipeline then runs on the volume without its OCR (a stand-in that fails if it is
ever built): it must take every page from the cache we wrote, build its `.mokuro` with our lines,
and its legacy HTML reader must show our texts.
"""

import json
import sys
import types
from pathlib import Path


class _NoOcr:
    def __init__(self, *args, **kwargs):
        raise SystemExit("mokuro wanted to read a page itself: it did not take our cache")


def main(folder: Path) -> None:
    stub = types.ModuleType("mokuro.manga_page_ocr")
    stub.__dict__["MangaPageOcr"] = _NoOcr
    sys.modules["mokuro.manga_page_ocr"] = stub
    sys.modules.setdefault("cv2", types.ModuleType("cv2"))  # only its OCR uses OpenCV
    from mokuro.run import run

    ours_file = folder.parent / (folder.name + ".mokuro")
    ours = json.loads(ours_file.read_text(encoding="utf-8"))
    ours_file.rename(ours_file.with_name("hayai-" + ours_file.name))  # mokuro writes its own
    run(str(folder), disable_confirmation=True, legacy_html=True)
    theirs = json.loads(ours_file.read_text(encoding="utf-8"))
    html = ours_file.with_suffix(".html").read_text(encoding="utf-8")
    assert [p["img_path"] for p in theirs["pages"]] == [p["img_path"] for p in ours["pages"]]
    for a, b in zip(ours["pages"], theirs["pages"]):
        assert [x["lines"] for x in a["blocks"]] == [x["lines"] for x in b["blocks"]]
        assert (a["img_width"], a["img_height"]) == (b["img_width"], b["img_height"])
    texts = [line for p in ours["pages"] for blk in p["blocks"] for line in blk["lines"] if line]
    shown = sum(t in html for t in texts)
    print(f"mokuro {theirs['version']}: {len(theirs['pages'])} pages from our cache, ", end="")
    print(f"{shown} of {len(texts)} texts shown as they are in its HTML")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
