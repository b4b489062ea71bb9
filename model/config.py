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
        if self.d_vision != self.vision["hidden_size"]:
            raise ValueError(
                f"config.json: d_vision ({self.d_vision}) must equal vision_config.hidden_size "
                f"({self.vision['hidden_size']})"
            )
        for name in ("vocab_size", "d_model", "d_vision", "d_ffn", "n_layers"):
            if getattr(self, name) <= 0:
                raise ValueError(f"config.json: {name} must be positive, got {getattr(self, name)}")

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
            sizes[name] = int(value)
        vision = dict(SIGLIP2_BASE)
        extra = data.get("vision_config") or {}
        if not isinstance(extra, dict):
            raise ValueError("config.json: vision_config must be an object")
        vision.update({k: v for k, v in extra.items() if k in VISION_FIELDS})
        budget = data.get("max_num_patches")
        config = cls(
            variant=variant, vision=vision, max_num_patches=int(budget) if budget else None, **sizes
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
