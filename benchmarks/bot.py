"""Bot speed: decision latency in process and over HTTP, and the server's moves/s.

``python -m benchmarks.bot [--seconds S] [--clients N] [--levels L ...] [--views V]``
prints JSON lines:

- ``machine``: cores and load average at the start (figures depend on them).
- ``in_process`` (one line per level): ``bot.choose(view)`` on a ``SeatView``
  (``choose_*``) and ``bot.move_json(view_json)`` (``json_*``: the protocol's
  parse, the rebuild of the view from its history, the check of every claimed
  field, then the move), alternating over the same views for ``--seconds``.
- ``http_single`` (one line per HTTP level): one client with one kept-alive
  connection (``http.client``) posting the same JSON views to a server started in a
  subprocess (``python -m matador_env.serve`` on a free loopback port), one request
  after another for ``--seconds``; the latency is the client's, from sending the
  request to having read the answer.
- ``http_concurrent`` (one line per HTTP level): ``--clients`` threads, each with
  its own kept-alive connection, posting as fast as answers come for ``--seconds``;
  the server's moves/s and the clients' latency under that load. The clients run in
  this process, so on a small machine they compete with the server for the cores.

The views are every decision point of random-play hands of the standard preset (a
trained bot is shipped for it), shuffled; each is sent with all its fields
(:func:`matador_env.protocol.view_to_json`). Latencies are in milliseconds:
median and 99th percentile. Figures, not tests: nothing is asserted on time.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matador_env.bot import LEVELS, Bot, load_bot
from matador_env.engine import HandState, Rules, SeatView
from matador_env.flags import positive_int, positive_number
from matador_env.protocol import view_to_json
from matador_env.streams import run_main

ROOT = Path(__file__).resolve().parent.parent


def sample_views(count: int, seed: int = 0) -> list[SeatView]:
    """Views of the seat to act at every decision of random-play hands, shuffled."""
    rules = Rules.preset("standard")
    rng = random.Random(seed)
    found: list[SeatView] = []
    deal = seed
    while len(found) < count:
        state = HandState.deal(rules, deal)
        deal += 1
        while state.outcome is None:
            found.append(state.view(state.to_move))
            moves = state.legal_moves()
            state = state.apply(moves[rng.randrange(len(moves))])
    rng.shuffle(found)
    return found[:count]


def ms(samples: list[float]) -> dict[str, float]:
    """Median and 99th percentile of seconds, in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]
    return {"median_ms": round(statistics.median(ordered) * 1e3, 3), "p99_ms": round(p99 * 1e3, 3)}


def prefixed(prefix: str, figures: dict[str, float]) -> dict[str, float]:
    return {f"{prefix}_{k}": v for k, v in figures.items()}


# -- in process -----------------------------------------------------------------------


def in_process(
    level: str, views: list[SeatView], payloads: list[dict[str, Any]], seconds: float
) -> dict[str, Any]:
    bot: Bot = load_bot(level, seed=0)
    clock = time.perf_counter
    for view in views[:20]:  # warm up (onnxruntime's first runs are slow)
        bot.choose(view)
    choose: list[float] = []
    via_json: list[float] = []
    i = 0
    start = clock()
    deadline = start + seconds
    while i == 0 or clock() < deadline:  # at least one view: the figures need a sample
        k = i % len(views)
        t0 = clock()
        bot.choose(views[k])
        t1 = clock()
        bot.move_json(payloads[k])
        t2 = clock()
        choose.append(t1 - t0)
        via_json.append(t2 - t1)
        i += 1
    return {
        "bench": "in_process",
        "level": level,
        "views": i,
        "seconds": round(clock() - start, 2),
        **prefixed("choose", ms(choose)),
        **prefixed("json", ms(via_json)),
        "choose_moves_per_s": round(len(choose) / sum(choose)),
    }


# -- over HTTP ------------------------------------------------------------------------


BENCH_OPTIONS = ("--seed", "0", "--log-level", "warning", "--no-access-log")


class ServerProcess:
    """``python -m matador_env.serve`` on a free loopback port, stopped by SIGINT.

    ``options`` are the server's further options (after ``--bots``); its output goes
    to the files ``out`` and ``err``, removed by :meth:`close`."""

    def __init__(
        self,
        bots: list[str],
        options: Sequence[str] = BENCH_OPTIONS,
        prefix: str = "matador-bench-",
    ) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix=prefix)
        self.out = Path(self.tmp.name) / "stdout.txt"
        self.err = Path(self.tmp.name) / "stderr.txt"
        command = [sys.executable, "-m", "matador_env.serve", "--host", "127.0.0.1"]
        command += ["--port", "0", "--bots", ",".join(bots), *options]
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = subprocess.Popen(
                command,
                cwd=ROOT,
                stdout=out,
                stderr=err,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            match = re.search(r"serving on http://127\.0\.0\.1:(\d+)", self.out.read_text())
            if match:
                self.port = int(match.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        stderr = self.err.read_text()
        self.close()
        raise RuntimeError(f"the server did not start:\n{stderr}")

    def connect(self, timeout: float = 120) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def stop(self) -> int | None:
        """Stop the server; its exit status, None when it had to be killed."""
        code: int | None = self.proc.poll()
        if code is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                code = self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return code

    def close(self) -> None:
        self.stop()
        self.tmp.cleanup()


HEADERS = {"Content-Type": "application/json"}


def post(conn: http.client.HTTPConnection, path: str, body: bytes) -> dict[str, Any]:
    conn.request("POST", path, body=body, headers=HEADERS)
    resp = conn.getresponse()
    data = resp.read()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {data[:200]!r}")
    reply: dict[str, Any] = json.loads(data)
    return reply


def http_single(
    server: ServerProcess, level: str, bodies: list[bytes], seconds: float
) -> dict[str, Any]:
    path = f"/move?bot={level}"
    clock = time.perf_counter
    conn = server.connect()
    try:
        for body in bodies[:20]:
            post(conn, path, body)
        samples: list[float] = []
        start = clock()
        deadline = start + seconds
        while not samples or clock() < deadline:  # at least one move
            t0 = clock()
            post(conn, path, bodies[len(samples) % len(bodies)])
            samples.append(clock() - t0)
        elapsed = clock() - start
    finally:
        conn.close()
    return {
        "bench": "http_single",
        "level": level,
        "moves": len(samples),
        "seconds": round(elapsed, 2),
        **ms(samples),
        "moves_per_s": round(len(samples) / elapsed, 1),
    }


def http_concurrent(
    server: ServerProcess, level: str, bodies: list[bytes], seconds: float, clients: int
) -> dict[str, Any]:
    path = f"/move?bot={level}"
    clock = time.perf_counter
    ready = threading.Barrier(clients + 1)
    stop = threading.Event()
    samples: list[list[float]] = [[] for _ in range(clients)]
    errors: list[str] = []

    def client(index: int) -> None:
        conn = server.connect()
        mine = samples[index]
        k = index * 997
        try:
            post(conn, path, bodies[k % len(bodies)])  # connect before the clock starts
            ready.wait()
            while not mine or not stop.is_set():  # at least one move per client
                k += 1
                t0 = clock()
                post(conn, path, bodies[k % len(bodies)])
                mine.append(clock() - t0)
        except Exception as exc:  # reported, not raised: the figures say how many failed
            errors.append(f"{type(exc).__name__}: {exc}")
            if not ready.broken:
                ready.abort()
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    with contextlib.suppress(threading.BrokenBarrierError):
        ready.wait()
    start = clock()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(120)
    elapsed = clock() - start
    every = [s for mine in samples for s in mine]
    return {
        "bench": "http_concurrent",
        "level": level,
        "clients": clients,
        "moves": len(every),
        "seconds": round(elapsed, 2),
        "moves_per_s": round(len(every) / elapsed, 1),
        **(ms(every) if every else {}),
        "errors": len(errors),
        **({"first_error": errors[0]} if errors else {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bot",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seconds", type=positive_number, default=5.0, help="time per measurement")
    parser.add_argument("--clients", type=positive_int, default=8, help="threads of the load test")
    parser.add_argument(
        "--levels",
        nargs="+",
        default=list(LEVELS),
        choices=list(LEVELS),
        help="levels measured in process (default: all)",
    )
    parser.add_argument(
        "--http-levels",
        nargs="+",
        default=["trained", "greedy"],
        choices=list(LEVELS),
        help="levels measured over HTTP (default: trained greedy)",
    )
    parser.add_argument(
        "--views", type=positive_int, default=2000, help="distinct views (default 2000)"
    )
    args = parser.parse_args()

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(
        json.dumps(
            {
                "bench": "machine",
                "cpus": os.cpu_count(),
                "loadavg_1m": round(load[0], 2) if load else None,
                "python": sys.version.split()[0],
            }
        ),
        flush=True,
    )
    views = sample_views(args.views)
    payloads = [view_to_json(v) for v in views]
    bodies = [json.dumps(p).encode() for p in payloads]

    for level in args.levels:
        print(json.dumps(in_process(level, views, payloads, args.seconds)), flush=True)

    server = ServerProcess(list(dict.fromkeys([*args.http_levels, *args.levels])))
    try:
        for level in args.http_levels:
            print(json.dumps(http_single(server, level, bodies, args.seconds)), flush=True)
        for level in args.http_levels:
            line = http_concurrent(server, level, bodies, args.seconds, args.clients)
            print(json.dumps(line), flush=True)
    finally:
        server.close()


if __name__ == "__main__":
    run_main(main)
