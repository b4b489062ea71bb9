"""The fast path: faithful to exact fp32, transforms that preserve results, and the CUDA path's CPU parts."""

import logging

import pytest
import torch

from model import fast, generate
from tests_support import assert_faithful, sample_images
from model.recognizer import load_recognizer, resolve_precision


@pytest.fixture(scope="module")
def exact(tiny_v21):
    return load_recognizer(tiny_v21, device="cpu", precision="exact")


def test_fast_path_is_faithful_on_this_cpu(tiny_v21, exact):
    assert_faithful(exact, load_recognizer(tiny_v21, device="cpu", precision="fast"))


def test_fp16_transform_used_on_cuda_is_faithful(tiny_v21, exact):
    """The CUDA fast path's casting, checked on CPU (fp16 kernels exist there too)."""
    rec = load_recognizer(tiny_v21, device="cpu", precision="exact")
    rec.model, rec.compute_dtype = fast.make_fast(rec.model, torch.device("cuda"))
    assert rec.model.dtype == torch.float16 and rec.model.freqs.dtype == torch.float32
    assert_faithful(exact, rec, steps=8)


def test_fused_projections_preserve_the_logits(tiny_v21, exact):
    rec = load_recognizer(tiny_v21, device="cpu", precision="exact")
    fast.fuse_projections(rec.model)
    attn = rec.model.decoder.layers[0].attn
    assert attn.wqkv is not None and not hasattr(attn, "w_q")
    ids = torch.tensor([[exact.tokenizer.bos_id, 5, 9, 14]] * 2)
    assert torch.allclose(rec.logits(sample_images(), ids), exact.logits(sample_images(), ids), atol=1e-5)


def test_int8_path_quantises_only_the_ffn(tiny_v21):
    rec = load_recognizer(tiny_v21, device="cpu", precision="exact")
    fast.quantize_int8_(rec.model)
    fast.fuse_projections(rec.model)
    layer = rec.model.decoder.layers[0]
    assert type(layer.ffn.w_down).__module__.endswith("dynamic.modules.linear")
    assert not hasattr(layer.ffn, "w_gate") and layer.ffn.w_gate_up is not None
    assert isinstance(rec.model.decoder.output_head, torch.nn.Linear)
    assert rec.model.decoder.output_head.weight.dtype == torch.float32


def test_int8_weights_read_from_the_file_equal_those_from_memory(tiny_v21, monkeypatch):
    """Loading with the FFN left unloaded and read layer by layer gives the same model as quantising
    the loaded weights (the file route only saves memory)."""
    from model.weights import Checkpoint, load_model

    monkeypatch.setattr(fast, "cpu_fast_kind", lambda: "int8")
    from_file = load_recognizer(tiny_v21, device="cpu", precision="fast")
    assert from_file.compute_dtype == "int8"
    in_memory, _ = load_model(tiny_v21)
    fast.make_fast(in_memory, torch.device("cpu"))
    ckpt = Checkpoint(tiny_v21)
    assert torch.equal(ckpt.read("decoder.layers.1.ffn.w_up.weight"), ckpt.tensor("decoder.layers.1.ffn.w_up.weight"))
    x = torch.randn(3, 64)
    for a, b in zip(from_file.model.decoder.layers, in_memory.decoder.layers):
        assert torch.equal(a.ffn(x), b.ffn(x))


@pytest.mark.parametrize("flags, expected", [
    ({"avx2", "avx512f", "avx512_bf16"}, True), ({"avx2", "amx_bf16", "amx_tile"}, True), ({"avx2", "fma"}, False)])
def test_native_bf16_is_detected_from_the_cpu_flags(flags, expected):
    assert fast.cpu_has_native_bf16(frozenset(flags)) is expected


def test_auto_precision_resolution(monkeypatch):
    assert resolve_precision("exact", torch.device("cuda")) == "exact"
    assert resolve_precision("auto", torch.device("cuda")) == "fast"
    monkeypatch.setattr(fast, "cpu_fast_kind", lambda: None)
    assert resolve_precision("auto", torch.device("cpu")) == "exact"
    monkeypatch.setattr(fast, "cpu_fast_kind", lambda: "int8")
    assert resolve_precision("auto", torch.device("cpu")) == "fast"


def test_step_at_is_the_same_step_as_step(exact):
    """The capturable decode step (pure tensor inputs) computes what the eager step computes."""
    from model.preprocess import preprocess

    images = sample_images()
    with torch.inference_mode():
        b = preprocess(images, exact.config.patch_budget)
        vision = exact.model.encode_images(b.pixel_values, b.pixel_attention_mask, b.spatial_shapes)
        bos = torch.full((2, 1), exact.tokenizer.bos_id)
        state = generate.DecodeState(exact.model, vision, bos, extra_slots=4)
        token = torch.tensor([7, 11])
        slot = torch.tensor([state.n_vision + state.n_text])
        by_tensor = state.step_at(token, slot, state.key_valid)
        state2 = generate.DecodeState(exact.model, vision, bos, extra_slots=4)
        assert torch.allclose(state2.step(token), by_tensor, atol=1e-6)


def test_graph_capture_failure_falls_back_to_eager(exact, caplog, monkeypatch):
    """Where capture fails, decoding stays eager and correct, and capture is not tried again."""
    from model import cuda_graph

    images = sample_images()
    expected = [r.token_ids for r in exact.read(images, max_new_tokens=6)]

    def capture_fails(state):
        raise RuntimeError("operation not permitted when stream is capturing")

    monkeypatch.setattr(cuda_graph, "_Graph", capture_fails)
    exact.graphs = cuda_graph.DecodeGraphs(exact.model)
    try:
        with caplog.at_level(logging.WARNING, logger="model.cuda_graph"):
            got = [r.token_ids for r in exact.read(images, max_new_tokens=6)]
        assert got == expected
        assert "capture failed" in caplog.text
        assert exact.graphs.failed  # remembered: no second attempt for this shape
    finally:
        exact.graphs = None
