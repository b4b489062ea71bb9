"""config.json → `HayaiConfig`, and the engine's fixed vocabulary: variants, devices, precisions, files.

The released config.json names only the decoder sizes (maybe) and `siglip2_ref`; anything it lacks is
taken from the weights' shapes (see weights.py). Small test checkpoints describe their vision tower
with an extra `vision_config` object and may set `max_num_patches` (docs/model.md, "Small
checkpoints for tests"). Standard library only: the CLI's argument parser and the settings table
import their choices from here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

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

# google/siglip2-base-patch16-naflex vision tower (identical to upstream's offline fallback).
SIGLIP2_BASE = {
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

    def vision_config(self):
        """The transformers Siglip2VisionConfig, built locally (no hub access), without the pooling head."""
        from transformers import Siglip2VisionConfig

        return Siglip2VisionConfig(**self.vision, vision_use_head=False, attn_implementation="sdpa")

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
