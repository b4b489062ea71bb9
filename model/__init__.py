"""The Hayai OCR engine: our own PyTorch implementation of the released checkpoints.

No Qt and no `app` imports here. `load_recognizer` is imported lazily so that
`import model` stays cheap (torch is imported only when a recognizer is built).
"""

from __future__ import annotations


def load_recognizer(model_dir=None, variant=None, device="auto", precision="auto", **kwargs):
    from model.recognizer import load_recognizer as _load

    return _load(model_dir=model_dir, variant=variant, device=device, precision=precision, **kwargs)


__all__ = ["load_recognizer"]
