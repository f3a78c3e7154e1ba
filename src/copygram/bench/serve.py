"""``copygram bench serve``: throughput and latency of ``copygram serve`` under concurrent edits.

N clients at a time send edit requests (a real edit pair's ``before`` and ``instruction``, from
``--data``) to a running server (``--url``) or to one this command starts on a free loopback port
(the default model unless ``--config``/``--model`` say otherwise), and time each request from the
moment it is sent: to the first output text (TTFT) and to the end of the stream. Every request
streams (so that both times exist) and asks for greedy decoding. Variants:

- ``plain``: ``POST /v1/chat/completions`` asking for the whole edited file;
- ``prediction``: the same request with the file as OpenAI's ``prediction`` (rewrite-mode
  drafting: same text, fewer forwards);
- ``program``: ``POST /v1/edits`` in program mode (the model writes an edit program; TTFT is the
  first program token).

Per variant: requests, errors, wall time, completion tokens per second over the wall time,
requests per second, p50/p95 of TTFT and of the total latency, and the mean accepted prediction
tokens. The standard library's ``http.client`` is the client: nothing between the clock and the
socket. Prints a Markdown table; ``--json`` writes the numbers.
"""

from __future__ import annotations

import argparse
import dataclasses
import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from copygram.bench.data import EditRow, add_data_arguments, rows_from_args
from copygram.errors import ConfigError

JSON = dict[str, object]
VARIANTS = ("plain", "prediction", "program")
SYSTEM = ("You edit code. Reply with the whole edited file in one code block and nothing else.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=None,
                        help="a running server's base URL (http://HOST:PORT); default: start one")
    parser.add_argument("--config", default=None, help="TOML config for the server it starts")
    parser.add_argument("--model", default=None, help="model for the server it starts")
    parser.add_argument("--api-key", default=os.environ.get("COPYGRAM_API_KEY"),
                        help="the server's key (default: $COPYGRAM_API_KEY)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients (default 4)")
    parser.add_argument("--requests", type=int, default=None,
                        help="requests per variant (default: 2 per client)")
    parser.add_argument("--max-tokens", type=int, default=128,
                        help="completion tokens per request at most (default 128)")
    parser.add_argument("--variants", default="plain,prediction",
                        help=f"comma list of {', '.join(VARIANTS)} (default: plain,prediction)")
    parser.add_argument("--replicas", default="1",
                        help="comma list of replica counts for the server it starts, each run "
                             "in turn on the same requests (serve --replicas; default 1), e.g. "
                             "1,2 for a load test of two replicas against one")
    parser.add_argument("--json", default=None, help="write the summary here")
    add_data_arguments(parser, default_max_lines=60)


@dataclass(frozen=True)
class Sample:
    """One request: seconds to the first output and to the end, tokens, or its error."""

    ttft_s: float
    total_s: float
    completion_tokens: int
    accepted_prediction_tokens: int
    error: str = ""


@dataclass(frozen=True)
class Summary:
    variant: str
    clients: int
    requests: int
    errors: int
    wall_s: float
    tokens_per_s: float
    requests_per_s: float
    ttft_p50_s: float
    ttft_p95_s: float
    latency_p50_s: float
    latency_p95_s: float
    accepted_prediction_tokens: float
    replicas: int = 1  # server processes behind the port (serve --replicas)


def request_body(variant: str, row: EditRow, max_tokens: int,
                 model: str) -> tuple[str, JSON]:
    """The endpoint and body of ``variant``'s request for ``row``."""
    if variant == "program":
        return "/v1/edits", {"document": row.before, "instruction": row.instruction,
                             "mode": "program", "stream": True}
    fence = "```"
    body: JSON = {
        "model": model, "stream": True, "stream_options": {"include_usage": True},
        "temperature": 0, "max_tokens": max_tokens,
        "messages": [{"role": "system", "content": SYSTEM},
                     {"role": "user",
                      "content": f"{row.instruction}\n\n{fence}\n{row.before}{fence}"}],
    }
    if variant == "prediction":
        body["prediction"] = {"type": "content", "content": row.before}
    return "/v1/chat/completions", body


def sse_data(response: http.client.HTTPResponse) -> Iterator[str]:
    """The ``data:`` payloads of a server-sent event stream, as they arrive."""
    while line := response.readline():
        text = line.decode("utf-8").rstrip("\r\n")
        if text.startswith("data: "):
            yield text[len("data: "):]


def send(url: str, key: str | None, path: str, body: JSON, timeout: float = 600.0) -> Sample:
    """One streamed request, timed from just before it is sent."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80,
                                            timeout=timeout)
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    started = time.perf_counter()
    first: float | None = None
    tokens = accepted = 0
    try:
        connection.request("POST", path, json.dumps(body).encode("utf-8"), headers)
        response = connection.getresponse()
        if response.status != 200:
            message = json.loads(response.read() or b"{}").get("error", {}).get("message", "")
            return Sample(0.0, time.perf_counter() - started, 0, 0,
                          f"HTTP {response.status}: {message}")
        for data in sse_data(response):
            if data == "[DONE]":
                break
            event = json.loads(data)
            if "error" in event:
                return Sample(0.0, time.perf_counter() - started, 0, 0,
                              str(event["error"].get("message")))
            if first is None and _has_output(event):
                first = time.perf_counter()
            usage = event.get("usage")
            if isinstance(usage, dict):
                tokens = int(usage.get("completion_tokens", 0))
                details = usage.get("completion_tokens_details") or {}
                accepted = int(details.get("accepted_prediction_tokens", 0))
    except OSError as exc:
        return Sample(0.0, time.perf_counter() - started, 0, 0, f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()
    end = time.perf_counter()
    return Sample((first or end) - started, end - started, tokens, accepted)


def _has_output(event: JSON) -> bool:
    if event.get("type") in ("token", "copy", "text"):
        return True
    choices = event.get("choices")
    return isinstance(choices, list) and any(
        isinstance(c, dict) and isinstance(c.get("delta"), dict) and c["delta"].get("content")
        for c in choices)


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def served_model(url: str, key: str | None) -> str:
    """The id the server's ``GET /v1/models`` lists first."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80,
                                            timeout=30)
    try:
        connection.request("GET", "/v1/models",
                           headers={"authorization": f"Bearer {key}"} if key else {})
        response = connection.getresponse()
        body = json.loads(response.read() or b"{}")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"no copygram server answers at {url}: {exc}") from None
    finally:
        connection.close()
    if response.status != 200:
        raise ConfigError(f"{url}/v1/models answered {response.status}: {body}")
    return str(body["data"][0]["id"])


def run_variant(url: str, key: str | None, variant: str, rows: Sequence[EditRow], clients: int,
                requests: int, max_tokens: int) -> Summary:
    """``requests`` requests of ``variant``, ``clients`` at a time, rows taken in turn."""
    model = served_model(url, key)
    work = [request_body(variant, rows[i % len(rows)], max_tokens, model)
            for i in range(requests)]
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        samples = list(pool.map(lambda job: send(url, key, *job), work))
    wall = time.perf_counter() - started
    good = [s for s in samples if not s.error]
    for sample in samples:
        if sample.error:
            print(f"bench serve: {variant}: {sample.error}", file=sys.stderr)
    tokens = sum(s.completion_tokens for s in good)
    return Summary(
        variant=variant, clients=clients, requests=requests, errors=len(samples) - len(good),
        wall_s=wall, tokens_per_s=tokens / wall if wall else 0.0,
        requests_per_s=len(good) / wall if wall else 0.0,
        ttft_p50_s=percentile([s.ttft_s for s in good], 50),
        ttft_p95_s=percentile([s.ttft_s for s in good], 95),
        latency_p50_s=percentile([s.total_s for s in good], 50),
        latency_p95_s=percentile([s.total_s for s in good], 95),
        accepted_prediction_tokens=(sum(s.accepted_prediction_tokens for s in good) / len(good)
                                    if good else 0.0))


def markdown(summaries: Sequence[Summary]) -> str:
    header = ("| variant | replicas | clients | requests | errors | wall s | tokens/s | "
              "requests/s | TTFT p50 s | TTFT p95 s | latency p50 s | latency p95 s | "
              "accepted pred. tokens |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in summaries:
        lines.append(f"| {s.variant} | {s.replicas} | {s.clients} | {s.requests} | {s.errors} "
                     f"| {s.wall_s:.1f} "
                     f"| {s.tokens_per_s:.1f} | {s.requests_per_s:.2f} | {s.ttft_p50_s:.2f} | "
                     f"{s.ttft_p95_s:.2f} | {s.latency_p50_s:.2f} | {s.latency_p95_s:.2f} | "
                     f"{s.accepted_prediction_tokens:.1f} |")
    return "\n".join(lines)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_server(args: argparse.Namespace, clients: int,
                 replicas: int = 1) -> tuple[subprocess.Popen[bytes], str]:
    """``copygram serve`` (``replicas`` processes) on a free loopback port, once ``/health`` has
    answered from every replica (up to 5 min)."""
    port = free_port()
    command = [sys.executable, "-m", "copygram", "serve", "--port", str(port),
               "--log-level", "warning", "--max-waiting", str(max(16, clients)),
               "--replicas", str(replicas)]
    for flag, value in (("--config", args.config), ("--model", args.model),
                        ("--api-key", args.api_key)):
        if value:
            command += [flag, value]
    server = subprocess.Popen(command)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    answered: set[object] = set()  # the replicas' pids
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise ConfigError(f"copygram serve exited with {server.returncode} (see above)")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            headers = {"authorization": f"Bearer {args.api_key}"} if args.api_key else {}
            connection.request("GET", "/health", headers=headers)
            response = connection.getresponse()
            if response.status == 200:
                answered.add(json.loads(response.read()).get("pid"))
                if len(answered) >= replicas:
                    return server, url
            time.sleep(0.05)
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise ConfigError("copygram serve did not answer /health within 5 minutes")


def replica_counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise ConfigError(f"--replicas {text!r}: use a comma list of counts >= 1, e.g. 1,2")
    return counts


def run(args: argparse.Namespace) -> int:
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown or not variants:
        raise ConfigError(f"--variants: unknown {', '.join(unknown) or '(none given)'}; "
                          f"choose from {', '.join(VARIANTS)}")
    if args.clients < 1 or args.max_tokens < 1 or (args.requests is not None
                                                   and args.requests < 1):
        raise ConfigError("--clients, --requests and --max-tokens must be at least 1")
    rows = [row for dataset in rows_from_args(args).values() for row in dataset]
    if not rows:
        raise ConfigError("no edit rows selected: check --data, --datasets and --limit")
    requests = args.requests or 2 * args.clients
    counts = replica_counts(args.replicas)
    if args.url and counts != [1]:
        raise ConfigError("--replicas applies to the server this command starts, not to --url")
    summaries = []
    for replicas in counts:
        server, url = ((None, args.url.rstrip("/")) if args.url
                       else start_server(args, args.clients, replicas))
        try:
            for variant in variants:
                summary = dataclasses.replace(
                    run_variant(url, args.api_key, variant, rows, args.clients, requests,
                                args.max_tokens), replicas=replicas)
                summaries.append(summary)
                print(f"bench serve: {variant}, {replicas} replica(s): done in "
                      f"{summary.wall_s:.1f} s", file=sys.stderr)
        finally:
            if server is not None:
                server.terminate()
                server.wait(30)
    print(markdown(summaries))
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(s) for s in summaries], indent=2) + "\n",
                                   encoding="utf-8")
    return 0
