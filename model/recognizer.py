"""The engine's Python API: `load_recognizer(...)` → `Recognizer.read(images)`; many crops in
batches through `Recognizer.read_batches` (docs/architecture.md, "The engine").

A Recognizer loads once and is then used from one thread (the app's OCR worker, the CLI, tests).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from model import fast, generate
from model.config import DEFAULT_VARIANT, PRECISIONS, HayaiConfig
from model.device_choice import resolve_device, resolve_precision
from model.errors import ModelNotFoundError, WeightsError
from model.preprocess import normalized, preprocess
from model.tokenizer import HayaiTokenizer, strip_specials

if TYPE_CHECKING:
    from model.cuda_graph import DecodeGraphs

log = logging.getLogger(__name__)


@dataclass
class Result:
    text: str
    token_ids: list[int]  # generated ids without eos/pad
    timings: dict[str, float] = field(default_factory=dict)  # stage → ms, for the whole batch
    batch_size: int = 1
    vision_tokens: int = 0  # vision tokens the decoder attended to for this crop (its "prompt")

    @property
    def ms(self) -> float:
        """This crop's share of the model time (the batch's total divided by its size)."""
        return self.timings.get("total", 0.0) / self.batch_size


class Recognizer:
    # The app's engine interface (app/engines/base.py) asks this, not whether read_batches exists.
    reads_batches = True

    def __init__(
        self,
        model,
        tokenizer: HayaiTokenizer,
        config: HayaiConfig,
        device: torch.device,
        precision: str,
        model_dir: Path | None,
        recipes: dict[str, str] | None = None,
    ):
        self.model, self.tokenizer, self.config = model, tokenizer, config
        # The app's engine interface (app/engines/base.py) reads `device` as a string; tensors go to
        # `torch_device`.
        self.torch_device, self.device = device, str(device)
        self.precision, self.model_dir = precision, model_dir
        self.variant = config.variant
        # stage (vision, prefill, decode) → the recipe it runs (model/fast.py); float32 = exact
        self.recipes = recipes or fast.uniform(fast.FLOAT32)
        # CUDA-graph replays of the decode step (fast path on CUDA)
        self.graphs: DecodeGraphs | None = None
        self.step_function = generate.decode_step  # or its torch.compile'd twin (compile=True)
        # read_batches prepares the next batch while one is read where the model runs elsewhere. On the
        # CPU preparing is ~1% of a read and would take its cores from the model: no gain to be had.
        self.prepare_ahead = device.type != "cpu"
        if tokenizer.vocab_size != config.vocab_size:
            raise WeightsError(
                f"tokenizer.json has {tokenizer.vocab_size} ids but the weights {config.vocab_size}"
            )

    @property
    def compute_dtype(self) -> str:
        """The recipes in one short string: one name where every stage runs the same one."""
        return fast.describe(self.recipes)

    @property
    def compiled(self) -> bool:
        """The decode step runs compiled (asked for, and its compile has not failed)."""
        return getattr(self.step_function, "active", False)

    def __repr__(self) -> str:
        return f"Recognizer({self.variant}, {self.torch_device.type}, {self.precision})"

    def _sync(self) -> float:
        if self.torch_device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter()

    def _prepare(self, images, budgets=None):
        """The host's share of preprocessing (resize, patchify), safe on any thread: for an accelerator
        uint8 patches (4× fewer bytes to move), normalised there by `_on_device`. budgets: each
        image's own patch budget (at most the model's; None: the model's for all)."""
        return preprocess(
            images,
            self.config.patch_budget,
            self.config.patch_size,
            normalize=self.torch_device.type == "cpu",
            budgets=budgets,
        )

    def _timed_prepare(self, images, budgets=None):
        """(`_prepare(images, budgets)`, the milliseconds it took)."""
        started = time.perf_counter()
        return self._prepare(images, budgets), (time.perf_counter() - started) * 1e3

    def _on_device(self, batch):
        """Moves a prepared batch to the device and normalises it there with the same table (identical
        values). On the reading thread: a copy from another thread could land inside a CUDA-graph capture."""
        return batch if self.torch_device.type == "cpu" else normalized(batch.to(self.torch_device))

    def _encode(self, images):
        batch = self._on_device(self._prepare(images))
        return self.model.encode_images(
            batch.pixel_values, batch.pixel_attention_mask, batch.spatial_shapes, batch.budgets
        )

    def read(
        self,
        images,
        max_new_tokens: int = 128,
        num_beams: int = 1,
        repetition_penalty: float = 1.0,
        suppress_ids=(),
        stop_after: int | None = None,
        budgets=None,
        limits=None,
    ) -> list[Result]:
        """Images (PIL or arrays) → one Result per image, in order. suppress_ids: never generate these;
        stop_after: decode at most this many tokens within a cache sized for max_new_tokens;
        budgets: each image's own patch budget (a crop reads the same alone at its budget as in a
        batch of any budgets; None: the model's budget, `config.patch_budget`, for every image);
        limits: each image's own token limit (at most max_new_tokens; greedy only): an image reads
        what it reads alone with max_new_tokens = its limit."""
        _check_options(max_new_tokens, num_beams)
        images = list(images)
        if not images:
            return []
        prepared, prepare_ms = self._timed_prepare(images, budgets)
        return self._read_prepared(
            prepared,
            prepare_ms,
            max_new_tokens,
            num_beams,
            repetition_penalty,
            suppress_ids,
            stop_after,
            limits,
        )

    def read_batches(
        self,
        batches,
        max_new_tokens: int = 128,
        num_beams: int = 1,
        repetition_penalty: float = 1.0,
        suppress_ids=(),
        budgets=None,
        limits=None,
    ):
        """Batches of images → for each, in order, its list of Results or the exception it raised (the
        other batches still run). With `prepare_ahead` the next batch is prepared on a host thread while
        one is read: on a GPU the host's resizing of 64 crops takes about as long as the model.
        budgets, limits: beside the batches, each batch's list of patch budgets and of token
        limits (see `read`)."""
        _check_options(max_new_tokens, num_beams)  # here, not when the first batch is asked for
        return self._read_batches(
            iter(batches),
            max_new_tokens,
            num_beams,
            repetition_penalty,
            suppress_ids,
            None if budgets is None else iter(budgets),
            None if limits is None else iter(limits),
        )

    def _read_batches(
        self,
        batches,
        max_new_tokens,
        num_beams,
        repetition_penalty,
        suppress_ids,
        budgets=None,
        limits=None,
    ):
        # Batches are taken from the iterable one at a time (a caller may decode each when asked),
        # so at most the batch being read and, with prepare_ahead, the next one are in memory.
        with ThreadPoolExecutor(1, thread_name_prefix="hayai-prepare") as pool:

            def take():
                images = next(batches, None)
                if images is None:
                    return None
                images = list(images)
                own = None if budgets is None else next(budgets)
                limit = None if limits is None else next(limits)
                ahead = self.prepare_ahead and images
                job = pool.submit(self._timed_prepare, images, own) if ahead else None
                return images, own, limit, job

            upcoming = take()
            while upcoming is not None:
                images, own, limit, current = upcoming
                upcoming = take() if self.prepare_ahead else None
                if not images:
                    yield []
                else:
                    try:
                        prepared, prepare_ms = (
                            current.result() if current else self._timed_prepare(images, own)
                        )
                        yield self._read_prepared(
                            prepared,
                            prepare_ms,
                            max_new_tokens,
                            num_beams,
                            repetition_penalty,
                            suppress_ids,
                            limits=limit,
                        )
                    # an unreadable image, out of memory, ...: this batch only
                    except Exception as e:
                        yield e
                del images, current
                if not self.prepare_ahead:
                    upcoming = take()

    @torch.inference_mode()
    def _read_prepared(
        self,
        prepared,
        prepare_ms: float,
        max_new_tokens,
        num_beams,
        repetition_penalty,
        suppress_ids,
        stop_after=None,
        limits=None,
    ) -> list[Result]:
        tok = self.tokenizer
        n = len(prepared)
        if limits is not None and (len(limits) != n or num_beams != 1):
            raise ValueError("limits: one per image, with greedy decoding (num_beams 1)")
        t0 = time.perf_counter()
        batch = self._on_device(prepared)
        t1 = self._sync()
        vision = self.model.encode_images(
            batch.pixel_values, batch.pixel_attention_mask, batch.spatial_shapes, batch.budgets
        )
        t2 = self._sync()
        bos = torch.full((n, 1), tok.bos_id, device=self.torch_device)
        state = generate.DecodeState(
            self.model, vision, bos, extra_slots=max_new_tokens, step=self.step_function
        )
        first = self.model.logits(state.text_hidden[:, -1])
        t3 = self._sync()
        if num_beams == 1:
            step_function = self.graphs.step_function(state) if self.graphs else None
            steps = min(max_new_tokens, stop_after or max_new_tokens)
            ids = generate.greedy(
                state,
                first,
                steps,
                tok.bos_id,
                tok.stop_ids,
                repetition_penalty,
                suppress_ids,
                step_function=step_function,
                limits=None if limits is None else torch.tensor(limits, device=self.torch_device),
            ).tolist()
        else:
            ids = generate.beam_search(
                state,
                first,
                max_new_tokens,
                num_beams,
                tok.bos_id,
                tok.stop_ids,
                repetition_penalty,
                suppress_ids=suppress_ids,
            )
        t4 = self._sync()
        preprocess_ms = prepare_ms + (t1 - t0) * 1e3
        timings = {
            "preprocess": preprocess_ms,
            "vision": (t2 - t1) * 1e3,
            "prefill": (t3 - t2) * 1e3,
            "decode": (t4 - t3) * 1e3,
            "total": preprocess_ms + (t4 - t1) * 1e3,
        }
        seen = vision[2].sum(-1).tolist()  # each crop's valid vision tokens
        results = []
        for row, tokens in zip(ids, seen):
            kept = strip_specials(row, tok.stop_ids)
            results.append(Result(tok.decode(kept), kept, dict(timings), n, int(tokens)))
        return results

    @torch.inference_mode()
    def logits(self, images, token_ids) -> torch.Tensor:
        """Teacher-forced logits (b, n, vocab) float32 for token_ids (b, n) that start with <bos>."""
        ids = torch.as_tensor(token_ids, dtype=torch.long, device=self.torch_device)
        if ids.ndim != 2 or ids.shape[0] != len(images):
            raise ValueError("token_ids must be (number of images, n)")
        vision = self._encode(images)
        state = generate.DecodeState(self.model, vision, ids, extra_slots=0)
        return self.model.logits(state.text_hidden).cpu()

    def warmup(self, max_new_tokens: int = 128, steps: int = 4) -> None:
        """Pay the first-call costs (kernel selection, cache allocation, CUDA-graph capture) before the
        user's first capture: one short read with the cache the app's reads will have."""
        from PIL import Image

        white = Image.new("RGB", (96, 32), "white")
        self.read([white], max_new_tokens=max_new_tokens, stop_after=steps)


def _check_options(max_new_tokens: int, num_beams: int) -> None:
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be at least 1")
    if num_beams < 1:
        raise ValueError("num_beams must be at least 1")


def load_recognizer(
    model_dir=None,
    variant=None,
    device="auto",
    precision="auto",
    *,
    compile=False,
    random_weights=False,
    size="full",
) -> Recognizer:
    """Load a model folder (default: the downloaded `variant`, v2.1 when None) onto `device`.

    With `model_dir` the weights' keys decide the variant; a contradicting `variant` is an error.

    compile: run the decode step through torch.compile (compiled in `warmup()`; on CUDA the compiled
    step is what the graph captures). v2.1 only: its shapes are fixed for a given batch and cache size.
    Whether it pays: `hayai bench --compile` against without.
    random_weights: build the `size` model with random weights in memory instead (benchmarks, no files).
    """
    from model import weights

    if precision not in PRECISIONS:
        raise ValueError(
            f"unknown precision {precision!r}; expected one of {', '.join(PRECISIONS)}"
        )
    dev = resolve_device(device)
    resolved = resolve_precision(precision, dev)
    source = None  # the checkpoint the fast transforms read their weights from
    recipes = fast.cpu_recipes() if resolved == "fast" and dev.type == "cpu" else None
    if random_weights:
        from model.random_checkpoint import random_model, random_tokenizer

        model, config = random_model(size=size, variant=variant or DEFAULT_VARIANT)
        tokenizer, model_path = random_tokenizer(config.vocab_size), None
    else:
        if model_dir is None:
            from model.download import installed_dir, missing_message

            model_dir = installed_dir(variant or DEFAULT_VARIANT)
            if model_dir is None:
                raise ModelNotFoundError(missing_message(variant or DEFAULT_VARIANT))
            variant = None  # the download folder's own weights decide
        skip = fast.file_key_filter(recipes)
        model, ckpt = weights.load_model(model_dir, variant, skip=skip)
        config, model_path, source = ckpt.config, ckpt.dir, ckpt if skip else None
        tokenizer = HayaiTokenizer.from_dir(model_path)
    if resolved == "fast":
        model, recipes = fast.make_fast(model, dev, source, recipes)
    model = model.to(dev)
    # On the CPU every batch packs its crops' rows (docs/model.md, "Packed rows"): the work of the
    # tower and the prefill is then each crop's own, not the batch's largest crop times its size.
    # An accelerator keeps the padded batch, whose one large kernel per op is what it runs fast.
    model.packed = dev.type == "cpu"
    rec = Recognizer(model, tokenizer, config, dev, resolved, model_path, recipes)
    if compile and config.variant == "nova":
        log.warning(
            "compile: skipped for nova, whose number of vision tokens changes with the crop's shape "
            "(every new shape would compile again, tens of seconds each)"
        )
    elif compile:
        rec.step_function = generate.Compiled(generate.decode_step)
    if dev.type == "cuda" and resolved == "fast":
        from model.cuda_graph import DecodeGraphs

        rec.graphs = DecodeGraphs(model)
    return rec
