"""The one thread that runs the model in `hayai serve`: it loads the model, warms it up, measures
`--max-batch auto` and then reads every batch (the batcher's loop runs on it).

Why one: on a CPU torch runs its parallel ops on a team of OpenMP threads that belongs to the thread
that ran them, and a model loaded on one thread but read on another read about 40% slower here
(2-core AMD EPYC, a real-size random checkpoint, one crop of 32 tokens, back to back: 560-620 ms a
read on the thread that loaded it, 920-980 ms on another; the tray app's OCR worker already loads
and reads on its one QThread).
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future


class ModelThread:
    """A thread that runs the callables given to it, one after another, in order."""

    def __init__(self, name: str = "hayai-model"):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        # daemon: a read still running when the server stops does not hold up the process's exit
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn, *args, **kwargs) -> Future:
        """Run fn(*args, **kwargs) on this thread after what was given before → its future."""
        future: Future = Future()
        self._jobs.put((future, fn, args, kwargs))
        return future

    def call(self, fn, *args, **kwargs):
        """fn(*args, **kwargs) on this thread, waited for: its result, or its exception raised here."""
        return self.submit(fn, *args, **kwargs).result()

    def stop(self) -> None:
        """Let the thread end once what was given before has run."""
        self._jobs.put(None)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, fn, args, kwargs = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # the caller gets it from the future
                future.set_exception(exc)
