"""The CUDA path on a real GPU (skipped without one; `tests/gpu_check.sh` runs these on the lent H200)."""

import json

import numpy as np
import pytest
import torch
from PIL import Image
from tests_support import assert_faithful, sample_images

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_exact_on_cuda_reproduces_the_golden_vectors(golden_dir, golden_checkpoint):
    from model import load_recognizer

    spec = json.loads((golden_dir / "expected.json").read_text())
    arrays = np.load(golden_dir / "expected.npz")
    images = [Image.open(golden_dir / name) for name in spec["images"]]
    rec = load_recognizer(golden_checkpoint, device="cuda", precision="exact")
    logits = rec.logits(images, arrays["teacher_text_ids"]).numpy()
    assert np.abs(logits - arrays["teacher_logits"]).max() < 1e-4
    assert [r.token_ids for r in rec.read(images, max_new_tokens=24)] == spec["greedy_token_ids"]


def test_fp16_fast_path_is_faithful_on_cuda(tiny_v21):
    from model import load_recognizer

    exact = load_recognizer(tiny_v21, device="cuda", precision="exact")
    fast = load_recognizer(tiny_v21, device="cuda", precision="fast")
    assert fast.compute_dtype == "float16" and fast.graphs is not None
    assert_faithful(exact, fast)


@pytest.mark.parametrize("variant", ["v2.1", "nova"])
def test_graph_replay_decodes_what_eager_decodes(variant, tiny_v21, tiny_nova):
    from model import load_recognizer

    rec = load_recognizer(
        tiny_v21 if variant == "v2.1" else tiny_nova, device="cuda", precision="fast"
    )
    images = sample_images()
    graphs, rec.graphs = rec.graphs, None
    eager = [
        r.token_ids
        for r in rec.read(images, max_new_tokens=16, suppress_ids=rec.tokenizer.stop_ids)
    ]
    rec.graphs = graphs
    replayed = [
        r.token_ids
        for r in rec.read(images, max_new_tokens=16, suppress_ids=rec.tokenizer.stop_ids)
    ]
    again = [
        r.token_ids
        for r in rec.read(images, max_new_tokens=16, suppress_ids=rec.tokenizer.stop_ids)
    ]
    assert replayed == eager == again
    assert len(graphs.graphs) == 1 and not graphs.failed  # captured once, reused by the second call


def test_batch_equals_crops_one_by_one_on_cuda(tiny_nova):
    from model import load_recognizer

    rec = load_recognizer(tiny_nova, device="cuda", precision="exact")
    images = sample_images()
    batched = rec.read(images, max_new_tokens=10, suppress_ids=rec.tokenizer.stop_ids)
    for image, b in zip(images, batched):
        assert (
            rec.read([image], max_new_tokens=10, suppress_ids=rec.tokenizer.stop_ids)[0].token_ids
            == b.token_ids
        )


def test_the_graph_replays_the_compiled_step_with_the_eager_logits(tiny_v21):
    from model import generate, load_recognizer

    rec = load_recognizer(tiny_v21, device="cuda", precision="fast", compile=True)
    image = sample_images()[:1]
    with torch.inference_mode():
        vision = rec._encode(image)
        bos = torch.full((1, 1), rec.tokenizer.bos_id, device="cuda")
        state = generate.DecodeState(rec.model, vision, bos, extra_slots=16, step=rec.step_function)
        replay = rec.graphs.step_function(
            state
        )  # compiles in the warm-up, then captures the compiled step
        assert replay is not None and not rec.graphs.failed
        eager = generate.DecodeState(
            rec.model, vision, bos, extra_slots=16
        )  # same cache, re-prefilled
        for token in (5, 9, 14):
            t = torch.tensor([token], device="cuda")
            got, expected = replay(t), eager.step(t)
            assert torch.nn.functional.cosine_similarity(got, expected, dim=-1).min() > 0.9999
    tokens = rec.read(image, max_new_tokens=16, suppress_ids=rec.tokenizer.stop_ids)[0].token_ids
    assert (
        len(tokens) == 16 and len(rec.graphs.graphs) == 1
    )  # the read reused the graph (same shapes)
    assert rec.compiled  # compiled for real (Triton), not the silent uncompiled fallback


@pytest.mark.parametrize("precision", ["exact", "fast"])
def test_batch_invariant_on_cuda(tiny_v21, precision):
    """#25 item 1 on CUDA: a crop's tokens alone equal its tokens in batches of 2-64 beside crops of
    other sizes, at every position (cuBLAS may choose kernels by the row count)."""
    from test_batch_invariance import crop

    from model import load_recognizer

    rec = load_recognizer(tiny_v21, device="cuda", precision=precision)
    options = dict(max_new_tokens=24, suppress_ids=rec.tokenizer.stop_ids)
    specs = [(i, 16 + 37 * i % 600, 16 + 53 * i % 300) for i in range(64)]
    alone = [rec.read([crop(*s)], **options)[0].token_ids for s in specs]
    for size in (2, 3, 8, 17, 64):
        batch = specs[:size][::-1]
        together = rec.read([crop(*s) for s in batch], **options)
        assert [r.token_ids for r in together] == alone[:size][::-1], size
