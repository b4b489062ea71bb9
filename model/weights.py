"""Loading a model folder: config.json + model.safetensors + tokenizer.json (tokenizer_config.json optional).

The weights are data: read with safetensors only (memory-mapped, no pickle, never the release's
Python files), mapped onto a model built on the meta device. Every key is normalised in one place
(`normalize_key`) and every shape is checked before anything is assigned.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from model.config import (
    DEFAULT_VARIANT,
    REQUIRED_FILES,
    REQUIRED_FILES_TEXT,
    VARIANT_KEYS,
    VARIANTS,
    WEIGHTS_FILE,
    HayaiConfig,
    safetensors_header,
    variant_of,
)
from model.errors import ModelNotFoundError, WeightsError

_VISION_PREFIXES = ("vision_encoder.vision_model.", "vision_encoder.")
_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def how_to_get(variant: str | None = DEFAULT_VARIANT) -> str:
    v = variant or DEFAULT_VARIANT
    return (
        f"Run `hayai model download --variant {v}` to fetch the release files, or pass `--model DIR` "
        f"with any folder holding {REQUIRED_FILES_TEXT}."
    )


def check_files(model_dir: Path, variant: str | None = None) -> None:
    if not model_dir.is_dir():
        raise ModelNotFoundError(f"model folder {model_dir} does not exist. {how_to_get(variant)}")
    for name in REQUIRED_FILES:
        if not (model_dir / name).is_file():
            raise ModelNotFoundError(f"{model_dir} has no {name}. {how_to_get(variant)}")


def normalize_key(key: str) -> str | None:
    """Released key → our module's key; None for tensors inference never uses."""
    for (
        prefix
    ) in _VISION_PREFIXES:  # transformers 4.x layout has a `vision_model.` level, 5.x has none
        if key.startswith(prefix):
            key = "vision_encoder." + key[len(prefix) :]
            break
    if key.startswith("vision_encoder.head.") or key.startswith("decoder.ids_"):
        return None  # the unused SigLIP2 pooling head; nova's training-only IDS radical head
    return key


def detect_variant(keys) -> str:
    found = variant_of(keys)
    if found is None:
        raise WeightsError(
            "cannot tell the variant from the weights: expected exactly one of "
            f"{', '.join(VARIANT_KEYS.values())} (v2.1 MLP projector / nova DSC projector)"
        )
    return found


def infer_sizes(shapes: dict[str, tuple]) -> dict:
    """Decoder sizes as the weights show them (used where config.json is silent)."""
    sizes = {}
    if (s := shapes.get("decoder.token_embeddings.weight")) and len(s) == 2:
        sizes["vocab_size"], sizes["d_model"] = s
    if (s := shapes.get("vision_encoder.post_layernorm.weight")) and len(s) == 1:
        sizes["d_vision"] = s[0]
    if (s := shapes.get("decoder.layers.0.ffn.w_gate.weight")) and len(s) == 2:
        sizes["d_ffn"] = s[0]
    layers = {int(m.group(1)) for k in shapes if (m := re.match(r"decoder\.layers\.(\d+)\.", k))}
    if layers:
        sizes["n_layers"] = max(layers) + 1
    return sizes


class Checkpoint:
    """An opened model folder: its config and lazily memory-mapped, normalised tensors."""

    def __init__(self, model_dir: str | Path, variant: str | None = None):
        from safetensors import safe_open

        self.dir = Path(model_dir).expanduser()
        check_files(self.dir, variant)
        path = self.dir / WEIGHTS_FILE
        try:
            self._file = safe_open(str(path), framework="pt")
            raw_keys = list(self._file.keys())
        except Exception as e:  # SafetensorError: truncated download, not a safetensors file, ...
            size = path.stat().st_size
            raise WeightsError(
                f"{path} is truncated or corrupt ({size:,} bytes; {e}). Delete it and download it again "
                f"(`hayai model download`)."
            ) from None
        self.keys: dict[str, str] = {}  # our key → released key
        for raw in raw_keys:
            key = normalize_key(raw)
            if key is not None:
                if key in self.keys:
                    raise WeightsError(f"{path} holds {key} twice ({self.keys[key]} and {raw})")
                self.keys[key] = raw
        self.shapes = {
            k: tuple(self._file.get_slice(raw).get_shape()) for k, raw in self.keys.items()
        }
        # the header's byte ranges, parsed on the first `read`
        self._offsets: dict[str, tuple[int, dict]] | None = None

        found = detect_variant(self.keys)
        if variant is not None and variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
        if variant is not None and variant != found:
            raise WeightsError(
                f"--variant {variant} contradicts the weights in {self.dir}, which are {found}"
            )
        try:
            data = json.loads((self.dir / "config.json").read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as e:
            raise WeightsError(f"{self.dir / 'config.json'} is not valid JSON: {e}") from None
        try:
            self.config = HayaiConfig.from_json(data, infer_sizes(self.shapes), found)
        except ValueError as e:
            raise WeightsError(f"{self.dir / 'config.json'}: {e}") from None

    def tensor(self, key: str) -> torch.Tensor:
        """The tensor, memory-mapped (pages are read when first used and stay mapped)."""
        return self._file.get_tensor(self.keys[key])

    def read(self, key: str) -> torch.Tensor:
        """The tensor in private memory, read with plain file I/O: its pages never enter the memory
        map, so they stop counting towards the process's memory once the tensor is dropped."""
        if self._offsets is None:
            header, base = safetensors_header(self.dir / WEIGHTS_FILE)
            self._offsets = {k: (base, v) for k, v in header.items() if k != "__metadata__"}
        base, info = self._offsets[self.keys[key]]
        start, end = info["data_offsets"]
        with open(self.dir / WEIGHTS_FILE, "rb") as f:
            f.seek(base + start)
            data = bytearray(f.read(end - start))
        tensor = torch.frombuffer(data, dtype=_DTYPES[info["dtype"]]).reshape(info["shape"])
        return tensor if tensor.dtype == torch.float32 else tensor.float()

    def check_against(self, expected: dict[str, torch.Size]) -> None:
        """Every key the model needs is present with the shape the config implies, and nothing else."""
        missing = sorted(set(expected) - set(self.shapes))
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            raise WeightsError(f"{self.dir / WEIGHTS_FILE} lacks {missing[0]}{more}")
        unexpected = sorted(set(self.shapes) - set(expected))
        if unexpected:
            raise WeightsError(
                f"{self.dir / WEIGHTS_FILE} has an unexpected tensor {self.keys[unexpected[0]]}"
            )
        for key, shape in expected.items():
            if tuple(shape) != self.shapes[key]:
                raise WeightsError(
                    f"{self.keys[key]}: the weights have shape {list(self.shapes[key])} but config.json "
                    f"implies {list(shape)}"
                )


def build_model(config: HayaiConfig, device="meta"):
    """The network with the given config; on the meta device it costs no memory and no init time."""
    from model.hayai import HayaiModel

    with torch.device(device):
        return HayaiModel(config)


def load_model(model_dir: str | Path, variant: str | None = None, skip=None):
    """Model folder → (HayaiModel in float32 on CPU, weights memory-mapped, eval mode; Checkpoint).

    skip(key) → True leaves that tensor on the meta device for the caller to fill (model/fast.py)."""
    ckpt = Checkpoint(model_dir, variant)
    model = build_model(ckpt.config)
    expected = {k: v.shape for k, v in model.state_dict().items()}
    ckpt.check_against(expected)
    state = {}
    for key in expected:
        if skip is not None and skip(key):
            continue
        t = ckpt.tensor(key)
        state[key] = t if t.dtype == torch.float32 else t.float()
    model.load_state_dict(state, strict=skip is None, assign=True)
    materialize_buffers(model)
    return model.eval().requires_grad_(False), ckpt


def materialize_buffers(model) -> None:
    """Non-persistent buffers (the rotary frequencies) are not in the checkpoint: rebuild them on CPU."""
    from model.hayai import rope_frequencies

    model.freqs = rope_frequencies()
