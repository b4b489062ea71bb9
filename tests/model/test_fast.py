"""The fast path: faithful to exact fp32, transforms that preserve results, and the CUDA path's CPU parts."""

import gc
import logging

import pytest
import torch
from tests_support import assert_faithful, sample_images
from torch.ao.nn.quantized import dynamic as nnqd

from model import fast, generate, packed_linear
from model.device_choice import resolve_precision
from model.recognizer import load_recognizer

# What `cpu_recipes` picks on each kind of CPU (with fbgemm, as on every x86 build of torch)
AVX2 = {"vision": "fp16-packed", "prefill": "int8+fp16-packed", "decode": "int8+fp16-packed"}
NATIVE_BF16 = {"vision": "bfloat16", "prefill": "int8+fp16-packed", "decode": "int8+fp16-packed"}
BF16_ONLY = dict.fromkeys(fast.STAGES, "bfloat16")  # native bf16 without fbgemm (no x86 kernels)


@pytest.fixture(scope="module")
def exact(tiny_v21):
    return load_recognizer(tiny_v21, device="cpu", precision="exact")


def test_fast_path_is_faithful_on_this_cpu(tiny_v21, exact):
    assert_faithful(exact, load_recognizer(tiny_v21, device="cpu", precision="fast"))


def test_fp16_transform_used_on_cuda_is_faithful(tiny_v21, exact):
    """The CUDA fast path's casting, checked on CPU (fp16 kernels exist there too)."""
    rec = load_recognizer(tiny_v21, device="cpu", precision="exact")
    rec.model, rec.recipes = fast.make_fast(rec.model, torch.device("cuda"))
    assert rec.recipes == fast.uniform("float16") and rec.compute_dtype == "float16"
    assert rec.model.dtype == torch.float16 and rec.model.freqs.dtype == torch.float32
    assert_faithful(exact, rec, steps=8)


def test_fused_projections_preserve_the_logits(tiny_v21, exact):
    rec = load_recognizer(tiny_v21, device="cpu", precision="exact")
    fast.fuse_projections(rec.model)
    attn = rec.model.decoder.layers[0].attn
    assert attn.wqkv is not None and not hasattr(attn, "w_q")
    assert attn.qk_gain.shape == (10, 1, 64)  # q and k heads normed and rotated together
    assert torch.equal(attn.qk_gain[0, 0], attn.q_norm.weight)
    assert torch.equal(attn.qk_gain[-1, 0], attn.k_norm.weight)
    ids = torch.tensor([[exact.tokenizer.bos_id, 5, 9, 14]] * 2)
    assert torch.allclose(
        rec.logits(sample_images(), ids), exact.logits(sample_images(), ids), atol=1e-5
    )


def test_q_and_k_normed_together_keep_their_own_gains(tiny_v21):
    """The random checkpoints' norm gains are all 1: with distinct q and k gains, the fused form (one
    norm and one rotation for the q and k heads) still gives the unfused model's logits."""
    models = [load_recognizer(tiny_v21, device="cpu", precision="exact") for _ in range(2)]
    gen = torch.Generator().manual_seed(3)
    for attn_a, attn_b in zip(*(r.model.decoder.layers for r in models)):
        for name in ("q_norm", "k_norm"):
            gain = 1 + 0.5 * torch.randn(64, generator=gen)
            getattr(attn_a.attn, name).weight.copy_(gain)
            getattr(attn_b.attn, name).weight.copy_(gain)
    fast.fuse_projections(models[1].model)
    ids = torch.tensor([[models[0].tokenizer.bos_id, 5, 9, 14]] * 2)
    a, b = (r.logits(sample_images(), ids) for r in models)
    assert torch.allclose(a, b, atol=1e-5) and not torch.allclose(
        a, load_recognizer(tiny_v21, device="cpu", precision="exact").logits(sample_images(), ids)
    )


def test_avx2_path_packs_ffn_int8_and_the_other_large_linears_fp16(tiny_v21):
    rec = load_recognizer(tiny_v21, device="cpu", precision="exact")
    fast.pack_linears_(rec.model)
    fast.fuse_projections(
        rec.model
    )  # nothing left to fuse: packing fused q/k/v and gate/up already
    layer = rec.model.decoder.layers[0]

    def packed_dtype(module):
        assert isinstance(module, nnqd.Linear), type(module)
        return module._packed_params.dtype

    assert packed_dtype(layer.ffn.w_gate_up) == packed_dtype(layer.ffn.w_down) == torch.qint8
    assert not hasattr(layer.ffn, "w_gate") and not hasattr(layer.attn, "w_q")
    assert packed_dtype(layer.attn.wqkv) == packed_dtype(layer.attn.w_o) == torch.float16
    assert packed_dtype(rec.model.decoder.output_head) == torch.float16
    tower = rec.model.vision_encoder.encoder.layers[0]
    assert packed_dtype(tower.self_attn.q_proj) == packed_dtype(tower.mlp.fc2) == torch.float16
    # what stays float32: embeddings, norms, the projector
    assert rec.model.decoder.token_embeddings.weight.dtype == torch.float32
    assert layer.attn.q_norm.weight.dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in rec.model.decoder.projector.parameters())
    # the keys left unloaded for packing are the weights of the linears above, nothing else
    keys = load_recognizer(tiny_v21, device="cpu", precision="exact").model.state_dict()
    packed = {k for k in keys if fast.file_key_filter(AVX2)(k)}
    assert (
        "decoder.layers.0.ffn.w_up.weight" in packed
        and "decoder.layers.0.attn.w_o.weight" in packed
    )
    assert "vision_encoder.encoder.layers.0.mlp.fc1.weight" in packed and fast.HEAD_WEIGHT in packed
    assert not {k for k in packed if "norm" in k or "bias" in k or "embed" in k}


@pytest.mark.parametrize(
    "dtype, qconfig_name",
    [(torch.qint8, "per_channel_dynamic_qconfig"), (torch.float16, "float16_dynamic_qconfig")],
)
def test_packing_makes_what_quantize_dynamic_makes(dtype, qconfig_name):
    import warnings

    import torch.ao.quantization as tq

    weight, bias, x = torch.randn(48, 32), torch.randn(48), torch.randn(5, 32)
    reference = torch.nn.ModuleDict({"l": torch.nn.Linear(32, 48)})
    reference["l"].weight.data, reference["l"].bias.data = weight.clone(), bias.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tq.quantize_dynamic(reference, {torch.nn.Linear: getattr(tq, qconfig_name)}, inplace=True)
    ours = packed_linear.pack(weight, dtype, bias)
    assert (ours.in_features, ours.out_features) == (32, 48)
    theirs = reference["l"]
    if dtype == torch.qint8:  # the same packed weights; the activations are quantised per row here
        assert torch.equal(ours.weight().int_repr(), theirs.weight().int_repr())
        assert torch.equal(
            ours.weight().q_per_channel_scales(), theirs.weight().q_per_channel_scales()
        )
        cosine = torch.nn.functional.cosine_similarity(ours(x), x @ weight.T + bias)
        assert float(cosine.min()) > 0.999
    else:
        assert torch.equal(ours(x), theirs(x))


def test_a_packed_linear_is_found_by_its_number_while_it_lives():
    """How compiled graphs call the packed linears (model/packed_linear.py): the op finds the module by number,
    and that table never keeps a model's weights alive after the model is dropped (the app reloads)."""
    gc.collect()  # earlier tests' dropped layers free their numbers now, not in the middle of this one
    layer, x = packed_linear.pack(torch.randn(48, 32), torch.qint8), torch.randn(5, 32)
    assert torch.equal(torch.ops.hayai.packed_linear(x, layer.number), layer(x))
    other = packed_linear.pack(torch.randn(16, 32), torch.float16)
    assert other.number != layer.number
    number = layer.number
    del layer
    gc.collect()
    assert number not in packed_linear._PACKED and other.number in packed_linear._PACKED
    # the lowest free number
    assert packed_linear.pack(torch.randn(8, 32), torch.qint8).number == number


def test_a_model_packed_again_gets_the_same_numbers(tiny_v21):
    """The numbers are in the compiled graph, so they decide whether torch.compile's cache finds it at
    the next start: fixed by the packing order, not by which pool thread finished first."""

    def numbers():
        model = load_recognizer(tiny_v21, device="cpu", precision="exact").model
        fast.pack_linears_(model)
        return [m.number for m in model.modules() if isinstance(m, packed_linear.PackedLinear)]

    first = numbers()  # the model is dropped on return
    gc.collect()
    assert numbers() == first and len(set(first)) == len(first)


def test_packed_weights_read_from_the_file_equal_those_from_memory(tiny_v21, monkeypatch):
    """Loading with the packed weights left unloaded and read one by one from the file gives the same
    model as packing the loaded weights (the file route only saves memory)."""
    from model.weights import Checkpoint, load_model

    monkeypatch.setattr(fast, "cpu_recipes", lambda: AVX2)
    from_file = load_recognizer(tiny_v21, device="cpu", precision="fast")
    assert from_file.recipes == AVX2
    in_memory, _ = load_model(tiny_v21)
    fast.make_fast(in_memory, torch.device("cpu"), recipes=AVX2)
    ckpt = Checkpoint(tiny_v21)
    assert torch.equal(
        ckpt.read("decoder.layers.1.ffn.w_up.weight"),
        ckpt.tensor("decoder.layers.1.ffn.w_up.weight"),
    )
    ids = torch.tensor([[from_file.tokenizer.bos_id, 5, 9, 14]] * 2)
    from_memory = load_recognizer(tiny_v21, device="cpu", precision="exact")
    in_memory.packed = from_file.model.packed  # the CPU's packed rows, as load_recognizer sets
    from_memory.model = in_memory
    assert torch.equal(
        from_file.logits(sample_images(), ids), from_memory.logits(sample_images(), ids)
    )


@pytest.mark.parametrize(
    "flags, expected",
    [
        ({"avx2", "avx512f", "avx512_bf16"}, True),
        ({"avx2", "amx_bf16", "amx_tile"}, True),
        ({"avx2", "fma"}, False),
    ],
)
def test_native_bf16_is_detected_from_the_cpu_flags(flags, expected):
    assert fast.cpu_has_native_bf16(frozenset(flags)) is expected


@pytest.mark.parametrize(
    "flags, int8, expected",
    [
        ({"avx2", "fma", "avx512f", "avx512_bf16"}, True, NATIVE_BF16),
        ({"avx2", "fma", "amx_bf16", "amx_tile"}, True, NATIVE_BF16),
        ({"avx2", "fma"}, True, AVX2),
        ({"avx512f", "avx512_bf16"}, False, BF16_ONLY),
        ({"avx2", "fma"}, False, None),
    ],
)
def test_each_stage_gets_its_recipe_from_the_cpu_flags(flags, int8, expected, monkeypatch):
    monkeypatch.setattr(fast, "int8_kernels_available", lambda: int8)
    assert fast.cpu_recipes(frozenset(flags)) == expected


@pytest.mark.parametrize(
    "recipes", [NATIVE_BF16, AVX2, BF16_ONLY], ids=["bf16", "avx2", "bf16-only"]
)
def test_each_cpu_recipe_is_faithful_and_runs_what_it_names(recipes, tiny_v21, exact, monkeypatch):
    """Each machine's recipe, forced here, loaded from the file as `auto` loads it on that machine."""
    monkeypatch.setattr(fast, "cpu_recipes", lambda: recipes)
    rec = load_recognizer(tiny_v21, device="cpu", precision="auto")
    assert rec.precision == "fast" and rec.recipes == recipes
    model = rec.model
    tower = model.vision_encoder.encoder.layers[0]
    layer = model.decoder.layers[0]
    if recipes["vision"] == "bfloat16":
        assert all(p.dtype == torch.bfloat16 for p in model.vision_encoder.parameters())
        assert isinstance(tower.mlp.fc1, packed_linear.Bf16Linear)
        # the MLP's GELU in fc1's GEMM, the form transformers names (tanh and erf differ by less
        # than a bf16 step, so no output tells them apart)
        assert tower.mlp.fc1.gelu == fast.TOWER_GELUS[tower.mlp.config.hidden_act] == "tanh"
        assert isinstance(tower.mlp.activation_fn, torch.nn.Identity)
        assert isinstance(model.vision_encoder.embeddings.patch_embedding, packed_linear.Bf16Linear)
    else:
        assert isinstance(tower.mlp.fc1, nnqd.Linear) and tower.mlp.fc1._packed_params.dtype == (
            torch.float16
        )
    if recipes["decode"] == "int8+fp16-packed":
        assert layer.ffn.w_gate_up._packed_params.dtype == torch.qint8
        assert model.dtype == torch.float32  # activations, and so the KV cache
    else:
        assert layer.ffn.w_gate_up.weight.dtype == model.dtype == torch.bfloat16
    assert model.freqs.dtype == torch.float32
    assert_faithful(exact, rec)


def test_the_bf16_cpu_recipe_is_faithful_for_nova(tiny_nova, monkeypatch):
    """nova's DSC projector reads the bf16 tower's output into the float32 packed decoder."""
    exact = load_recognizer(tiny_nova, device="cpu", precision="exact")
    monkeypatch.setattr(fast, "cpu_recipes", lambda: NATIVE_BF16)
    rec = load_recognizer(tiny_nova, device="cpu", precision="auto")
    assert rec.recipes == NATIVE_BF16
    assert_faithful(exact, rec)


def test_a_bf16_tower_read_from_the_file_equals_the_converted_loaded_one(tiny_v21, monkeypatch):
    """The bf16 tower's linears read one by one from the file (to keep the memory map's pages out of
    the process) are the weights a plain load converts."""
    from model.weights import load_model

    monkeypatch.setattr(fast, "cpu_recipes", lambda: NATIVE_BF16)
    from_file = load_recognizer(tiny_v21, device="cpu", precision="fast").model
    in_memory, _ = load_model(tiny_v21)
    fast.make_fast(in_memory, torch.device("cpu"), recipes=NATIVE_BF16)
    a, b = from_file.vision_encoder.state_dict(), in_memory.vision_encoder.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    # the prepacked linears are opaque: compared by what they compute
    linears = [
        (name, module, dict(in_memory.vision_encoder.named_modules())[name])
        for name, module in from_file.vision_encoder.named_modules()
        if isinstance(module, packed_linear.Bf16Linear)
    ]
    assert len(linears) == 1 + 6 * len(from_file.vision_encoder.encoder.layers)
    for name, one, other in linears:
        x = torch.randn(5, one.in_features).to(torch.bfloat16)
        assert torch.equal(one(x), other(x)), name
    skip = fast.file_key_filter(NATIVE_BF16)
    assert skip("vision_encoder.encoder.layers.0.mlp.fc1.weight")
    assert not skip("vision_encoder.encoder.layers.0.mlp.fc1.bias")
    assert skip("decoder.layers.0.ffn.w_up.weight") and skip(fast.HEAD_WEIGHT)
    assert fast.file_key_filter(BF16_ONLY) is not None  # the tower's linears still
    assert fast.file_key_filter(dict.fromkeys(fast.STAGES, "float32")) is None


def test_a_prepacked_bf16_linear_computes_what_the_plain_bf16_linear_does():
    """`Bf16Linear` (the weight reordered once for oneDNN) gives F.linear's bits on the bf16 weight,
    for rows and for batches of rows."""
    generator = torch.Generator().manual_seed(6)
    plain = torch.nn.Linear(96, 200).to(torch.bfloat16)
    prepacked = packed_linear.Bf16Linear(plain)
    for shape in [(1, 96), (37, 96), (3, 50, 96)]:
        x = torch.randn(*shape, generator=generator).to(torch.bfloat16)
        with torch.inference_mode():
            assert torch.equal(prepacked(x), plain(x)), shape
    # GELU fused into the GEMM (on the float32 sums): as close to float32's as a bf16 GELU after it
    fused = packed_linear.Bf16Linear(plain, gelu="tanh")
    x = torch.randn(40, 96, generator=generator).to(torch.bfloat16)
    exact = torch.nn.functional.gelu(
        x.float() @ plain.weight.float().T + plain.bias.float(), approximate="tanh"
    )
    with torch.inference_mode():
        after = torch.nn.functional.gelu(plain(x), approximate="tanh")
        error, error_after = ((y.float() - exact).abs().max() for y in (fused(x), after))
    assert error <= error_after + 1e-3


def test_prefill_and_decode_cannot_be_given_different_weights(tiny_v21):
    model = load_recognizer(tiny_v21, device="cpu", precision="exact").model
    with pytest.raises(ValueError, match="share"):
        fast.make_fast(model, torch.device("cpu"), recipes={**AVX2, "prefill": "bfloat16"})


def test_auto_precision_resolution(monkeypatch):
    assert resolve_precision("exact", torch.device("cuda")) == "exact"
    assert resolve_precision("auto", torch.device("cuda")) == "fast"
    monkeypatch.setattr(fast, "cpu_recipes", lambda: None)
    assert resolve_precision("auto", torch.device("cpu")) == "exact"
    monkeypatch.setattr(fast, "cpu_recipes", lambda: AVX2)
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
