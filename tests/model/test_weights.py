"""Loading a model folder: layouts accepted, and every way a folder can be wrong gives a clear error."""

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from model.weights import Checkpoint, ModelNotFoundError, WeightsError, load_model, normalize_key


@pytest.fixture
def folder(tiny_v21, tmp_path):
    """A writable copy of the tiny v2.1 checkpoint."""
    out = tmp_path / "ckpt"
    shutil.copytree(tiny_v21, out)
    return out


def edit_config(folder, **changes):
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


def rewrite(folder, edit):
    state = load_file(folder / "model.safetensors")
    edit(state)
    save_file(state, folder / "model.safetensors")


def test_key_normalisation():
    assert (
        normalize_key("vision_encoder.vision_model.encoder.layers.0.mlp.fc1.weight")
        == "vision_encoder.encoder.layers.0.mlp.fc1.weight"
    )
    assert (
        normalize_key("vision_encoder.encoder.layers.0.mlp.fc1.weight")
        == "vision_encoder.encoder.layers.0.mlp.fc1.weight"
    )
    assert normalize_key("vision_encoder.vision_model.head.probe") is None
    assert normalize_key("vision_encoder.head.attention.in_proj_weight") is None
    assert normalize_key("decoder.ids_head.weight") is None
    assert normalize_key("decoder.output_head.weight") == "decoder.output_head.weight"


def test_prefix_layouts_load_identical_weights(tiny_v21, folder):
    rewrite(
        folder,
        lambda s: s.update(
            {
                k.replace("vision_encoder.vision_model.", "vision_encoder."): s.pop(k)
                for k in list(s)
                if k.startswith("vision_encoder.vision_model.")
            }
        ),
    )
    released, _ = load_model(tiny_v21)
    flat, _ = load_model(folder)
    for key, value in released.state_dict().items():
        assert torch.equal(value, flat.state_dict()[key]), key


def test_variant_is_told_from_the_keys(tiny_v21, tiny_nova):
    assert Checkpoint(tiny_v21).config.variant == "v2.1"
    assert Checkpoint(tiny_nova).config.variant == "nova"


def test_contradicting_variant_is_an_error(tiny_nova):
    with pytest.raises(WeightsError, match="contradicts"):
        Checkpoint(tiny_nova, variant="v2.1")


def test_sizes_missing_from_config_come_from_the_weights(folder):
    config = json.loads((folder / "config.json").read_text())
    for key in ("vocab_size", "d_model", "d_ffn", "n_layers"):
        config.pop(key)
    config["vocab_size"] = 0  # upstream's class default
    (folder / "config.json").write_text(json.dumps(config))
    ckpt = Checkpoint(folder)
    assert (
        ckpt.config.vocab_size,
        ckpt.config.d_model,
        ckpt.config.d_ffn,
        ckpt.config.n_layers,
    ) == (300, 64, 128, 2)
    load_model(folder)


def test_shape_mismatch_names_the_key_and_both_shapes(folder):
    rewrite(
        folder, lambda s: s.__setitem__("decoder.layers.1.ffn.w_up.weight", torch.zeros(100, 64))
    )
    with pytest.raises(
        WeightsError, match=r"decoder\.layers\.1\.ffn\.w_up\.weight.*\[100, 64\].*\[128, 64\]"
    ):
        load_model(folder)


def test_config_contradicting_the_weights(folder):
    edit_config(folder, d_ffn=256)
    with pytest.raises(WeightsError, match=r"ffn\.w_gate\.weight.*\[128, 64\].*\[256, 64\]"):
        load_model(folder)


def test_d_vision_must_equal_the_tower_width(folder):
    edit_config(folder, d_vision=32)
    with pytest.raises(WeightsError, match="d_vision"):
        Checkpoint(folder)


def test_missing_tensor_is_named(folder):
    rewrite(folder, lambda s: s.pop("decoder.final_norm.weight"))
    with pytest.raises(WeightsError, match="lacks decoder.final_norm.weight"):
        load_model(folder)


def test_unknown_tensor_is_named(folder):
    rewrite(folder, lambda s: s.__setitem__("decoder.surprise", torch.zeros(2)))
    with pytest.raises(WeightsError, match="decoder.surprise"):
        load_model(folder)


def test_unused_tensors_are_ignored(tiny_nova):
    raw = load_file(tiny_nova / "model.safetensors")
    assert any(k.startswith("decoder.ids_") for k in raw)
    assert any(".head." in k for k in raw)
    model, _ = load_model(tiny_nova)
    assert not any("head.probe" in k or "ids_" in k for k in model.state_dict())


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "tokenizer.json"])
def test_missing_file_names_the_file_and_how_to_get_it(folder, name):
    (folder / name).unlink()
    with pytest.raises(ModelNotFoundError) as err:
        Checkpoint(folder)
    assert (
        name in str(err.value)
        and "hayai model download" in str(err.value)
        and "--model" in str(err.value)
    )


def test_missing_folder(tmp_path):
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        Checkpoint(tmp_path / "nowhere")


def test_truncated_weights_give_a_clear_error(folder):
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(WeightsError, match="truncated or corrupt"):
        Checkpoint(folder)


def test_garbage_weights_give_a_clear_error(folder):
    (folder / "model.safetensors").write_bytes(b"<html>rate limited</html>")
    with pytest.raises(WeightsError, match="truncated or corrupt"):
        Checkpoint(folder)


def test_bad_config_json(folder):
    (folder / "config.json").write_text("{not json")
    with pytest.raises(WeightsError, match="config.json"):
        Checkpoint(folder)


def test_tokenizer_without_specials_is_an_error(folder):
    from model.tokenizer import HayaiTokenizer, TokenizerError

    data = json.loads((folder / "tokenizer.json").read_text())
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] != "<eos>"]
    (folder / "tokenizer.json").write_text(json.dumps(data))
    with pytest.raises(TokenizerError, match="<eos>"):
        HayaiTokenizer.from_dir(folder)


def test_tokenizer_specials_are_the_last_four_ids(tiny_v21):
    from model.tokenizer import HayaiTokenizer

    tok = HayaiTokenizer.from_dir(tiny_v21)
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == (296, 297, 298, 299)
    assert tok.vocab_size == 300
    assert tok.decode(tok.encode("hello 日本")) == "hello 日本"


def test_loaded_model_is_memory_mapped_and_float32(tiny_v21):
    model, _ = load_model(tiny_v21)
    assert all(p.dtype == torch.float32 and p.device.type == "cpu" for p in model.parameters())
    assert not any(p.requires_grad for p in model.parameters())
