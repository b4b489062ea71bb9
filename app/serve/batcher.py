"""Concurrent requests → one model thread that decodes them together.

The event loop (or any thread) calls `submit()`, which queues a crop and returns a
`concurrent.futures.Future` at once. ONE worker thread owns the recognizer.

With `continuous` (greedy decoding of a real recognizer, what `hayai serve` runs) it decodes
continuously (model/continuous.py). Each turn of the model thread prefills waiting crops, if any,
then runs one decode step for every crop being decoded: a crop that arrives while others are being
decoded is prefilled before the next step and gets its first token then, each crop streams its text
as it is decoded (`on_text`), and a finished crop's future is answered the step it ends. Two bounds,
because the two halves cost differently: at most `max_rows` crops are decoded together (a decode
step costs little more for more rows, so this is high and a new crop rarely waits for a row), and
at most `max_batch` are prefilled together (a prefill runs the vision tower; `--max-batch auto`
measures the best size). With `prefill_per_step` (the CPU, where a prefill of n crops costs about
n prefills of one) the prefills are paced to the decode steps (`_prefill_count`): one crop every
other step over a few rows, a few crops together over many.

Otherwise (beam search, or `--batching fixed` to compare) it reads whole batches: the oldest waiting
crop, with the crops that arrive within `max_wait_ms` of it (stopping early once `max_batch` wait),
in one `Recognizer.read` call, and crops whose `max_new_tokens` differ never share such a batch.
Either way a crop is read exactly as it would be alone (tests/model/test_continuous.py,
test_batch_invariance.py). When nothing is being decoded, the first crop also waits up to
`max_wait_ms` for company, so a burst is prefilled together (not when prefills are paced: then
the first crop is prefilled alone at once).

A full queue raises `QueueFull` instead of queuing (the API answers 503; what the waiting crops hold
in memory is bounded by the API's reservations, app/serve/memory.py). A future cancelled before its
crop is read (the client went away) is skipped; one cancelled while its crop is being decoded
leaves the decode at the next step. A crop is let go as soon as it has been prefilled (or read).

The loop is supervised: an exception in a turn of it is logged with its traceback and fails the
crops that turn held (those it took, and every crop being decoded: the decoder starts afresh), as
an error their requests answer with (500); the loop goes on. Should the loop still end (an
exception in that handling), that is logged, the crops waiting fail, and later ones are refused
(`ModelStopped`). `problem()` says, for `/health`, when the model thread has stopped or has not
finished a turn for STALL_S while crops wait.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, wait
from dataclasses import dataclass, field

from app.serve.model_thread import ModelThread
from model.continuous import ContinuousDecoder

log = logging.getLogger(__name__)

# A turn of the model thread (a prefill of up to max_batch crops and a decode step, or one fixed
# batch) takes well under this on a working server; with crops waiting and no turn finished for this
# long, the thread is stuck (`problem()`, /health 503). The app's server engine (TIMEOUT_S) has
# given up on its request by then.
STALL_S = 120.0


class QueueFull(RuntimeError):
    """More crops are waiting than the queue holds."""


class BatcherClosed(RuntimeError):
    """The server is shutting down."""

    code = "shutting_down"


class ModelStopped(BatcherClosed):
    """The model thread's loop has ended by an exception it could not contain."""

    code = "model_unavailable"


class Reading(Future):
    """A crop's future. `cancel()` also stops a crop that is being decoded: it leaves at the next step."""

    abandoned = False

    def cancel(self) -> bool:
        self.abandoned = True
        return super().cancel()


@dataclass
class _Job:
    image: object
    max_new_tokens: int
    queued_at: float
    on_text: Callable[[str], None] | None = None  # the text as it is decoded (model thread)
    future: Reading = field(default_factory=Reading)


@dataclass
class Schedule:
    """How the batcher groups crops: `hayai serve`'s batching options (docs/server.md, "Batching")."""

    max_batch: int = 32  # the most crops read (fixed) or prefilled (continuous) together
    max_rows: int = 64  # continuous: the most crops being decoded together
    max_wait_ms: float = 10.0  # how long a first crop waits for company
    max_queue: int = 256  # the most crops waiting; more are refused (QueueFull)
    num_beams: int = 1
    continuous: bool = False
    # continuous: prefills paced to the decode steps (`_prefill_count`)
    prefill_per_step: float | None = None

    def __post_init__(self):
        if min(self.max_batch, self.max_rows, self.max_queue) < 1 or self.max_wait_ms < 0:
            raise ValueError(
                "max_batch, max_rows and max_queue must be at least 1, max_wait_ms at least 0"
            )
        if self.continuous and self.num_beams != 1:
            raise ValueError("continuous batching decodes greedily (num_beams 1)")
        if not self.continuous:
            self.prefill_per_step = None  # fixed batches are not paced


class Batcher:
    def __init__(
        self, recognizer, schedule: Schedule | None = None, thread: ModelThread | None = None
    ):
        self.recognizer = recognizer
        self.schedule = schedule or Schedule()
        self._step_s = 0.0  # how long the last decode step took
        self._crop_s = 0.0  # a crop's share of a prefill, averaged over the last few
        self._prefilled = False  # whether the model thread's last turn prefilled a crop
        self._decoder: ContinuousDecoder | None = None  # made by the model thread
        self._cond = threading.Condition()
        self._queue: deque[_Job] = deque()
        self._closed = False
        self._in_flight = 0
        self._beat = time.monotonic()  # when the model thread last took crops or ended a turn
        self._taken: list[_Job] = []  # the crops the model thread's turn has taken
        self._stopped: str | None = None  # why the loop ended by an exception (ModelStopped)
        # requests, served, failed, rejected, cancelled; joined_running: crops that joined others
        # already being decoded; steps, step_rows: decode steps and the rows they decoded;
        # largest_step: the most rows one step decoded
        self._counts: Counter[str] = Counter()
        self._sizes: Counter[int] = Counter()  # crops read (or prefilled) together → how often
        # the thread the model was loaded on (see app/serve/model_thread.py), or one of its own
        self._thread, self._own_thread = thread, thread is None
        self._running: Future | None = None

    def start(self) -> Batcher:
        if self._thread is None:
            self._thread = ModelThread()
        self._running = self._thread.submit(self._run)
        self._running.add_done_callback(self._ended)
        return self

    def submit(self, image, max_new_tokens: int, on_text=None) -> Reading:
        """Queue one crop; its future gets the engine's Result (or its exception). on_text(piece):
        called from the model thread with each new piece of text as it is decoded (continuous only)."""
        return self.submit_many([image], max_new_tokens, on_text)[0]

    def submit_many(self, images: list, max_new_tokens: int, on_text=None) -> list[Reading]:
        """Queue several crops at once, or none of them when they do not all fit (QueueFull)."""
        now = time.monotonic()
        jobs = [_Job(image, max_new_tokens, now, on_text) for image in images]
        with self._cond:
            if self._stopped:
                raise ModelStopped(self._stopped)
            if self._closed:
                raise BatcherClosed("the server is shutting down")
            if len(self._queue) + len(jobs) > self.schedule.max_queue:
                self._counts["rejected"] += len(jobs)
                raise QueueFull(
                    f"{len(self._queue)} crops are waiting (the queue holds {self.schedule.max_queue})"
                )
            self._queue.extend(jobs)
            self._counts["requests"] += len(jobs)
            self._cond.notify_all()
        return [job.future for job in jobs]

    def stats(self) -> dict:
        with self._cond:
            counts = ("requests", "served", "failed", "rejected", "cancelled")
            steps: tuple[str, ...] = ()
            if self.schedule.continuous:
                steps = ("joined_running", "steps", "step_rows", "largest_step")
            return {
                **{k: self._counts[k] for k in counts},
                "waiting": len(self._queue),
                "queue_limit": self.schedule.max_queue,
                "in_flight": self._in_flight,
                "batches": sum(self._sizes.values()),
                "largest_batch": max(self._sizes, default=0),
                "batch_sizes": {str(k): v for k, v in sorted(self._sizes.items())},
                **{k: self._counts[k] for k in steps},
            }

    def problem(self) -> str | None:
        """Why the model thread is not reading, in words, or None: its loop has stopped, or crops
        have waited STALL_S (beyond max_wait_ms) without it taking them or finishing a turn."""
        with self._cond:
            if self._stopped:
                return self._stopped
            if self._in_flight:
                since = self._beat
            elif self._queue:  # taken within max_wait_ms of the first one's arrival
                since = max(self._beat, self._queue[0].queued_at + self.schedule.max_wait_ms / 1000)
            else:
                return None
            stalled = time.monotonic() - since
            if stalled <= STALL_S:
                return None
            return (
                f"the model thread has not finished a turn for {stalled:.0f} s, with crops "
                f"waiting (being read: {self._in_flight}, queued: {len(self._queue)})"
            )

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop taking crops, fail those still waiting, and let the crops being read finish."""
        with self._cond:
            self._closed = True
            waiting, self._queue = list(self._queue), deque()
            self._cond.notify_all()
        for job in waiting:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(BatcherClosed("the server is shutting down"))
        if self._running is not None:
            wait([self._running], timeout_s)
        if self._own_thread and self._thread is not None:
            self._thread.stop()

    # --- the model thread ------------------------------------------------------------------------

    def _run(self) -> None:
        if self.schedule.continuous:
            self._decoder = ContinuousDecoder(self.recognizer)
        while True:
            try:
                if not self._turn():
                    return
            except Exception as exc:  # whatever it was, the server goes on (the module's docstring)
                self._contain(exc)
            with self._cond:
                self._in_flight = self._decoder.active if self._decoder else 0
                self._beat = time.monotonic()

    def _turn(self) -> bool:
        """Start the crops that may start now, then one decode step; False once closed."""
        decoding = self._decoder.active if self._decoder else 0
        jobs = self._take(decoding, self._prefill_count(decoding))
        if jobs is None:
            return False
        self._taken = jobs = [j for j in jobs if j.future.set_running_or_notify_cancel()]
        self._prefilled = bool(jobs)
        if jobs and self._decoder:
            self._join(jobs)
        elif jobs:
            self._read(jobs)
        if self._decoder and self._decoder.active:
            self._step(self._decoder)
        self._taken = []
        return True

    def _contain(self, exc: Exception) -> None:
        """A turn raised: the crops it held fail (those it took, and every row being decoded, as the
        decoder may be half-way through changing its rows: it starts afresh)."""
        held = {id(job): job for job in self._taken}
        if self._decoder is not None:
            held.update((id(row.key), row.key) for row in self._decoder.rows)
            self._decoder = ContinuousDecoder(self.recognizer)
        self._taken = []
        self._fail(list(held.values()), exc, "a turn of the model thread")

    def _ended(self, running: Future) -> None:
        """The loop has ended: by close(), or by an exception `_run` could not contain. Then that
        is logged, the crops waiting or being decoded fail, and later crops are refused."""
        exc = None if running.cancelled() else running.exception()
        if exc is None:
            return
        log.critical("the model thread's loop stopped: restart hayai serve", exc_info=exc)
        with self._cond:
            self._stopped = (
                f"the model thread has stopped ({type(exc).__name__}: {exc}); restart hayai serve"
            )
            waiting, self._queue = list(self._queue), deque()
        rows = self._decoder.rows if self._decoder else []
        held = [*self._taken, *(row.key for row in rows)]
        for job in waiting:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(ModelStopped(self._stopped))
        for job in held:  # running: only this thread sets their result
            if not job.future.done():
                job.future.set_exception(ModelStopped(self._stopped))

    def _take(self, decoding: int, most: int) -> list[_Job] | None:
        """The crops to start now (at most `most`); None once closed with nothing left to decode.
        While crops are being decoded, those waiting are taken at once (none waits for company),
        as long as fewer than max_rows crops are being decoded."""
        with self._cond:
            if decoding:
                room = 0 if self._closed else min(most, self.schedule.max_rows - decoding)
                taken = [self._queue.popleft() for _ in range(min(room, len(self._queue)))]
                self._in_flight = decoding + len(taken)
                self._beat = time.monotonic()
                return taken
            while not self._queue and not self._closed:
                self._cond.wait()
            if self._closed:
                return None
            first = self._queue[0]

            def fits(job: _Job) -> bool:  # a whole batch is read with one token limit
                return self.schedule.continuous or job.max_new_tokens == first.max_new_tokens

            most = min(most, self.schedule.max_rows) if self.schedule.continuous else most
            deadline = first.queued_at + self.schedule.max_wait_ms / 1000
            while not self._closed:
                company = sum(1 for j in self._queue if fits(j))
                remaining = deadline - time.monotonic()
                if company >= most or remaining <= 0:
                    break
                self._cond.wait(remaining)
            batch: list[_Job] = []
            rest: deque[_Job] = deque()
            for job in self._queue:
                if len(batch) < most and fits(job):
                    batch.append(job)
                else:
                    rest.append(job)
            self._queue = rest
            self._in_flight = len(batch)
            self._beat = time.monotonic()
            return batch

    def _prefill_count(self, decoding: int) -> int:
        """The most crops to prefill now, before the next decode step. Without a pace, max_batch.
        With `prefill_per_step` (the CPU): as many as take about that many times as long as the
        last decode step (by the crops' measured prefill time), at most max_batch and at least one,
        or none right after a turn that prefilled when one is all that fits; one when nothing is
        being decoded (the first crop's first token comes soonest).
        Over a few rows that is one crop, and at most every other step: the rows go on between
        two prefills, no crop's first token waits for others prefilled with it, and the rows
        prefilled end at least two steps apart, so their clients' next requests come in during a
        step rather than during another crop's prefill (prefilled on consecutive steps, the rows
        of a burst end on consecutive steps, and each next request waits for the one before it,
        burst after burst). Over many rows (a long step) a few crops together, so the step is
        paid once for them."""
        if self.schedule.prefill_per_step is None:
            return self.schedule.max_batch
        if not decoding or not self._crop_s:
            return 1
        fits = int(self.schedule.prefill_per_step * self._step_s / self._crop_s)
        if fits <= 1 and self._prefilled:
            return 0
        return max(1, min(self.schedule.max_batch, fits))

    def _fail(self, jobs: list[_Job], exc: Exception, what: str) -> None:
        """`jobs` fail with `exc` (their requests answer 500), logged with its traceback."""
        jobs = [job for job in jobs if not job.future.done()]
        log.error("%s failed; its %d crops fail, the server goes on", what, len(jobs), exc_info=exc)
        with self._cond:
            self._counts["failed"] += len(jobs)
        exc.with_traceback(None)  # its frames would keep the crops alive
        for job in jobs:
            job.future.set_exception(exc)

    def _read(self, jobs: list[_Job]) -> None:
        images = [j.image for j in jobs]
        for job in jobs:  # the crops are let go once read, not when the next batch comes
            job.image = None
        with self._cond:
            self._sizes[len(jobs)] += 1
        try:
            results = self.recognizer.read(
                images, max_new_tokens=jobs[0].max_new_tokens, num_beams=self.schedule.num_beams
            )
        except Exception as exc:  # out of memory and the like: this batch fails, the server goes on
            del images
            self._fail(jobs, exc, "a batch")
            return
        del images
        with self._cond:
            self._counts["served"] += len(jobs)
        log.debug("read a batch of %d", len(jobs))
        for job, result in zip(jobs, results):
            job.future.set_result(result)

    def _join(self, jobs: list[_Job]) -> None:
        """Prefill `jobs` together and add them to the running decode; each gets its first token."""
        if not jobs:
            return
        decoder = self._decoder
        assert decoder is not None  # continuous batching only
        decoding = decoder.active
        images = [j.image for j in jobs]
        for job in jobs:
            job.image = None
        with self._cond:
            self._sizes[len(jobs)] += 1
            if decoding:
                self._counts["joined_running"] += len(jobs)
        started = time.perf_counter()
        try:
            rows = decoder.join(images, [j.max_new_tokens for j in jobs], jobs)
        except Exception as exc:  # these crops fail; the rows being decoded go on
            del images
            self._fail(jobs, exc, "a prefill")
            return
        del images
        crop_s = (time.perf_counter() - started) / len(jobs)
        self._crop_s = crop_s if not self._crop_s else (self._crop_s + crop_s) / 2
        log.debug("%d joined %d being decoded", len(jobs), decoding)
        self._deliver(rows)

    def _step(self, decoder: ContinuousDecoder) -> None:
        """One token for every row being decoded; the abandoned leave first."""
        for row in [r for r in decoder.rows if r.key.future.abandoned]:
            decoder.leave(row)
            with self._cond:
                self._counts["cancelled"] += 1
            row.key.future.set_exception(CancelledError())
        if not decoder.active:
            return
        started = time.perf_counter()
        rows = decoder.step()  # out of memory and the like: `_contain` fails the rows
        self._step_s = time.perf_counter() - started
        with self._cond:
            self._counts["steps"] += 1
            self._counts["step_rows"] += len(rows)
            self._counts["largest_step"] = max(self._counts["largest_step"], len(rows))
        self._deliver(rows)

    def _deliver(self, rows) -> None:
        """Each row's new text to its stream; the results of the rows that are done."""
        for row in rows:
            job = row.key
            piece = row.new_text()
            if piece and job.on_text is not None:
                try:
                    job.on_text(piece)
                except Exception as exc:  # e.g. the event loop has closed: that stream only
                    log.warning(
                        "a stream's piece was not delivered: %s: %s", type(exc).__name__, exc
                    )
                    job.future.abandoned = True
            if row.done:
                with self._cond:
                    self._counts["served"] += 1
                job.future.set_result(row.result())
