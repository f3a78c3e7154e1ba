"""``copygram bench device`` on a CPU (issue 44's checks, as a GPU machine runs them): the
default model's architecture cut to two narrow layers, random weights, every check run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from copygram.errors import BackendError

pytestmark = pytest.mark.transformers


def test_the_device_checks_run_on_a_cpu(tmp_path: Path) -> None:
    from copygram.bench.device import DOCUMENTS, check, prepare
    from copygram.testing import default_model_path

    try:
        gguf = default_model_path()
    except BackendError as exc:
        pytest.skip(str(exc))
    folder = prepare(gguf, tmp_path / "arch", tiny=True)
    assert (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file()
    report = check(folder, device="cpu", dtypes=("float32",))
    assert report["device"] == "cpu" and report["machine"] == "cpu"
    got: Any = report["float32"]
    assert got["cache_kept"]["kept"]
    # float32 on a CPU: a splice's rows are one-token steps to rounding (a row that chooses
    # otherwise can only be a near tie).
    splice = got["splice_vs_steps"]
    assert splice["largest_relative_difference"] < 1e-4
    margin = splice["smallest_margin_where_they_differ"]
    assert margin is None or margin < 1e-3
    assert got["crop_and_redecode"]["tries_that_differ"] == 0
    assert got["rewrite_equals_greedy"]["same"] == len(DOCUMENTS)
    timings = got["timings"]
    assert timings["decode_ms"] > 0
    assert [row["n"] for row in timings["kernel"]] == [8, 32, 128, 512]
