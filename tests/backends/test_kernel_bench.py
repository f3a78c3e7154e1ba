"""``copygram bench kernel`` plumbing on a tiny run (no timing assertions: speed is the bench's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copygram.backends import load
from copygram.bench.kernel import (
    load_kernel_curve,
    measure_kernel,
    read_results,
    render_markdown,
    text_token_ids,
    write_outputs,
)
from copygram.errors import BackendError, ConfigError
from copygram.testing import EOS, ScriptedBackend


@pytest.mark.llamacpp
def test_measure_write_and_read_back(tmp_path: Path) -> None:
    try:
        backend = load({"n_ctx": 128})
    except BackendError as exc:
        pytest.skip(str(exc))
    result = measure_kernel(backend, (2, 6), repeats=1, prompt_tokens=16)
    assert [row.n for row in result.rows] == [2, 6]
    assert all(row.decode_s > 0 and row.splice_s > 0 for row in result.rows)
    assert all(row.verify_s is not None and row.verify_s > 0 for row in result.rows)
    assert all(row.speedup == row.decode_s / row.splice_s for row in result.rows)
    assert backend.n_tokens == 16  # left at the prompt
    write_outputs(result, tmp_path)
    assert set(json.loads((tmp_path / "kernel.json").read_text())) == {"llamacpp"}
    assert "AVX2" in result.build.split() or "NEON" in result.build.split()  # what it ran on
    assert read_results(tmp_path / "kernel.json")["llamacpp"] == result
    assert load_kernel_curve(tmp_path, "llamacpp") == result.curve()
    assert "## llamacpp" in (tmp_path / "kernel.md").read_text()
    assert (tmp_path / "kernel.png").stat().st_size > 0
    with pytest.raises(ConfigError, match="transformers"):
        load_kernel_curve(tmp_path / "kernel.json", "transformers")
    with pytest.raises(ConfigError, match="context"):
        measure_kernel(backend, (200,), repeats=1, prompt_tokens=16)


def test_random_spans_are_ordinary_text_tokens() -> None:
    backend = ScriptedBackend()  # ids 0..255 are bytes, 256 (EOS) has none
    assert text_token_ids(backend).tolist() == list(range(256))
    result = measure_kernel(backend, (3,), repeats=1, prompt_tokens=5)
    assert [row.n for row in result.rows] == [3]
    assert EOS not in backend.cached_ids and backend.n_tokens == 5
    # Each repeat: 3 decode steps, a splice and a verify forward (every row's logits) of the
    # same 3 tokens, each from the prompt.
    kinds = [call.kind for call in backend.calls if len(call.ids) == 3]
    assert kinds[-2:] == ["splice", "splice_all"]


def test_results_written_before_the_bare_call_column_was_dropped_still_read(
        tmp_path: Path) -> None:
    row = {"n": 8, "decode_s": 0.4, "splice_s": 0.1, "bare_s": 0.09, "speedup": 4.0,
           "overhead": 0.1, "peak_rss_mib": 200.0}
    old = {"llamacpp": {"backend": "llamacpp", "model": "m.gguf", "prompt_tokens": 200,
                        "repeats": 3, "threads": 2, "machine": "x", "rows": [row]}}
    (tmp_path / "kernel.json").write_text(json.dumps(old))
    assert load_kernel_curve(tmp_path, "llamacpp") == {8: 4.0}
    assert read_results(tmp_path / "kernel.json")["llamacpp"].build == ""  # not recorded then
    assert read_results(tmp_path / "kernel.json")["llamacpp"].rows[0].verify_s is None
    assert "| 8 | 400.0 | 100.0 | **4.0x** | 80 | - |" in render_markdown(
        read_results(tmp_path / "kernel.json"))
