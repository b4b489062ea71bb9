"""The tray app's one thread for the text detector (`hayai-blocks`): the selection's frozen
screens and Hover to read's grabs, one run after another (two at once would only share the
cores). `hayai blocks` and `hayai page` run `find_blocks` on their main thread, and the OCR
worker's whole screens on its own thread, which its `stop` waits for.

Why it is stopped with care: onnxruntime aborts the process ("terminate called without an active
exception") when the interpreter ends while a daemon thread is inside a run. This thread is no
daemon: `stop()`, at the app's quit, drops the runs not yet started and waits for the one under
way (a detection takes a second or two); should that wait run out, the interpreter still joins the
thread before it ends (concurrent.futures' exit hook), so a late quit is slow, never an abort.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor

log = logging.getLogger(__name__)

STOP_WAIT_S = (
    5.0  # a detection takes ≤ 2 s on 2 loaded cores (a 1.3 MP page); margin for a slower one
)

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def submit(function, *args) -> Future:
    """`function(*args)` (nothing of Qt) on the detector's thread: its result or error in the
    returned future. After `stop`, a new thread."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(1, thread_name_prefix="hayai-blocks")
        return _pool.submit(function, *args)


def stop(wait_s: float | None = None) -> bool:
    """Drop the runs not yet started, wait at most `wait_s` (STOP_WAIT_S) for the one under way
    and for the thread to end; whether it ended."""
    global _pool
    wait_s = STOP_WAIT_S if wait_s is None else wait_s
    with _lock:
        pool, _pool = _pool, None
    if pool is None:
        return True
    pool.shutdown(wait=False, cancel_futures=True)
    threads = list(pool._threads)  # the pool's own record of its one thread
    for thread in threads:
        thread.join(wait_s)
    ended = not any(thread.is_alive() for thread in threads)
    if not ended:
        log.warning("the text detector did not finish within %.0f s; exit waits for it", wait_s)
    return ended
