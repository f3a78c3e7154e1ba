"""Aider (the ``aider-chat`` CLI) driving ``copygram serve``, end to end: ``make aider-test``.

Starts ``copygram serve`` on a loopback port with the model named by its catalog name, makes a
temporary git repository holding ``examples/stats.py`` (its median is wrong for an even count),
runs Aider on it with the ``whole`` edit format and a bug-fix instruction, and checks that the
file comes out right (``examples/check_stats.py``) and that Aider committed it. Prints what each
step did and took; exits non-zero where a check fails.

Aider is not a dependency of copygram (its own pins would fight ours): ``make aider-test``
installs it into a virtual environment of its own and passes its executable as ``--aider``.
Nothing here reaches the internet: litellm reads its bundled model table
(``LITELLM_LOCAL_MODEL_COST_MAP``) and Aider's update check, analytics and repository map are off.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY = "aider-e2e"
INSTRUCTION = ("Fix median in stats.py: for an even count it must return the mean of the two "
               "middle values. Change nothing else.")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_healthy(url: str, server: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"copygram serve exited with {server.returncode}")
        request = urllib.request.Request(f"{url}/health",
                                         headers={"Authorization": f"Bearer {KEY}"})
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"copygram serve did not answer /health within {timeout:.0f} s")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--aider", default="aider", help="the aider executable")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="a catalog name")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds for Aider's run")
    args = parser.parse_args()
    aider = shutil.which(args.aider)
    if aider is None:
        raise SystemExit(f"no aider executable at {args.aider!r}: make aider-test installs one")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    server = subprocess.Popen(
        [sys.executable, "-m", "copygram", "serve", "--model", args.model, "--port", str(port),
         "--api-key", KEY, "--log-level", "warning", "--timeout", str(args.timeout)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_healthy(url, server, timeout=600)
        print(f"aider-e2e: copygram serve up with {args.model} in "
              f"{time.monotonic() - started:.0f} s", flush=True)
        with tempfile.TemporaryDirectory(prefix="aider-e2e-") as work:
            repo = Path(work) / "repo"
            repo.mkdir()
            shutil.copy(ROOT / "examples" / "stats.py", repo / "stats.py")
            git(repo, "init", "-q")
            git(repo, "-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "add", ".")
            git(repo, "-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "commit", "-qm",
                "stats")
            env = {**os.environ, "HOME": work, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                   "GIT_AUTHOR_NAME": "e2e", "GIT_AUTHOR_EMAIL": "e2e@example.com",
                   "GIT_COMMITTER_NAME": "e2e", "GIT_COMMITTER_EMAIL": "e2e@example.com"}
            command = [aider, "--model", f"openai/{args.model}", "--openai-api-base",
                       f"{url}/v1", "--openai-api-key", KEY, "--edit-format", "whole",
                       "--yes-always", "--no-check-update", "--no-analytics",
                       "--no-show-model-warnings", "--map-tokens", "0", "--no-pretty",
                       "--no-stream", "--message", INSTRUCTION, "stats.py"]
            tick = time.monotonic()
            run = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True,
                                 timeout=args.timeout, check=False)
            took = time.monotonic() - tick
            print(f"aider-e2e: aider exited {run.returncode} after {took:.0f} s; its output:")
            print(run.stdout[-4000:], run.stderr[-2000:], sep="\n", flush=True)
            log = git(repo, "log", "--format=%s")
            diff = git(repo, "diff", "HEAD~1", "--", "stats.py") if log.count("\n") > 1 else ""
            print(f"aider-e2e: commits (newest first):\n{log}aider-e2e: its diff:\n{diff}")
            check = subprocess.run([sys.executable, str(ROOT / "examples" / "check_stats.py"),
                                    str(repo / "stats.py")], capture_output=True, text=True,
                                   check=False)
            print(f"aider-e2e: examples/check_stats.py: {check.stdout.strip()}"
                  f"{check.stderr.strip()}")
            ok = run.returncode == 0 and check.returncode == 0 and log.count("\n") == 2
            print(f"aider-e2e: {'passed' if ok else 'FAILED'}: the file edited right "
                  f"{'and' if ok else 'or'} committed ({time.monotonic() - started:.0f} s in all)")
            return 0 if ok else 1
    finally:
        server.terminate()
        try:
            out, _ = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            out, _ = server.communicate()
        if out.strip():
            print(f"aider-e2e: the server's log:\n{out[-3000:]}")


if __name__ == "__main__":
    sys.exit(main())
