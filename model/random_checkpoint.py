"""Random Hayai checkpoints in the released layout, for tests, benchmarks and the packaging smoke test.

    python -m model.random_checkpoint OUT --size tiny|full --variant v2.1|nova [--seed N]

writes config.json, model.safetensors (`vision_encoder.vision_model.*` keys, the unused pooling
`head.*` present, nova's training-only `decoder.ids_*` too), a ByteLevel-BPE tokenizer.json whose
last four ids are `<pad> <bos> <eos> <unk>`, and tokenizer_config.json. No download, no pickle.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from model.config import DEFAULT_VARIANT, VARIANTS, HayaiConfig, full_config, tiny_config
from model.tokenizer import SPECIALS, HayaiTokenizer

RELEASED_VISION_PREFIX = "vision_encoder.vision_model."


def make_config(size: str = "tiny", variant: str = DEFAULT_VARIANT) -> HayaiConfig:
    if size not in ("tiny", "full"):
        raise ValueError(f"size must be tiny or full, not {size!r}")
    return tiny_config(variant) if size == "tiny" else full_config(variant)


def init_random_(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Fill a (possibly meta-built, then `to_empty`) model: matrices N(0, 0.02), norm gains 1, biases 0."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim >= 2:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.02)
            elif name.endswith("bias"):
                p.zero_()
            else:  # RMSNorm / LayerNorm gains, per-channel residual scales
                p.fill_(1.0)
    return model


def random_model(size: str = "full", variant: str = DEFAULT_VARIANT, seed: int = 0):
    """(HayaiModel in float32 on CPU with random weights, its config), built without any files."""
    from model.weights import build_model, materialize_buffers

    config = make_config(size, variant)
    model = build_model(config).to_empty(device="cpu")
    init_random_(model, seed)
    materialize_buffers(model)
    return model.eval().requires_grad_(False), config


def tokenizer_json(vocab_size: int) -> dict:
    """A valid ByteLevel BPE: the 256 byte symbols, then merges of symbol pairs, then the 4 specials."""
    from tokenizers import pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    n_merges = vocab_size - len(SPECIALS) - len(alphabet)
    if n_merges < 0:
        raise ValueError(f"vocab_size must be at least {len(alphabet) + len(SPECIALS)}")
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    merges: list[list[str]] = []
    for a in alphabet:
        for b in alphabet:
            if len(merges) == n_merges:
                break
            merges.append([a, b])
            vocab[a + b] = len(vocab)
    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": True,
    }
    added = [
        {
            "id": len(vocab) + i,
            "content": s,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, s in enumerate(SPECIALS)
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": None,
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
        },
    }


def random_tokenizer(vocab_size: int) -> HayaiTokenizer:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        path.write_text(json.dumps(tokenizer_json(vocab_size)), encoding="utf-8")
        return HayaiTokenizer(path)


def _unused_tensors(config: HayaiConfig, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """The SigLIP2 pooling head (in every release) and, for nova, the IDS radical head."""
    h, i = config.vision["hidden_size"], config.vision["intermediate_size"]
    shapes = {
        "head.probe": (1, 1, h),
        "head.attention.in_proj_weight": (3 * h, h),
        "head.attention.in_proj_bias": (3 * h,),
        "head.attention.out_proj.weight": (h, h),
        "head.attention.out_proj.bias": (h,),
        "head.layernorm.weight": (h,),
        "head.layernorm.bias": (h,),
        "head.mlp.fc1.weight": (i, h),
        "head.mlp.fc1.bias": (i,),
        "head.mlp.fc2.weight": (h, i),
        "head.mlp.fc2.bias": (h,),
    }
    out = {
        RELEASED_VISION_PREFIX + k: torch.randn(s, generator=gen) * 0.02 for k, s in shapes.items()
    }
    if config.variant == "nova":
        out["decoder.ids_head.weight"] = torch.randn(96, config.d_model, generator=gen) * 0.02
        out["decoder.ids_norm.weight"] = torch.ones(config.d_model)
    return out


def write_checkpoint(
    out_dir,
    size: str = "tiny",
    variant: str = DEFAULT_VARIANT,
    seed: int = 0,
    vision_prefix: str = RELEASED_VISION_PREFIX,
) -> Path:
    """Write a random checkpoint folder in the released layout; returns the folder."""
    from safetensors.torch import save_file

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, config = random_model(size, variant, seed)
    state = {}
    for key, t in model.state_dict().items():
        if key.startswith("vision_encoder."):
            key = vision_prefix + key[len("vision_encoder.") :]
        state[key] = t.contiguous()
    state.update(_unused_tensors(config, torch.Generator().manual_seed(seed + 1)))
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config.to_json(), indent=2), encoding="utf-8")
    (out / "tokenizer.json").write_text(
        json.dumps(tokenizer_json(config.vocab_size)), encoding="utf-8"
    )
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "bos_token": "<bos>",
                "eos_token": "<eos>",
                "pad_token": "<pad>",
                "unk_token": "<unk>",
                "tokenizer_class": "PreTrainedTokenizerFast",
            }
        ),
        encoding="utf-8",
    )
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m model.random_checkpoint", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("out", help="folder to write")
    p.add_argument("--size", choices=["tiny", "full"], default="tiny")
    p.add_argument("--variant", choices=VARIANTS, default=DEFAULT_VARIANT)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    out = write_checkpoint(args.out, args.size, args.variant, args.seed)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
