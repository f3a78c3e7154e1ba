"""``copygram bench kernel`` plumbing on a tiny run (no timing assertions: speed is the bench's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copygram.backends import load
from copygram.bench.kernel import load_kernel_curve, measure_kernel, read_results, write_outputs
from copygram.errors import BackendError, ConfigError


@pytest.mark.llamacpp
def test_measure_write_and_read_back(tmp_path: Path) -> None:
    try:
        backend = load({"n_ctx": 128})
    except BackendError as exc:
        pytest.skip(str(exc))
    result = measure_kernel(backend, (2, 6), repeats=1, prompt_tokens=16)
    assert [row.n for row in result.rows] == [2, 6]
    assert all(row.decode_s > 0 and row.splice_s > 0 and row.bare_s > 0 for row in result.rows)
    assert backend.n_tokens == 16  # left at the prompt
    write_outputs(result, tmp_path)
    assert set(json.loads((tmp_path / "kernel.json").read_text())) == {"llamacpp"}
    assert read_results(tmp_path / "kernel.json")["llamacpp"] == result
    assert load_kernel_curve(tmp_path, "llamacpp") == result.curve()
    assert "## llamacpp" in (tmp_path / "kernel.md").read_text()
    assert (tmp_path / "kernel.png").stat().st_size > 0
    with pytest.raises(ConfigError, match="transformers"):
        load_kernel_curve(tmp_path / "kernel.json", "transformers")
    with pytest.raises(ConfigError, match="context"):
        measure_kernel(backend, (200,), repeats=1, prompt_tokens=16)
