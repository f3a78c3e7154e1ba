"""``copygram bench rpc``: what running the model's layers on ``copygram rpc-server``
processes costs (issue 45; docs/scale.md), measured on loopback, predicted for a network.

It starts ``--servers`` servers on loopback (``--threads`` threads each), each behind a relay
(:mod:`copygram.bench.relay`) that counts the bytes and the round trips of every forward, and
loads the model twice: in this process, and over the servers (every layer there). Then:

- **forwards**: one forward of N tokens after a ``--prompt-tokens`` prompt, with the logits of its
  last row (a splice: a copy, a forced span) and of every row (a verify: a draft), in ms, the
  median of ``--repeats``; per RPC forward its round trips and bytes;
- **edits** (with ``--data``): ``--limit`` rows of each dataset in program and rewrite mode, each
  from an empty cache (the prompt included), locally and over RPC: wall time, forwards, round
  trips, bytes, and whether the RPC edit wrote the local edit's text;
- **predicted on a network**: each RPC figure plus round trips x RTT plus bytes / bandwidth, for
  ``--rtt-ms`` and ``--gbps`` (loopback's own RTT, ~0.03 ms, is inside the measured figure).

Over RPC the weights sit in the servers' plain CPU buffers: llama.cpp repacks weights only in
this process's own CPU buffers, so a K-quant model computes with the kernels of a load without
repacked weights (batch-invariant too; a batched token costs more). The relay (Python) adds
~0.1 ms a round trip to the RPC figures.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from copygram.bench.data import EditRow, add_data_arguments, rows_from_args
from copygram.bench.relay import Relay, Traffic
from copygram.bench.serve import free_port
from copygram.errors import ConfigError

JSON = dict[str, Any]
SERVER_WAIT_S = 120.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="qwen2.5-coder-1.5b",
                        help="a catalog model name or a .gguf path (default qwen2.5-coder-1.5b)")
    parser.add_argument("--servers", type=int, default=2,
                        help="rpc-server processes on loopback (default 2)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of each server, and of this process (default 1: on a "
                             "2-core machine only one server computes at a time)")
    parser.add_argument("--n", default="1,8,32,128",
                        help="forward sizes in tokens (default 1,8,32,128)")
    parser.add_argument("--prompt-tokens", type=int, default=500,
                        help="tokens in the cache before each timed forward (default 500)")
    parser.add_argument("--repeats", type=int, default=3, help="timed forwards per size")
    parser.add_argument("--n-ctx", type=int, default=8192, help="context (default 8192)")
    parser.add_argument("--rtt-ms", default="0.2,1,5",
                        help="network round-trip times to predict for (default 0.2,1,5 ms)")
    parser.add_argument("--gbps", type=float, default=1.0,
                        help="network bandwidth to predict for, Gbit/s (default 1)")
    add_data_arguments(parser, default_max_lines=80)
    parser.add_argument("--json", default=None, help="write every figure here")


@dataclass(frozen=True)
class Forward:
    tokens: int
    rows: str  # "last" (a splice) or "all" (a verify)
    local_ms: float
    rpc_ms: float
    trips: float
    bytes: float


@dataclass(frozen=True)
class Edit:
    row: str
    mode: str
    local_s: float
    rpc_s: float
    forwards: int
    trips: int
    bytes: int
    same_text: bool


@contextmanager
def loopback_servers(count: int, threads: int) -> Iterator[list[Relay]]:
    """``count`` ``copygram rpc-server`` processes on loopback, each behind a counting
    :class:`Relay`; stopped on exit."""
    with rpc_servers(count, threads) as endpoints:
        relays = [Relay(("127.0.0.1", int(e.rpartition(":")[2]))) for e in endpoints]
        try:
            yield relays
        finally:
            for relay in relays:
                relay.close()


@contextmanager
def rpc_servers(count: int, threads: int) -> Iterator[list[str]]:
    """``count`` ``copygram rpc-server`` processes on free loopback ports, as their endpoints,
    once each listens (a :class:`ConfigError` if one exits or does not within 2 minutes);
    stopped on exit. The servers must outlive every model that uses them: ggml aborts a process
    whose model lost its server."""
    procs: list[subprocess.Popen[bytes]] = []
    endpoints = []
    try:
        for _ in range(count):
            port = free_port()
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "copygram", "rpc-server", "--port", str(port),
                 "--threads", str(threads)], stdout=subprocess.DEVNULL))
            _wait_for(port, procs[-1])
            endpoints.append(f"127.0.0.1:{port}")
        yield endpoints
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def _wait_for(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + SERVER_WAIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ConfigError(f"copygram rpc-server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise ConfigError(f"copygram rpc-server did not listen on port {port} within "
                      f"{SERVER_WAIT_S:.0f} s")


def _traffic(relays: Sequence[Relay]) -> Traffic:
    return sum((r.traffic() for r in relays), Traffic())


def time_forwards(local: Any, remote: Any, relays: Sequence[Relay], sizes: Sequence[int],
                  prompt_tokens: int, repeats: int) -> list[Forward]:
    """Each size's forward after the same prompt, locally and over RPC, both row choices."""
    text = Path(__file__).read_text(encoding="utf-8") * 4
    ids = local.tokenize(text)[: prompt_tokens + max(sizes)]
    prompt = ids[:prompt_tokens]
    out = []
    for backend in (local, remote):
        backend.truncate(0)
        backend.splice(prompt)
    for n in sizes:
        span = ids[prompt_tokens : prompt_tokens + n]
        for rows in ("last", "all"):
            times: dict[str, list[float]] = {"local": [], "rpc": []}
            moved: list[Traffic] = []
            for _ in range(repeats):
                for name, backend in (("local", local), ("rpc", remote)):
                    backend.truncate(prompt_tokens)
                    before = _traffic(relays)
                    start = time.perf_counter()
                    if rows == "last":
                        backend.splice(span)
                    else:
                        backend.splice_all(span)
                    times[name].append(time.perf_counter() - start)
                    if name == "rpc":
                        moved.append(_traffic(relays) - before)
            out.append(Forward(n, rows, 1e3 * statistics.median(times["local"]),
                               1e3 * statistics.median(times["rpc"]),
                               statistics.median(t.trips for t in moved),
                               statistics.median(t.bytes for t in moved)))
    return out


def time_edits(local: Any, remote: Any, relays: Sequence[Relay],
               rows: Sequence[EditRow]) -> list[Edit]:
    """Each row in program and rewrite mode, from an empty cache, locally then over RPC."""
    from copygram.errors import GenerationError
    from copygram.session import EditSession

    out = []
    for row in rows:
        for mode in ("program", "rewrite"):
            texts, walls = [], []
            forwards = 0
            moved = Traffic()
            for backend in (local, remote):
                backend.truncate(0)
                session = EditSession(backend, mode=mode, on_damage="keep")
                before = _traffic(relays)
                start = time.perf_counter()
                try:
                    result = session.edit(row.before, row.instruction)
                    texts.append(result.text)
                    forwards = result.stats.forwards
                except GenerationError as exc:
                    texts.append(f"error: {exc}")
                walls.append(time.perf_counter() - start)
                moved = _traffic(relays) - before
            out.append(Edit(f"{row.dataset}/{row.id}", mode, walls[0], walls[1], forwards,
                            moved.trips, moved.bytes, texts[0] == texts[1]))
    return out


def predicted_s(rpc_s: float, trips: float, nbytes: float, rtt_ms: float, gbps: float) -> float:
    """An RPC figure measured on loopback, moved to a network with ``rtt_ms`` and ``gbps``."""
    return rpc_s + trips * rtt_ms / 1e3 + nbytes * 8 / (gbps * 1e9)


def markdown(forwards: Sequence[Forward], edits: Sequence[Edit], rtts: Sequence[float],
             gbps: float) -> str:
    head = " | ".join(f"RTT {r:g} ms" for r in rtts)
    lines = ["| forward | local ms | RPC ms (loopback) | round trips | bytes | " + head + " |",
             "|---|---|---|---|---|" + "---|" * len(rtts)]
    for f in forwards:
        pred = " | ".join(f"{1e3 * predicted_s(f.rpc_ms / 1e3, f.trips, f.bytes, r, gbps):.1f}"
                          for r in rtts)
        lines.append(f"| {f.tokens} tokens, logits of {f.rows} | {f.local_ms:.1f} | "
                     f"{f.rpc_ms:.1f} | {f.trips:g} | {f.bytes:,.0f} | {pred} |")
    if edits:
        lines += ["", "| mode | edits | local s | RPC s (loopback) | forwards | round trips | "
                  "MB | same text | " + head + " |",
                  "|---|---|---|---|---|---|---|---|" + "---|" * len(rtts)]
        for mode in ("program", "rewrite"):
            mine = [e for e in edits if e.mode == mode]
            trips = sum(e.trips for e in mine)
            nbytes = sum(e.bytes for e in mine)
            rpc = sum(e.rpc_s for e in mine)
            pred = " | ".join(f"{predicted_s(rpc, trips, nbytes, r, gbps):.1f}" for r in rtts)
            lines.append(f"| {mode} | {len(mine)} | {sum(e.local_s for e in mine):.1f} | "
                         f"{rpc:.1f} | {sum(e.forwards for e in mine)} | {trips} | "
                         f"{nbytes / 1e6:.1f} | {sum(e.same_text for e in mine)}/{len(mine)} | "
                         f"{pred} |")
    lines.append(f"\nPredicted columns: seconds (ms for forwards) at that RTT and {gbps:g} "
                 "Gbit/s: the loopback figure + round trips x RTT + bytes / bandwidth.")
    return "\n".join(lines)


def _floats(text: str, name: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{name} {text!r}: use a comma list of numbers") from None
    if not values or any(v < 0 for v in values):
        raise ConfigError(f"{name} {text!r}: use a comma list of numbers >= 0")
    return values


def run(args: argparse.Namespace) -> int:
    from copygram.backends import load
    from copygram.host import run_record

    sizes = [int(x) for x in _floats(args.n, "--n")]
    rtts = _floats(args.rtt_ms, "--rtt-ms")
    if args.servers < 1 or args.threads < 1 or args.repeats < 1 or min(sizes) < 1:
        raise ConfigError("--servers, --threads, --repeats and --n must be at least 1")
    if args.gbps <= 0:
        raise ConfigError("--gbps must be positive")
    rows = ([r for group in rows_from_args(args).values() for r in group]
            if args.data or args.datasets else [])
    config = {"model": args.model, "n_ctx": args.n_ctx, "n_threads": args.threads}
    record = run_record(sys.argv, {**config, "servers": args.servers})
    with loopback_servers(args.servers, args.threads) as relays:
        local = load(config)
        remote = load({**config, "rpc_servers": [r.endpoint for r in relays]})
        try:
            describe = {"local": local.describe(), "rpc": remote.describe()}
            print(f"bench rpc: {args.model}, {args.servers} servers x {args.threads} threads; "
                  f"batch-invariant: local {describe['local']['batch_invariant']}, RPC "
                  f"{describe['rpc']['batch_invariant']}", file=sys.stderr)
            forwards = time_forwards(local, remote, relays, sizes, args.prompt_tokens,
                                     args.repeats)
            edits = time_edits(local, remote, relays, rows)
        finally:
            # Before the servers stop: ggml aborts a process whose model lost its server.
            for backend in (remote, local):
                backend.close()  # type: ignore[attr-defined]
    print(markdown(forwards, edits, rtts, args.gbps))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"run": record, "backends": describe, "rtt_ms": rtts, "gbps": args.gbps,
             "forwards": [asdict(f) for f in forwards], "edits": [asdict(e) for e in edits]},
            indent=1) + "\n", encoding="utf-8")
    return 0
