"""Near-ties in batched rows are re-decided with a one-token step: batching never flips greedy
output, whatever the batch shapes (llama.cpp's batched rows differ from its one-token steps)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import Copy, EditSession, Gen, GenerationError, Program, render
from copygram.decode.sampling import top2_margin
from copygram.language.lines import split_lines
from copygram.testing import EOS, ScriptedBackend
from tests.strategies import programs, texts

DOCUMENT = "def f(x):\n    return x + 1\n\n\nprint(f(2))\n"
PROGRAM = Program([Copy(1, 1), Gen("    return x + 2\n"), Copy(3, 5)])


class NoisyBatches(ScriptedBackend):
    """A scripted model whose batched rows put every other byte 0.5 above the right one: greedy
    on a batched row picks a wrong allowed token, while a one-token step is exact. Worse than
    any real stack (llama.cpp's rows move the top-2 margin by < 1), so it shows whether the loop
    re-decides every choice it reads from a batched row."""

    def _noisy(self, logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        if not logits.any():
            return logits  # lost: nothing to perturb
        noisy = np.full_like(logits, 10.5)
        noisy[EOS] = logits[EOS]
        return noisy

    def splice(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        logits = super().splice(ids)
        return self._noisy(logits) if len(ids) > 1 else logits

    def splice_all(self, ids: Sequence[int], *,
                   rows: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
        out = super().splice_all(ids, rows=rows)
        if len(ids) > 1:
            out = np.stack([self._noisy(row) for row in out]) if len(out) else out
        return out


CONFIGS: list[dict[str, object]] = [
    {"splice_forced": False, "draft_tokens": 0},
    {"draft_tokens": 0},
    {"draft_tokens": 4, "draft_adaptive": False},
    {},  # the default: drafts sized by the backend's cost curve
]


def test_noisy_batched_rows_flip_greedy_choices_unless_re_decided() -> None:
    noisy = NoisyBatches(DOCUMENT, PROGRAM, step_tolerance=1.0)
    result = EditSession(noisy, on_damage="keep", syntax="lines",
                         mode="program").edit(DOCUMENT, "x")
    assert result.program == PROGRAM and result.stats.tie_steps > 0
    # The same backend with re-decision off writes something else.
    off = EditSession(NoisyBatches(DOCUMENT, PROGRAM), on_damage="keep",
                      syntax="lines", tie_tolerance=0.0, max_new_tokens=200, mode="program")
    try:
        written = off.edit(DOCUMENT, "x").program_text
    except GenerationError as exc:
        written = exc.partial_program or ""
    assert written != render(PROGRAM)


def test_a_session_s_tie_tolerance_overrides_the_backend_s() -> None:
    session = EditSession(NoisyBatches(DOCUMENT, PROGRAM), on_damage="keep",
                          syntax="lines", tie_tolerance=0.75, mode="program")
    assert session.edit(DOCUMENT, "x").program == PROGRAM


def test_sampling_is_never_re_decided() -> None:
    backend = ScriptedBackend(DOCUMENT, PROGRAM, step_tolerance=50.0)
    sampled = EditSession(backend, on_damage="keep",
                          syntax="lines", temperature=0.5, seed=1,
                          mode="program")
    assert sampled.edit(DOCUMENT, "x").stats.tie_steps == 0
    greedy = EditSession(ScriptedBackend(DOCUMENT, PROGRAM, step_tolerance=50.0), on_damage="keep",
                         syntax="lines", mode="program")
    assert greedy.edit(DOCUMENT, "x").stats.tie_steps > 0  # every batched row is "near"


@settings(max_examples=30, deadline=None)
@given(st.data(), texts.filter(bool), st.sampled_from(range(len(CONFIGS))))
def test_any_batch_shapes_give_the_step_by_step_program(data: st.DataObject, document: str,
                                                         config: int) -> None:
    program = data.draw(programs(len(split_lines(document)))).normalized()
    kwargs: dict[str, object] = {"ordered_copies": False, "max_new_tokens": 1 << 15,
                                 "mode": "program", **CONFIGS[config]}
    runs = []
    for _ in range(2):
        backend = NoisyBatches(document, program, step_tolerance=1.0)
        result = EditSession(backend, on_damage="keep",
                             syntax="lines", **kwargs).edit(document, "x")
        runs.append((result.program_text, [call.kind for call in backend.calls]))
    assert runs[0][0] == render(program)
    assert runs[0] == runs[1]  # same input, same forwards, same output


def test_top2_margin_reads_only_allowed_tokens() -> None:
    logits = np.array([5.0, 9.0, 8.5, 1.0], dtype=np.float32)
    assert top2_margin(logits, np.array([True, True, True, True])) == pytest.approx(0.5)
    assert top2_margin(logits, np.array([True, True, False, True])) == pytest.approx(4.0)
    assert top2_margin(logits, np.array([False, True, False, False])) == float("inf")
