"""`hayai bench --serve`: `hayai serve` under load, as its clients see it.

Starts `hayai serve` with the engine options on a free loopback port (a child process, as in use),
then for each concurrency (`--concurrency`, 1, 8 and 64 by default) keeps that many streaming
chat-completion requests in flight from as many client threads until `runs × concurrency` requests
are answered, and reports crops per second, the p50 time to first token (sending to the first piece
of text; also apart for the first wave, the requests all sent at once when the level starts, and
for the later ones, each sent when its client's previous answer ended), the p50/p95 latency of one
request (client side, from sending to the whole answer), and how many crops the server decoded
together (from /health). One crop (the bundled sample unless --image), read in every request.

With `--compare-fixed SIZES` it then starts a server reading whole batches of each size
(`--batching fixed --max-batch N`) and loads it the same way at the highest concurrency, so the
continuous server and the best fixed batch size are compared in one run.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def start_server(args, model_dir: str | None, port: int, log, fixed: int | None = None):
    """`hayai serve` with the engine options; fixed: read whole batches of up to this many crops
    (`--batching fixed`) instead of decoding continuously."""
    from app.platform.desktop_entry import (
        launch_command,
    )  # this installation's hayai, the bundle too

    command = [*launch_command(), "serve", "--port", str(port)]
    command += ["--device", args.device, "--precision", args.precision]
    command += ["--max-new-tokens", str(args.max_new_tokens), "--beams", str(args.beams)]
    command += ["--max-queue", str(4 * max(args.concurrency))]
    if fixed is None:
        command += ["--max-batch", str(args.max_batch), "--max-rows", str(args.max_rows)]
    else:
        command += ["--batching", "fixed", "--max-batch", str(fixed)]
    if model_dir:
        command += ["--model", model_dir]
    if args.variant and not model_dir:
        command += ["--variant", args.variant]
    if args.compile:
        command.append("--compile")
    root = Path(__file__).resolve().parents[2]
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
    )
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_ready(url: str, process: subprocess.Popen, timeout_s: float = 900) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"hayai serve exited with {process.returncode}")
        try:
            return _get(url + "/health")
        except (urllib.error.URLError, OSError):
            time.sleep(0.25)
    raise RuntimeError(f"hayai serve did not answer within {timeout_s:.0f} s")


def streamed(url: str, body: bytes) -> tuple[float, float, int]:
    """One streaming chat completion → (ms to its first piece of text, ms to the whole answer,
    tokens generated)."""
    request = urllib.request.Request(
        url + "/v1/chat/completions", body, {"Content-Type": "application/json"}
    )
    started = time.perf_counter()
    first, tokens = None, 0
    with urllib.request.urlopen(request, timeout=900) as response:
        for line in response:
            data = line.strip()[6:] if line.startswith(b"data: ") else b""
            if not data or data == b"[DONE]":
                continue
            chunk = json.loads(data)
            if "error" in chunk:
                raise RuntimeError(chunk["error"]["message"])
            if first is None and chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                first = time.perf_counter()
            tokens = (chunk.get("usage") or {}).get("completion_tokens", tokens)
    done = time.perf_counter()
    return ((first or done) - started) * 1000, (done - started) * 1000, tokens


def _p50(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def load(url: str, body: bytes, concurrency: int, total: int) -> dict:
    """`total` requests, `concurrency` in flight at a time; crops/s, time to first token and
    latency percentiles. The first wave is the `concurrency` requests sent at once when the level
    starts; the later ones are each sent when its client's previous answer has ended."""
    latencies: list[float] = []
    firsts: list[float] = []
    first_wave: list[float] = []
    later: list[float] = []
    tokens: list[int] = []
    errors: list[str] = []
    lock = threading.Lock()
    left = [total]

    def client():
        wave = True
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            try:
                first, latency, generated = streamed(url, body)
            except Exception as exc:
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}")
                continue
            with lock:
                firsts.append(first)
                (first_wave if wave else later).append(first)
                latencies.append(latency)
                tokens.append(generated)
            wave = False

    before = _get(url + "/health")["stats"]
    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    after = _get(url + "/health")["stats"]
    if "steps" in after:  # continuous batching: the rows of the mean decode step
        together = (after["step_rows"] - before["step_rows"]) / max(
            1, after["steps"] - before["steps"]
        )
    else:
        together = (after["served"] - before["served"]) / max(
            1, after["batches"] - before["batches"]
        )
    if not latencies:
        raise RuntimeError(f"no request was answered: {errors[0]}")
    p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) > 1 else latencies[0]
    return {
        "concurrency": concurrency,
        "requests": total,
        "errors": len(errors),
        "crops_per_s": round(len(latencies) / elapsed, 2),
        "ttft_p50_ms": _p50(firsts),
        "ttft_first_wave_p50_ms": _p50(first_wave),
        "ttft_later_p50_ms": _p50(later),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(p95, 1),
        "tokens_per_crop": round(statistics.mean(tokens), 1) if tokens else 0,
        "mean_batch": round(together, 2),
        "seconds": round(elapsed, 2),
        **({"first_error": errors[0]} if errors else {}),
    }


def measure(args, model_dir, body: bytes, levels, scratch: str, fixed: int | None = None):
    """Starts one server, loads it at each concurrency of `levels` → (its /health, the levels)."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = Path(scratch) / f"serve-{fixed or 'continuous'}.log"
    with open(log_path, "wb") as log:
        process = start_server(args, model_dir, port, log, fixed)
    try:
        try:
            health = wait_ready(url, process)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}:\n{log_path.read_text()[-2000:]}") from None
        load(url, body, 1, 1)  # a first request outside the figures
        return health, [load(url, body, c, max(1, args.runs) * c) for c in levels]
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def run(args, model_dir: str | None, image_path: str, scratch: str) -> dict:
    data = base64.b64encode(Path(image_path).read_bytes()).decode()
    content = [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}]
    request: dict[str, object] = {
        "model": "hayai",
        "messages": [{"role": "user", "content": content}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    body = json.dumps(request).encode()
    health, levels = measure(args, model_dir, body, args.concurrency, scratch)
    report = {
        "model": health["model"],
        "device": health["device"],
        "precision": health["precision"],
        "max_new_tokens": health["max_new_tokens"],
        "max_batch": health["max_batch"],
        "max_rows": health.get("max_rows"),
        "prefill_per_step": health.get("prefill_per_step"),
        "max_wait_ms": health["max_wait_ms"],
        "continuous": health.get("continuous", False),
        "cpu_threads": os.cpu_count(),
        "levels": levels,
    }
    if args.compare_fixed:  # the same load on whole batches of each size, at the top concurrency
        top = max(args.concurrency)
        fixed = []
        for size in args.compare_fixed:
            _, (level,) = measure(args, model_dir, body, [top], scratch, fixed=size)
            fixed.append({"max_batch": size, **level})
        report["fixed"] = fixed
        report["best_fixed"] = max(fixed, key=lambda level: level["crops_per_s"])["max_batch"]
    return report


def main(args) -> int:
    """Engine options as for `hayai bench`; --random-weights writes a real-size random checkpoint first."""
    import resources
    from app.engines.local import bench_model_dir

    image = args.image or str(resources.path(resources.SAMPLE_HORIZONTAL))
    try:
        with (
            bench_model_dir(args) as model_dir,
            tempfile.TemporaryDirectory(prefix="hayai-bench-serve-") as scratch,
        ):
            report = run(args, model_dir, image, scratch)
    except (RuntimeError, ValueError, OSError) as exc:
        print(f"hayai bench --serve: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report))
        return 0
    waiting = f"waiting {report['max_wait_ms']:g} ms for company"
    if report["continuous"]:
        paced = "paced to the decode steps" if report["prefill_per_step"] else waiting
        batching = (
            f"continuous batching of up to {report['max_rows']} crops "
            f"(prefills of up to {report['max_batch']}, {paced})"
        )
    else:
        batching = f"batches of up to {report['max_batch']} ({waiting})"
    print(
        f"hayai serve: {report['model']} on {report['device']} ({report['precision']}), "
        f"{report['max_new_tokens']} new tokens at most, {batching}"
    )
    _table(report["levels"], "concurrency", "concurrency")
    if "fixed" in report:
        print(f"the same load on fixed batches (--batching fixed), best: {report['best_fixed']}")
        _table(report["fixed"], "max batch", "max_batch")
    return 0


def _table(levels: list[dict], title: str, key: str) -> None:
    def ms(value) -> str:
        return "-" if value is None else f"{value:g}"

    print(
        f"{title:>11} {'requests':>8} {'crops/s':>8} {'TTFT ms':>8} {'(first':>8} {'later)':>8} "
        f"{'p50 ms':>8} {'p95 ms':>8} {'batch':>6} {'tokens':>6}"
    )
    for r in levels:
        print(
            f"{r[key]:>11} {r['requests']:>8} {r['crops_per_s']:>8} {ms(r['ttft_p50_ms']):>8} "
            f"{ms(r['ttft_first_wave_p50_ms']):>8} {ms(r['ttft_later_p50_ms']):>8} "
            f"{r['p50_ms']:>8} {r['p95_ms']:>8} {r['mean_batch']:>6} {r['tokens_per_crop']:>6}"
            + (f"  {r['errors']} errors" if r["errors"] else "")
        )
