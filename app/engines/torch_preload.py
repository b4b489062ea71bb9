"""Loading torch in the OCR worker without freezing the GUI thread: the GIL.

A Python thread that imports torch and builds a model still freezes the GUI thread when it holds
the GIL for long stretches. Measured on the dev machine, the two long holders were (1) the cyclic
garbage collector, which runs full collections over the hundreds of thousands of objects that
`import torch, transformers` creates (stalls of 200-450 ms), and (2) the static initialisers of
libtorch_cpu.so, run by `dlopen` inside `import torch._C` (about 400 ms). The fix is two lines of
idea: keep the collector off while the engine loads (then `gc.freeze()` those objects so later
collections skip them: `app.engines.worker._Engine.load`), and `dlopen` libtorch first through ctypes,
which releases the GIL while it loads (`preload_torch_libraries`, here). `hayai bench --app`
measures the result (app/startup_stall.py; tests/app/test_app_bench.py).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys

log = logging.getLogger(__name__)


def preload_torch_libraries() -> None:
    """dlopen libtorch with the GIL released, so `import torch` does not hold the GIL while it loads.

    `ctypes.CDLL(path)` keeps the GIL during dlopen (CPython 3.11), but an ordinary ctypes foreign
    call releases it: calling libc's `dlopen` itself runs libtorch's loading and static initialisers
    (~400 ms) while the GUI thread keeps running. The later `import torch` finds the library loaded.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.origin:
            return
        lib = os.path.join(os.path.dirname(spec.origin), "lib")
        dlopen = ctypes.CDLL(None).dlopen
        dlopen.argtypes, dlopen.restype = [ctypes.c_char_p, ctypes.c_int], ctypes.c_void_p
        rtld_now = getattr(os, "RTLD_NOW", 2)
        # The same libraries and modes torch uses itself: its global deps RTLD_GLOBAL, then libtorch.
        for name, mode in (
            ("libtorch_global_deps.so", rtld_now | ctypes.RTLD_GLOBAL),
            ("libtorch_cpu.so", rtld_now),
            ("libtorch.so", rtld_now),
        ):
            path = os.path.join(lib, name)
            if os.path.exists(path) and not dlopen(path.encode(), mode):
                log.debug("torch preload: dlopen(%s) failed", path)
                return
    # an unusual build: the plain import still works, less smoothly
    except (OSError, AttributeError) as exc:
        log.debug("torch preload skipped: %s", exc)
