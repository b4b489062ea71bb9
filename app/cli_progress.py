"""Progress on the command line: `model.progress.Progress` callbacks drawn as tqdm bars on stderr.

    with ProgressBars("importing") as bars:
        store.import_zip(path, bars)          # bars(what, done, total)

One bar per job, `what` beside it, ended when the job reaches its total; with `per_item`, one bar
per `what` instead (the files of a download, sized in bytes), and an item already complete when
first reported draws none.
"""

from __future__ import annotations

import sys

# where `done` counts nothing a user knows; tqdm writes the postfix as ", part"
PERCENT = "{desc}: {percentage:3.0f}%|{bar}|{postfix}"


class ProgressBars:
    def __init__(self, title: str = "", *, per_item: bool = False, unit_bytes: bool = False):
        self.title, self.per_item, self.unit_bytes = title, per_item, unit_bytes
        self.bar = None
        self.item: str | None = None
        self.ended = False  # the job reached its total: later reports ("done") draw nothing

    def __call__(self, what: str, done: float, total: float) -> None:
        if self.per_item and what != self.item:
            self.close()
            self.item = what
            if done == total:  # already there (a file in the cache): nothing to show
                return
            self.bar = self._new(what, total)
        elif self.bar is None and not self.per_item and not self.ended:
            self.item = what
            self.bar = self._new(what, total)
        if self.bar is None:
            return
        if what != self.item:  # the job's next part, beside its one bar
            self.item = what
            self.bar.set_postfix_str(what, refresh=False)
        if self.bar.total != (total or None):
            self.bar.total = total or None
        self.bar.update(done - self.bar.n)
        if not self.per_item and total and done >= total:
            self.close()
            self.ended = True

    def _new(self, what: str, total: float):
        from tqdm.auto import tqdm

        if self.unit_bytes:
            return tqdm(
                desc=what if self.per_item else self.title,
                total=total or None,
                unit="B",
                unit_scale=True,
                file=sys.stderr,
            )
        bar = tqdm(
            desc=self.title or what, total=total or None, bar_format=PERCENT, file=sys.stderr
        )
        bar.set_postfix_str(what, refresh=False)
        return bar

    def write(self, message: str) -> None:
        """A line above the bar (or alone when there is none)."""
        if self.bar is not None:
            self.bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar = None

    def __enter__(self) -> ProgressBars:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
