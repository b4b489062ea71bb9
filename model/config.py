"""config.json → `HayaiConfig`, and the engine's fixed vocabulary: variants, devices, precisions, files.

The released config.json names only the decoder sizes (maybe) and `siglip2_ref`; anything it lacks is
taken from the weights' shapes (see weights.py). Small test checkpoints describe their vision tower
with an extra `vision_config` object and may set `max_num_patches` (docs/model.md, "Small
checkpoints for tests"). Standard library only: the CLI's argument parser and the settings table
import their choices from here. `declared_cap`: a model folder's pixel cap, from its config.json and
the names in its weights' header, before anything loads.
"""

from __future__ import annotations

import dataclasses
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import Siglip2VisionConfig

# Fixed by the architecture, not by config.json (docs/model.md, "Configuration").
N_HEADS = 8
N_KV_HEADS = 2
HEAD_DIM = 64
ROPE_THETA = 10000.0
NORM_EPS = 1e-6

VARIANTS = ("v2.1", "nova")
DEFAULT_VARIANT = "v2.1"
DEVICES = ("auto", "cpu", "cuda", "mps")  # auto: CUDA, then MPS, then the CPU
PRECISIONS = (
    "auto",
    "exact",
    "fast",
)  # exact: float32; fast: see model/fast.py; auto: fast where faithful

# The files of a model folder: what the loader cannot do without, and everything a download fetches.
WEIGHTS_FILE = "model.safetensors"
REQUIRED_FILES = ("config.json", WEIGHTS_FILE, "tokenizer.json")
OPTIONAL_FILES = ("tokenizer_config.json",)
DATA_FILES = REQUIRED_FILES + OPTIONAL_FILES
REQUIRED_FILES_TEXT = ", ".join(REQUIRED_FILES[:-1]) + " and " + REQUIRED_FILES[-1]
DEFAULT_PATCH_BUDGET = {"v2.1": 256, "nova": 512}
# The tensor that tells each variant's weights apart (its projector: v2.1 MLP, nova DSC).
VARIANT_KEYS = {
    "v2.1": "decoder.projector.proj.0.weight",
    "nova": "decoder.projector.mlp.0.weight",
}
# Shrunk more than this per side, a 16-px glyph becomes one pixel: the model could not read it.
MAX_SHRINK = 16
MAX_HEADER_BYTES = (
    100_000_000  # a safetensors header larger than this is refused (as safetensors does)
)

# google/siglip2-base-patch16-naflex vision tower (identical to upstream's offline fallback).
SIGLIP2_BASE: dict[str, Any] = {
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "num_channels": 3,
    "patch_size": 16,
    "hidden_act": "gelu_pytorch_tanh",
    "layer_norm_eps": 1e-6,
    "attention_dropout": 0.0,
    "num_patches": 256,
}
VISION_FIELDS = tuple(SIGLIP2_BASE)


@dataclass(frozen=True)
class ImageCap:
    """The most pixels an image may declare for a model: its patch budget, each patch shrunk at most
    MAX_SHRINK times per side. More could only be read as smears: the model resizes every image to
    its budget, so a larger one loses its glyphs (256 patches of 16×16 px → 16.8 megapixels for
    v2.1, 512 → 33.5 for nova). One per model (`HayaiConfig.image_cap`, `declared_cap` before the
    model loads): `hayai ocr`, `hayai page`, `hayai serve` and the app check it from an image's
    header (model/images.py) before any pixel is decoded. The default, the largest released
    model's, is for images no model reads (a picture for an Anki note)."""

    budget: int = max(DEFAULT_PATCH_BUDGET.values())
    patch_size: int = SIGLIP2_BASE["patch_size"]

    @property
    def pixels(self) -> int:
        return self.budget * (self.patch_size * MAX_SHRINK) ** 2

    def __str__(self) -> str:
        side = f"{self.patch_size}×{self.patch_size}"
        return (
            f"{self.pixels / 1e6:.1f} megapixels ({self.budget} patches of {side} px, "
            f"shrunk at most {MAX_SHRINK}× per side)"
        )


# The range each number in config.json may take: wide enough for any plausible checkpoint, narrow
# enough that a typo (max_num_patches = 10**9) is refused at load instead of failing every read
# with "Unable to allocate 715 GiB". 4,096 patches is 8× the largest released budget (nova, 512).
RANGES = {
    "vocab_size": (1, 1_000_000),
    "d_model": (1, 16_384),
    "d_vision": (1, 16_384),
    "d_ffn": (1, 65_536),
    "n_layers": (1, 256),
    "max_num_patches": (1, 4_096),
    "vision_config.hidden_size": (1, 16_384),
    "vision_config.intermediate_size": (1, 65_536),
    "vision_config.num_hidden_layers": (1, 256),
    "vision_config.num_attention_heads": (1, 256),
    "vision_config.num_channels": (3, 3),
    "vision_config.patch_size": (1, 64),
    "vision_config.num_patches": (1, 16_384),
}


def _check_range(key: str, value) -> None:
    low, high = RANGES[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(
            f"config.json: {key} must be a whole number from {low:,} to {high:,}, got {value!r}"
        )


@dataclass
class HayaiConfig:
    variant: str = DEFAULT_VARIANT
    vocab_size: int = 16004
    d_model: int = 512
    d_vision: int = 768
    d_ffn: int = 2048
    n_layers: int = 12
    vision: dict = field(default_factory=lambda: dict(SIGLIP2_BASE))
    max_num_patches: int | None = None  # None: the variant's default budget

    @property
    def patch_budget(self) -> int:
        return self.max_num_patches or DEFAULT_PATCH_BUDGET[self.variant]

    @property
    def patch_size(self) -> int:
        return self.vision["patch_size"]

    @property
    def image_cap(self) -> ImageCap:
        return ImageCap(self.patch_budget, self.patch_size)

    def vision_config(self) -> Siglip2VisionConfig:
        """The transformers Siglip2VisionConfig, built locally (no hub access), without the pooling head."""
        from transformers import Siglip2VisionConfig

        # transformers' configs take keywords their signatures do not list (attn_implementation)
        return Siglip2VisionConfig(**self.vision, vision_use_head=False, attn_implementation="sdpa")  # type: ignore[call-arg]

    def validate(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(
                f"unknown variant {self.variant!r}; expected one of {', '.join(VARIANTS)}"
            )
        for name in ("vocab_size", "d_model", "d_vision", "d_ffn", "n_layers"):
            _check_range(name, getattr(self, name))
        if self.max_num_patches is not None:
            _check_range("max_num_patches", self.max_num_patches)
        for name in VISION_FIELDS:
            if f"vision_config.{name}" in RANGES:
                _check_range(f"vision_config.{name}", self.vision[name])
        if self.d_vision != self.vision["hidden_size"]:
            raise ValueError(
                f"config.json: d_vision ({self.d_vision}) must equal vision_config.hidden_size "
                f"({self.vision['hidden_size']})"
            )
        if self.vision["hidden_size"] % self.vision["num_attention_heads"]:
            raise ValueError(
                "config.json: vision_config.hidden_size must be a multiple of "
                "vision_config.num_attention_heads"
            )

    @classmethod
    def from_json(cls, data: dict, inferred: dict, variant: str) -> HayaiConfig:
        """Sizes from config.json where present (and non-zero), else from `inferred` (the weights' shapes)."""
        sizes = {}
        for name in ("vocab_size", "d_model", "d_vision", "d_ffn", "n_layers"):
            value = data.get(name) or inferred.get(name)
            if value is None:
                raise ValueError(
                    f"config.json has no {name} and it cannot be told from the weights"
                )
            sizes[name] = _whole(name, value)
        vision = dict(SIGLIP2_BASE)
        extra = data.get("vision_config") or {}
        if not isinstance(extra, dict):
            raise ValueError("config.json: vision_config must be an object")
        vision.update({k: v for k, v in extra.items() if k in VISION_FIELDS})
        budget = data.get("max_num_patches")
        config = cls(
            variant=variant,
            vision=vision,
            max_num_patches=None if budget is None else _whole("max_num_patches", budget),
            **sizes,
        )
        config.validate()
        return config

    def to_json(self) -> dict:
        data = dataclasses.asdict(self)
        data.pop("variant")
        data["vision_config"] = data.pop("vision")
        if data["max_num_patches"] is None:
            data.pop("max_num_patches")
        return {
            "architectures": ["HayaiModel"],
            "model_type": "hayai",
            **data,
            "siglip2_ref": "google/siglip2-base-patch16-naflex",
        }


def _whole(key: str, value) -> int:
    """A JSON number that must be whole (3.0 is, 3.5 and "3" are not) → int, checked against RANGES."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    _check_range(key, value)
    return value


def declared_cap(model_dir: str | Path | None, variant: str | None = None) -> ImageCap:
    """The image cap of the model in `model_dir` (None: the download of `variant`, whose released
    config.json sets no budget), known before it loads: config.json's budget and patch size, the
    variant from the tensor names in the weights' header (nothing else is read). The same as
    `HayaiConfig.image_cap` once it has loaded. A folder that cannot be read this way cannot load
    either: until the load says why, the largest released cap holds."""
    if model_dir is None:
        return HayaiConfig(variant=variant or DEFAULT_VARIANT).image_cap
    folder = Path(model_dir).expanduser()
    try:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        budget = data.get("max_num_patches")
        if budget is None:
            budget = DEFAULT_PATCH_BUDGET[_weights_variant(folder / WEIGHTS_FILE)]
        patch_size = (data.get("vision_config") or {}).get("patch_size", SIGLIP2_BASE["patch_size"])
        _check_range("vision_config.patch_size", patch_size)
        return ImageCap(_whole("max_num_patches", budget), patch_size)
    except (OSError, ValueError, AttributeError, struct.error):  # not loadable: the load says why
        return ImageCap()


def safetensors_header(path: Path) -> tuple[dict, int]:
    """A safetensors file's header (tensor name → dtype, shape, data_offsets) and where its data
    starts, read without loading anything; ValueError (or struct.error, OSError) for a file that
    is not one."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        if size > MAX_HEADER_BYTES:
            raise ValueError(f"{path}: a header of {size:,} bytes")
        header = json.loads(f.read(size))
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a safetensors header")
    return header, 8 + size


def _weights_variant(path: Path) -> str:
    """The variant whose projector the weights hold, from their safetensors header alone."""
    found = variant_of(safetensors_header(path)[0])
    if found is None:
        raise ValueError(f"{path}: the variant cannot be told from the weights")
    return found


def variant_of(names) -> str | None:
    """The variant whose projector is among the tensor `names`; None unless exactly one is."""
    found = [v for v, key in VARIANT_KEYS.items() if key in names]
    return found[0] if len(found) == 1 else None


def tiny_config(variant: str = DEFAULT_VARIANT) -> HayaiConfig:
    """The small-checkpoint shape used by tests (same as the golden checkpoint)."""
    vision = dict(
        SIGLIP2_BASE,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_patches=64,
    )
    return HayaiConfig(
        variant=variant,
        vocab_size=300,
        d_model=64,
        d_vision=64,
        d_ffn=128,
        n_layers=2,
        vision=vision,
    )


def full_config(variant: str = DEFAULT_VARIANT) -> HayaiConfig:
    return HayaiConfig(variant=variant)
