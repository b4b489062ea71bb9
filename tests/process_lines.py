"""A child process that prints `PREFIX {json}` lines, read on a thread so that a wait has a
deadline (imported by name: tests/ is on sys.path via conftest). The Hover to read tests' app and
other program talk this way (tests/hover)."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time


class ProcessLines:
    """`process` (stdin and stdout pipes, text mode): `wait_for` its lines, `send` it lines."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip())

    def wait_for(self, prefix: str, check=lambda value: True, timeout_s: float = 120):
        """The first line `prefix {json}` (after those read so far) whose value passes `check`."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            if line.startswith(prefix + " "):
                value = json.loads(line[len(prefix) + 1 :])
                if check(value):
                    return value
        tail = "\n".join(self.seen[-60:])
        raise AssertionError(
            f"no {prefix} line that fits within {timeout_s} s; last lines:\n{tail}"
        )

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
