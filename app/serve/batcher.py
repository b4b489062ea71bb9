"""Concurrent requests → batches for one model thread.

The event loop (or any thread) calls `submit()`, which queues a crop and returns a
`concurrent.futures.Future` at once. ONE worker thread owns the recognizer: it takes the oldest
waiting crop, waits at most `max_wait_ms` after that crop arrived for company (stopping early once
`max_batch` crops are waiting), and reads the batch with one `Recognizer.read` call. Crops whose
`max_new_tokens` differ never share a batch, so every crop is read exactly as it would be alone: the
engine's results do not depend on the rest of the batch (tests/model/test_generate.py).

A full queue raises `QueueFull` instead of queuing (the API answers 503; what the waiting crops hold
in memory is bounded by the API's reservations, app/serve/memory.py). A future cancelled before its
batch starts (the client went away) is skipped. A crop is let go as soon as its batch is read.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from concurrent.futures import Future
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


class QueueFull(RuntimeError):
    """More crops are waiting than the queue holds."""


class BatcherClosed(RuntimeError):
    """The server is shutting down."""


@dataclass
class _Job:
    image: object
    max_new_tokens: int
    queued_at: float
    future: Future = field(default_factory=Future)


class Batcher:
    def __init__(
        self,
        recognizer,
        *,
        max_batch: int = 32,
        max_wait_ms: float = 10.0,
        max_queue: int = 256,
        num_beams: int = 1,
    ):
        if max_batch < 1 or max_queue < 1 or max_wait_ms < 0:
            raise ValueError("max_batch and max_queue must be at least 1, max_wait_ms at least 0")
        self.recognizer = recognizer
        self.max_batch, self.max_wait_ms, self.max_queue = max_batch, max_wait_ms, max_queue
        self.num_beams = num_beams
        self._cond = threading.Condition()
        self._queue: deque[_Job] = deque()
        self._closed = False
        self._in_flight = 0
        self._counts = Counter()  # requests, served, failed, rejected, cancelled
        self._sizes: Counter[int] = Counter()  # batch size → how many batches had it
        self._thread = threading.Thread(target=self._run, name="hayai-model", daemon=True)

    def start(self) -> Batcher:
        self._thread.start()
        return self

    def submit(self, image, max_new_tokens: int) -> Future:
        """Queue one crop; its future gets the engine's Result (or the batch's exception)."""
        return self.submit_many([image], max_new_tokens)[0]

    def submit_many(self, images: list, max_new_tokens: int) -> list[Future]:
        """Queue several crops at once, or none of them when they do not all fit (QueueFull)."""
        now = time.monotonic()
        jobs = [_Job(image, max_new_tokens, now) for image in images]
        with self._cond:
            if self._closed:
                raise BatcherClosed("the server is shutting down")
            if len(self._queue) + len(jobs) > self.max_queue:
                self._counts["rejected"] += len(jobs)
                raise QueueFull(
                    f"{len(self._queue)} crops are waiting (the queue holds {self.max_queue})"
                )
            self._queue.extend(jobs)
            self._counts["requests"] += len(jobs)
            self._cond.notify_all()
        return [job.future for job in jobs]

    def stats(self) -> dict:
        with self._cond:
            return {
                **{k: self._counts[k] for k in ("requests", "served", "failed", "rejected")},
                "waiting": len(self._queue),
                "queue_limit": self.max_queue,
                "in_flight": self._in_flight,
                "batches": sum(self._sizes.values()),
                "largest_batch": max(self._sizes, default=0),
                "batch_sizes": {str(k): v for k, v in sorted(self._sizes.items())},
            }

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop taking crops, fail those still waiting, and let the running batch finish."""
        with self._cond:
            self._closed = True
            waiting, self._queue = list(self._queue), deque()
            self._cond.notify_all()
        for job in waiting:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(BatcherClosed("the server is shutting down"))
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    # --- the model thread ------------------------------------------------------------------------

    def _take_batch(self) -> list[_Job]:
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if self._closed:
                return []
            first = self._queue[0]
            deadline = first.queued_at + self.max_wait_ms / 1000
            while not self._closed:
                company = sum(1 for j in self._queue if j.max_new_tokens == first.max_new_tokens)
                remaining = deadline - time.monotonic()
                if company >= self.max_batch or remaining <= 0:
                    break
                self._cond.wait(remaining)
            batch, rest = [], deque()
            for job in self._queue:
                if len(batch) < self.max_batch and job.max_new_tokens == first.max_new_tokens:
                    batch.append(job)
                else:
                    rest.append(job)
            self._queue = rest
            self._in_flight = len(batch)
            return batch

    def _run(self) -> None:
        while True:
            jobs = self._take_batch()
            if not jobs:
                return
            jobs = [j for j in jobs if j.future.set_running_or_notify_cancel()]
            if jobs:
                self._read(jobs)
            with self._cond:
                self._in_flight = 0

    def _read(self, jobs: list[_Job]) -> None:
        images = [j.image for j in jobs]
        for job in jobs:  # the crops are let go once read, not when the next batch comes
            job.image = None
        try:
            results = self.recognizer.read(
                images, max_new_tokens=jobs[0].max_new_tokens, num_beams=self.num_beams
            )
        except Exception as exc:  # out of memory and the like: this batch fails, the server goes on
            log.warning("a batch of %d failed: %s: %s", len(jobs), type(exc).__name__, exc)
            with self._cond:
                self._sizes[len(jobs)] += 1
                self._counts["failed"] += len(jobs)
            del images
            exc.with_traceback(None)  # its frames would keep the batch's crops alive
            for job in jobs:
                job.future.set_exception(exc)
            return
        del images
        with self._cond:
            self._sizes[len(jobs)] += 1
            self._counts["served"] += len(jobs)
        log.debug("read a batch of %d", len(jobs))
        for job, result in zip(jobs, results):
            job.future.set_result(result)
