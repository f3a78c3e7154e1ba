"""llama.cpp's RPC backend on loopback (``rpc_servers``; docs/scale.md): two ``copygram
rpc-server`` processes hold every layer of the model and the client in another process drives
them as one model.

- an edit over RPC equals the single-process edit, program and rewrite mode, token for token,
  and a batched forward's logits equal the single-process ones bit for bit (SmolLM2-135M, whose
  Q4_1 weights no load repacks, so both sides run the same kernels);
- the batch-invariance suite (tests/backends/invariant_suite.py) passes over RPC: any split
  into forwards equals one-token steps, rewrite mode writes plain greedy, program mode the
  step-by-step program, on both test tokenizers where they are on this machine;
- a server that cannot be reached is a BackendError before ggml would abort the process, and a
  process that registered a server loads a local model without it.

Clients run in processes of their own: ggml keeps a registered server for the life of the
process, and aborts the process if a server it uses goes away.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.llamacpp

ROOT = Path(__file__).resolve().parents[2]


def _rpc_built() -> bool:
    import llama_cpp

    return bool(llama_cpp.llama_supports_rpc())


@pytest.fixture(scope="module")
def servers() -> Iterator[str]:
    """Two ``copygram rpc-server`` processes on loopback (one thread each), as ``rpc_servers``."""
    from copygram.bench.rpc import rpc_servers

    if not _rpc_built():
        pytest.skip("this llama-cpp-python build has no RPC backend (make bootstrap builds one)")
    with rpc_servers(2, threads=1) as endpoints:
        yield ",".join(endpoints)


def _client(code: str, *args: str, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=1800, env={**os.environ, **env}, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


_SAME_EDIT = """
import json, sys
import numpy as np
from copygram.backends import load
from copygram.errors import GenerationError
from copygram.session import EditSession

doc = open("examples/stats.py").read()
ask = "Fix median: for an even count it must return the mean of the two middle values."
out = {}
for name, servers in (("local", ""), ("rpc", sys.argv[1])):
    backend = load({"model": "smollm2-135m", "n_ctx": 4096, "rpc_servers": servers})
    ids = backend.tokenize(doc)[:200]
    rows = backend.splice_all(ids)
    got = {"describe": backend.describe(), "rows": rows.tobytes().hex()}
    for mode in ("program", "rewrite"):
        session = EditSession(backend, mode=mode, on_damage="keep", max_new_tokens=200)
        try:  # the 135M model may not finish a program: its partial one is compared then
            result = session.edit(doc, ask)
            got[mode] = [result.text, result.program_text, result.raw]
        except GenerationError as exc:
            got[mode] = ["error", str(exc.partial_program)]
    out[name] = got
    backend.close()
print(json.dumps(out))
"""


def test_an_edit_over_rpc_equals_the_single_process_edit(servers: str) -> None:
    out = json.loads(_client(_SAME_EDIT, servers))
    local, rpc = out["local"], out["rpc"]
    assert rpc["describe"]["rpc_servers"] == servers.split(",")
    assert local["describe"]["rpc_servers"] == []
    assert rpc["describe"]["batch_invariant"] is True  # the load probe ran over RPC
    assert rpc["rows"] == local["rows"]
    assert rpc["program"] == local["program"]
    assert rpc["rewrite"] == local["rewrite"]
    assert all(len(text) > 20 for text in local["program"][1:] + local["rewrite"][1:])


def test_the_invariance_suite_passes_over_rpc(servers: str) -> None:
    out = _client("import sys, pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', "
                  "'tests/backends/invariant_suite.py']))",
                  COPYGRAM_INVARIANT_PROCESS="1", COPYGRAM_INVARIANT_RPC=servers)
    assert " passed" in out, out


_UNREACHABLE = """
import sys
from copygram.backends import load
from copygram.errors import BackendError
try:
    load({"model": "smollm2-135m", "n_ctx": 512, "rpc_servers": [sys.argv[1]]})
except BackendError as exc:
    print("refused:", exc)
"""


def test_a_server_that_cannot_be_reached_is_a_backend_error() -> None:
    if not _rpc_built():
        pytest.skip("this llama-cpp-python build has no RPC backend")
    from copygram.bench.serve import free_port

    port = free_port()  # nothing listens there
    out = _client(_UNREACHABLE, f"127.0.0.1:{port}")
    assert f"refused: rpc_servers: cannot reach 127.0.0.1:{port}" in out
    assert "copygram rpc-server" in out


_AFTER = """
import sys
from copygram.backends import load
remote = load({"model": "smollm2-135m", "n_ctx": 512, "rpc_servers": sys.argv[1]})
expected = remote.splice_all(remote.tokenize("print(1)\\n")).tobytes()
remote.close()
local = load({"model": "smollm2-135m", "n_ctx": 512})
print("local:", local.describe().get("rpc_servers"), local.splice_all(
    local.tokenize("print(1)\\n")).tobytes() == expected)
"""


def test_a_local_load_after_an_rpc_one_takes_no_server(servers: str) -> None:
    """llama.cpp's default is every device the process registered: a load that names no server
    must still run here (it would otherwise put layers on the servers)."""
    assert "local: [] True" in _client(_AFTER, servers)


def test_a_cpu_build_with_rpc_is_not_a_gpu_build() -> None:
    """llama_supports_gpu_offload() is true for any build with the RPC backend: the backend asks
    for a local GPU device instead, so a CPU machine keeps its CPU kernels and invariance."""
    from copygram.backends import llamacpp_rpc
    from copygram.backends.llamacpp import LlamaCppBackend
    from copygram.catalog import resolve_model

    if not _rpc_built():
        pytest.skip("this llama-cpp-python build has no RPC backend")
    import llama_cpp

    assert llama_cpp.llama_supports_gpu_offload()
    if llamacpp_rpc.local_gpu():
        pytest.skip("this machine has a GPU")
    backend = LlamaCppBackend(resolve_model("smollm2-135m"), n_ctx=512)
    try:
        assert backend.describe()["device"] == "cpu"
        assert backend.batch_invariant
    finally:
        backend.close()
