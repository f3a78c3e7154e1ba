"""Batch-invariant llama.cpp, on real models: run only in a process of its own, started by
``tests/backends/test_llamacpp_invariant.py`` (ggml reads its tiled-matmul switch once per process,
so a model that ran earlier in the same process would already have fixed it).

What is checked, exactly (no tolerance anywhere):
- any split of a span into forwards, after any prefix, gives the logits one-token steps give;
- rewrite mode writes plain step-by-step greedy decoding's tokens, with no near-tie re-decided;
- program mode (numbered copies and search/replace blocks) writes the step-by-step program.

Two tokenizers: SmolLM2-135M (Q4_1) and Qwen2.5-Coder-0.5B (Q4_K_M, the K-quant type that the
tiled kernel takes), each when it is on this machine. With ``COPYGRAM_INVARIANT_RPC`` (comma-
separated ``host:port``) every layer runs on those ``copygram rpc-server`` processes instead
(``tests/backends/test_llamacpp_rpc.py``): the same checks, over llama.cpp's RPC backend.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copygram.backends.base import Backend
from copygram.catalog import get_entry, model_status
from copygram.session import EditSession
from tests.decode.stepwise import stepwise_program
from tests.decode.test_determinism_real import outcome
from tests.decode.test_rewrite import rewrite
from tests.decode.test_rewrite_real import EDITS, KEPT, plain

pytestmark = [
    pytest.mark.llamacpp,
    pytest.mark.skipif(os.environ.get("COPYGRAM_INVARIANT_PROCESS") != "1",
                       reason="runs in a process of its own (test_llamacpp_invariant.py)"),
]

MODELS = ["smollm2-135m", "qwen2.5-coder-0.5b"]
SPAN = 48  # tokens checked after the prefix
TEXT = ("def median(values):\n    ordered = sorted(values)\n    n = len(ordered)\n"
        "    if n % 2:\n        return ordered[n // 2]\n"
        "    return (ordered[n // 2 - 1] + ordered[n // 2]) / 2\n\n\nprint(median([3, 1, 2]))\n")


@pytest.fixture(scope="module", params=MODELS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    from copygram.backends import load

    if not model_status(get_entry(request.param)).present:
        pytest.skip(f"{request.param} is not on this machine")
    loaded = load({"backend": "llamacpp", "model": request.param, "n_ctx": 2048,
                   "batch_invariant": True,
                   "rpc_servers": os.environ.get("COPYGRAM_INVARIANT_RPC", "")})
    yield loaded
    loaded.close()  # type: ignore[attr-defined]


def stepped_rows(backend: Backend, ids: list[int], prefix: int) -> npt.NDArray[np.float32]:
    backend.truncate(0)
    backend.splice(ids[:prefix])
    return np.stack([backend.decode(token) for token in ids[prefix:]])


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_split_into_forwards_gives_the_one_token_logits(backend: Backend,
                                                            data: st.DataObject) -> None:
    ids = backend.tokenize(TEXT)
    prefix = data.draw(st.sampled_from([1, 7, 30]), label="prefix")
    ids = ids[: prefix + SPAN]
    sizes = data.draw(st.lists(st.integers(1, SPAN), min_size=1, max_size=6), label="sizes")
    expected = stepped_rows(backend, ids, prefix)
    backend.truncate(0)
    backend.splice(ids[:prefix])
    rows, at = [], prefix
    for size in sizes + [SPAN]:  # the last forward takes whatever is left
        chunk = ids[at : at + size]
        if chunk:
            rows.append(backend.splice_all(chunk))
        at += len(chunk)
    assert np.array_equal(np.concatenate(rows), expected)


def test_the_profile_re_decides_no_near_tie(backend: Backend) -> None:
    assert backend.batch_profile.step_tolerance == 0.0


@pytest.mark.parametrize("edit", range(len(EDITS) + 1))
def test_rewrite_mode_writes_plain_greedy_exactly(backend: Backend, edit: int) -> None:
    document, instruction = (EDITS + [(KEPT, "Change f5 to return x + 50.")])[edit]
    session = EditSession(backend, on_damage="keep", mode="rewrite")
    expected = plain(backend, session, document, instruction)
    tokens, result = rewrite(session, document, instruction=instruction)
    assert tokens == expected
    assert result.stats.tie_steps == 0
    again, _ = rewrite(session, document, instruction=instruction)  # the prompt now cached
    assert again == expected


def program_text(session: EditSession, document: str, instruction: str) -> str:
    return session.edit(document, instruction).program_text


@pytest.mark.parametrize("edit", range(len(EDITS)))
def test_program_mode_writes_the_step_by_step_program_exactly(backend: Backend,
                                                              edit: int) -> None:
    document, instruction = EDITS[edit]
    expected = outcome(lambda: stepwise_program(backend, document, instruction,
                                                max_new_tokens=160))
    for draft_tokens in (0, None):
        session = EditSession(backend, on_damage="keep", syntax="lines", max_new_tokens=160,
                              draft_tokens=draft_tokens, mode="program")
        got = outcome(functools.partial(program_text, session, document, instruction))
        if got.startswith("error: ") and expected.startswith("error: "):
            # The session's repeat guard may stop a looping model before the budget that ends
            # the reference: the same tokens up to where the shorter one stops.
            assert expected.startswith(got) or got.startswith(expected), (got, expected)
        else:
            assert got == expected
