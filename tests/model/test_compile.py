"""`compile=True`: the decode step through torch.compile (inductor's C++ backend here, Triton on a GPU).

Compiling takes ~10 s on two cores, so these are the only tests that compile (one shape each)."""

import logging

import pytest
import torch
from tests_support import sample_images

from model import fast, generate
from model.recognizer import load_recognizer


@pytest.mark.slow
@pytest.mark.parametrize("packed", [False, True], ids=["float32", "fbgemm-int8-fp16"])
def test_the_compiled_step_gives_the_eager_logits_and_tokens(tiny_v21, packed):
    plain = load_recognizer(tiny_v21, device="cpu", precision="exact")
    compiled = load_recognizer(tiny_v21, device="cpu", precision="exact", compile=True)
    if packed:  # the AVX2 path's fbgemm linears, opaque ops inside the compiled graph
        if not fast.int8_kernels_available():
            pytest.skip("this torch has no fbgemm/x86 quantized engine")
        for rec in (plain, compiled):
            fast.pack_linears_(rec.model)
    assert compiled.compiled and compiled.step_function is not generate.decode_step
    image = sample_images()[:1]
    # the same prefill, then the same three tokens fed to each step (both states write the same values
    # into the model's one cache, so each reads what the other would have written)
    with torch.inference_mode():
        vision = plain._encode(image)
        bos = torch.full((1, 1), plain.tokenizer.bos_id)
        states = [
            generate.DecodeState(plain.model, vision, bos, extra_slots=8, step=fn)
            for fn in (generate.decode_step, compiled.step_function)
        ]
        for token in (5, 9, 14):
            eager, fused = (s.step(torch.tensor([token])) for s in states)
            assert torch.allclose(fused, eager, atol=1e-4), (fused - eager).abs().max()
    # whole reads: identical tokens (the read compiles for its own cache shape once)
    expected = [
        r.token_ids
        for r in plain.read(image, max_new_tokens=12, suppress_ids=plain.tokenizer.stop_ids)
    ]
    got = [
        r.token_ids
        for r in compiled.read(image, max_new_tokens=12, suppress_ids=plain.tokenizer.stop_ids)
    ]
    assert got == expected and compiled.compiled  # it really ran compiled: no silent fallback


def test_a_compile_failure_decodes_uncompiled_with_a_warning(tiny_v21, monkeypatch, caplog):
    def no_compiler(fn, **options):
        def compiled(*args):
            raise RuntimeError("InvalidCxxCompiler: No working C++ compiler found")

        return compiled

    monkeypatch.setattr(torch, "compile", no_compiler)
    plain = load_recognizer(tiny_v21, device="cpu", precision="exact")
    rec = load_recognizer(tiny_v21, device="cpu", precision="exact", compile=True)
    images = sample_images()
    with caplog.at_level(logging.WARNING, logger="model.generate"):
        got = [r.token_ids for r in rec.read(images, max_new_tokens=6)]
        again = [r.token_ids for r in rec.read(images, max_new_tokens=6)]
    assert got == again == [r.token_ids for r in plain.read(images, max_new_tokens=6)]
    assert not rec.compiled  # and says so (hayai bench reports it)
    assert caplog.text.count("torch.compile of decode_step failed") == 1  # tried once, then plain
    assert "No working C++ compiler" in caplog.text


def test_nova_is_not_compiled_and_says_why(tiny_nova, caplog):
    with caplog.at_level(logging.WARNING, logger="model.recognizer"):
        rec = load_recognizer(tiny_nova, device="cpu", precision="exact", compile=True)
    assert not rec.compiled and rec.step_function is generate.decode_step
    assert "skipped for nova" in caplog.text
