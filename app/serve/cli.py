"""`hayai serve`: load the model, then answer the OpenAI-compatible API on HOST:PORT (docs/server.md).

Without an API key it listens on loopback only (anyone who can reach the port could use the model)
and answers only requests whose Host names this computer (`--allow-host` adds names).
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import socket
import sys
import time

from app.cli_types import batch_size, positive_int

log = logging.getLogger(__name__)

KEY_ENV = "HAYAI_API_KEY"
# On a CPU the prefills between two decode steps take about this many times as long as one step
# (app/serve/batcher.py, Batcher._prefill_count): over a few rows one crop per step, over many a
# few (up to --max-batch), so there a step costs about a sixteenth of the time spent prefilling.
PREFILL_PER_STEP = 16


def add_options(p) -> None:
    """`hayai serve`'s own options (the engine options are added by app/cli.py)."""
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument(
        "--api-key",
        metavar="KEY",
        help=f"require `Authorization: Bearer KEY` (or set {KEY_ENV}); needed to listen beyond loopback",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="without a key, also answer requests for this Host name (besides localhost and "
        "loopback addresses); may be given more than once",
    )
    p.add_argument(
        "--max-batch",
        type=batch_size,
        default=32,
        metavar="N",
        help="most crops prefilled together (with --beams or --batching fixed: read together; "
        "default 32); auto: the size with the best throughput on this device, measured once and "
        "remembered (as hayai ocr --batch-size auto)",
    )
    p.add_argument(
        "--max-rows",
        type=positive_int,
        default=64,
        metavar="N",
        help="most crops decoded together in the continuous decode (default 64); a crop that "
        "arrives while fewer are being decoded starts at the next token",
    )
    p.add_argument(
        "--batching",
        choices=("continuous", "fixed"),
        default=None,
        help="continuous (the default): crops join the running decode at the next token; fixed "
        "(the default with --beams): whole batches are read one after the other, to compare",
    )
    p.add_argument(
        "--max-wait-ms",
        type=float,
        default=10.0,
        metavar="M",
        help="how long a crop that arrives while nothing is being read waits for others to be "
        "prefilled with it (default 10)",
    )
    p.add_argument(
        "--max-queue",
        type=int,
        default=256,
        metavar="N",
        help="crops that may wait; beyond it requests get 503 (default 256)",
    )
    p.add_argument(
        "--max-queue-mb",
        type=int,
        default=1024,
        metavar="MB",
        help="memory requests may hold together (bodies, decoded crops), in megabytes; "
        "beyond it requests get 503 (default 1024)",
    )
    p.add_argument(
        "--max-image-bytes",
        type=int,
        default=20_000_000,
        metavar="N",
        help="largest image file accepted, in bytes (default 20000000)",
    )
    p.add_argument(
        "--max-image-pixels",
        type=int,
        default=25_000_000,
        metavar="N",
        help="largest image accepted, width × height; also the most for the images of one "
        "/v1/ocr request together (default 25000000)",
    )


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback address (127.0.0.0/8, ::1)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(
        ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos
    )


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to HOST:PORT (as uvicorn binds one), handed to uvicorn; OSError when
    the address cannot be had (a port in use, an address not on this computer)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _fail(message: str) -> int:
    print(f"hayai serve: {message}", file=sys.stderr)
    return 2


def check_options(args) -> str | None:
    """The first problem with the options, in words, or None."""
    for name, low in (
        ("max_queue", 1),
        ("max_queue_mb", 1),
        ("max_new_tokens", 1),
        ("beams", 1),
    ):
        if getattr(args, name) < low:
            return f"--{name.replace('_', '-')} must be at least {low}"
    if args.max_wait_ms < 0:
        return "--max-wait-ms must be 0 or more"
    if args.max_image_bytes < 1 or args.max_image_pixels < 1:
        return "--max-image-bytes and --max-image-pixels must be at least 1"
    if not 0 <= args.port <= 65535:
        return "--port must be from 0 to 65535"
    if args.batching == "continuous" and args.beams != 1:
        return "--batching continuous decodes greedily: it cannot be used with --beams"
    return None


def main(args) -> int:
    problem = check_options(args)
    if problem:
        return _fail(problem)
    api_key = args.api_key or os.environ.get(KEY_ENV) or None
    if api_key is None and not is_loopback(args.host):
        return _fail(
            f"refusing to listen on {args.host} without an API key: anyone who can reach it could use "
            f"the model. Give --api-key KEY (or set {KEY_ENV}), or listen on 127.0.0.1."
        )
    try:
        import python_multipart  # noqa: F401  (Starlette's form parser)
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as exc:
        return _fail(
            f"needs the serve extra ({exc.name} is missing): pip install 'hayai-desktop[serve]'"
        )
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from app.engines.local import load_from_args as _load
    from app.serve.api import ServerConfig, create_app
    from app.serve.batcher import Batcher, Schedule
    from app.serve.connections import RepeatFilter, uvicorn_options
    from app.serve.model_thread import ModelThread

    for handler in logging.getLogger().handlers:  # uvicorn's loggers and asyncio's end here too
        handler.addFilter(RepeatFilter())

    host = f"[{args.host}]" if ":" in args.host else args.host
    try:  # before the model loads: a port in use is one sentence at once, not a traceback later
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror or exc
        return _fail(
            f"cannot listen on http://{host}:{args.port} ({reason}); stop what uses it, or "
            "choose another port with --port."
        )
    port = sock.getsockname()[1]  # --port 0: the one the system gave
    print("hayai serve: loading the model…", file=sys.stderr, flush=True)
    model_thread = ModelThread()  # loads, warms up, measures and reads: one thread (its docstring)
    rec = model_thread.call(_load, args)
    if isinstance(rec, str):
        sock.close()
        return _fail(rec)
    model_thread.call(rec.warmup, max_new_tokens=args.max_new_tokens)
    if args.max_batch == "auto":
        from app.engines.local import auto_batch_size

        args.max_batch = model_thread.call(auto_batch_size, rec)
    config = ServerConfig(
        model_id=f"hayai-{rec.variant}",
        variant=rec.variant,
        device=str(rec.device),
        precision=rec.precision,
        max_new_tokens=args.max_new_tokens,
        api_key=api_key,
        max_image_bytes=args.max_image_bytes,
        max_image_pixels=args.max_image_pixels,
        image_cap=rec.config.image_cap,
        max_memory_bytes=args.max_queue_mb * 1_000_000,
        allow_hosts=tuple(args.allow_host),
        created=int(time.time()),
    )
    batching = args.batching or ("continuous" if args.beams == 1 else "fixed")  # beams: fixed
    schedule = Schedule(
        max_batch=args.max_batch,
        max_rows=args.max_rows,
        max_wait_ms=args.max_wait_ms,
        max_queue=args.max_queue,
        num_beams=args.beams,
        continuous=batching == "continuous",
        # on a CPU a prefill of n crops costs about n prefills of one (docs/server.md, "Batching")
        prefill_per_step=PREFILL_PER_STEP if rec.torch_device.type == "cpu" else None,  # continuous
    )
    batcher = Batcher(rec, schedule, thread=model_thread).start()
    if schedule.continuous:
        paced = ", paced to the decode steps" if schedule.prefill_per_step else ""
        how = (
            f"continuous batching of up to {schedule.max_rows} crops "
            f"(prefills of up to {schedule.max_batch}{paced})"
        )
    else:
        how = f"batches of up to {schedule.max_batch} (waiting at most {schedule.max_wait_ms:g} ms)"
    print(
        f"hayai serve: {config.model_id} on {config.device} ({config.precision}), {how}"
        f"{'' if api_key else ', no key'}; "
        f"OpenAI base URL http://{host}:{port}/v1",
        file=sys.stderr,
        flush=True,
    )
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(batcher, config),
            host=args.host,
            port=args.port,
            log_level="debug" if args.verbose else "info",
            log_config=None,
            access_log=bool(args.verbose),  # uvicorn tests `is False`: a count of 0 would log
            lifespan="off",
            **uvicorn_options(),
        )
    )
    try:
        server.run(sockets=[sock])
    finally:
        batcher.close()
        sock.close()
    return 0 if server.started else 1
