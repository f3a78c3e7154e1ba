"""``cost_curve``: a forward cost curve measured with ``copygram bench kernel`` replaces the
built-in one, read once at load (the file ``bench kernel`` writes is the input), its errors say
how to write a good file, and the loaded backend prices forwards on it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.backends import load
from copygram.backends.base import TRANSFORMERS_CPU
from copygram.backends.curves import read_cost_curve, with_costs
from copygram.bench.kernel import KernelResult, KernelRow
from copygram.config import BackendConfig, parse_config
from copygram.errors import BackendError, ConfigError
from copygram.testing import default_model_path

MODEL = "SmolLM2-135M-Instruct.Q4_1.gguf"


def kernel_json(path: Path, rows: list[tuple[int, float, float]], backend: str = "transformers",
                model: str = MODEL) -> Path:
    """``path`` written as ``copygram bench kernel`` writes kernel.json (keyed by backend)."""
    result = KernelResult(backend, model, 500, 3, 2, "x86_64, 2 CPUs, Linux",
                          tuple(KernelRow(n, d, s, d / s, 1000.0) for n, d, s in rows))
    path.write_text(json.dumps({backend: result.to_json()}, indent=2) + "\n", encoding="utf-8")
    return path


# n decode steps of 0.1 s each against one forward of n tokens (a dip at 32: noise).
ROWS = [(2, 0.2, 0.104), (8, 0.8, 0.13), (16, 1.6, 0.2), (32, 3.2, 0.18), (64, 6.4, 0.5)]


def test_the_curve_is_splice_over_a_decode_step_from_one_step_and_never_falls(
        tmp_path: Path) -> None:
    costs = read_cost_curve(kernel_json(tmp_path / "kernel.json", ROWS), "transformers", MODEL)
    assert [n for n, _ in costs] == [1, 2, 8, 16, 32, 64]
    assert [c for _, c in costs] == pytest.approx([1.0, 1.04, 1.3, 2.0, 2.0, 5.0])
    profile = with_costs(TRANSFORMERS_CPU, costs)
    assert profile.costs == costs and profile.step_tolerance == TRANSFORMERS_CPU.step_tolerance
    assert profile.cost(24) == pytest.approx(2.0) and profile.cost(128) == pytest.approx(11.0)
    assert with_costs(TRANSFORMERS_CPU, None) is TRANSFORMERS_CPU


def test_a_one_token_row_is_the_unit_and_read_past(tmp_path: Path) -> None:
    """``bench kernel --n 1,8,...`` writes a row for one token (its forward against one decode
    step, the unit itself): the file is read, that row left out; a row of no tokens is refused."""
    path = kernel_json(tmp_path / "kernel.json", [(1, 0.1, 0.098), *ROWS])
    assert read_cost_curve(path, "transformers", MODEL) == read_cost_curve(
        kernel_json(tmp_path / "without.json", ROWS), "transformers", MODEL)
    with pytest.raises(ConfigError, match="n >= 1"):
        read_cost_curve(kernel_json(tmp_path / "zero.json", [(0, 0.1, 0.1), *ROWS]),
                        "transformers", MODEL)


def test_the_verify_forward_prices_drafts_where_the_file_measured_it(tmp_path: Path) -> None:
    """A draft's forward keeps every row's logits: where ``bench kernel`` timed that forward too
    (``verify_s``), the curve is made of it; rows without it keep the splice."""
    path = kernel_json(tmp_path / "kernel.json", ROWS)
    data = json.loads(path.read_text(encoding="utf-8"))
    for row in data["transformers"]["rows"]:
        if row["n"] in (16, 64):
            row["verify_s"] = row["splice_s"] * 1.25
    path.write_text(json.dumps(data), encoding="utf-8")
    costs = dict(read_cost_curve(path, "transformers", MODEL))
    assert costs[16] == pytest.approx(2.5) and costs[64] == pytest.approx(6.25)
    assert costs[8] == pytest.approx(1.3)  # no verify_s: the splice
    data["transformers"]["rows"][0]["verify_s"] = "fast"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="not bench kernel rows"):
        read_cost_curve(path, "transformers", MODEL)


@given(st.lists(st.tuples(st.integers(2, 512), st.floats(1e-3, 10.0), st.floats(1e-3, 10.0)),
                min_size=1, max_size=8))
def test_any_measurement_gives_a_valid_profile(rows: list[tuple[int, float, float]]) -> None:
    data = {"transformers": {"model": MODEL, "rows": [
        {"n": n, "decode_s": d, "splice_s": s} for n, d, s in rows]}}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        costs = read_cost_curve(path, "transformers", MODEL)
    profile = with_costs(TRANSFORMERS_CPU, costs)  # BatchProfile checks its own invariants
    assert profile.costs[0] == (1, 1.0) and {n for n, _ in profile.costs[1:]} == {
        n for n, _, _ in rows}


def test_bad_files_are_config_errors_that_say_how_to_write_one(tmp_path: Path) -> None:
    def error(path: Path, backend: str = "transformers") -> str:
        with pytest.raises(ConfigError) as err:
            read_cost_curve(path, backend, MODEL)
        assert "copygram bench kernel" in str(err.value)
        return str(err.value)

    assert "no such file" in error(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert "cannot be read as JSON" in error(tmp_path / "bad.json")
    good = kernel_json(tmp_path / "kernel.json", ROWS)
    assert "no measurement for backend 'llamacpp'" in error(good, "llamacpp")
    other = kernel_json(tmp_path / "other.json", ROWS, model="qwen2.5-coder-1.5b.gguf")
    assert "measured with qwen2.5-coder-1.5b.gguf" in error(other)
    assert "no rows of 2 tokens or more" in error(kernel_json(tmp_path / "one.json",
                                                                [(1, 0.1, 0.1)]))
    for rows in ([(0, 0.1, 0.1)], [(8, 0.0, 0.1)], [(8, float("nan"), 0.1)]):
        assert "not bench kernel rows" in error(kernel_json(tmp_path / "rows.json", rows))
    assert "has no rows" in error(kernel_json(tmp_path / "empty.json", []))


def test_the_config_key_names_an_existing_file(tmp_path: Path) -> None:
    path = kernel_json(tmp_path / "kernel.json", ROWS)
    config = parse_config({"backend": "transformers", "route": {"cost_curve": str(path)}})
    assert config.backend.cost_curve == str(path)
    assert parse_config(config.to_dict()) == config
    assert BackendConfig().cost_curve is None
    with pytest.raises(ConfigError, match="no such file.*copygram bench kernel"):
        BackendConfig(cost_curve=str(tmp_path / "missing.json"))
    with pytest.raises(ConfigError, match="cost_curve"):
        BackendConfig(cost_curve=3)  # type: ignore[arg-type]


@pytest.mark.llamacpp
def test_a_loaded_backend_prices_forwards_on_the_measured_curve(tmp_path: Path) -> None:
    try:
        model = default_model_path()
    except BackendError as exc:
        pytest.skip(str(exc))
    default_profile = load({"backend": "llamacpp", "model": str(model), "n_ctx": 256}
                           ).batch_profile
    path = kernel_json(tmp_path / "kernel.json", ROWS, backend="llamacpp", model=model.name)
    backend = load({"backend": "llamacpp", "model": str(model), "n_ctx": 256,
                    "cost_curve": str(path)})
    assert backend.batch_profile.costs == read_cost_curve(path, "llamacpp", model.name)
    assert backend.batch_profile.step_tolerance == default_profile.step_tolerance
    assert backend.batch_profile.costs != default_profile.costs
    wrong = kernel_json(tmp_path / "wrong.json", ROWS, backend="llamacpp", model="other.gguf")
    with pytest.raises(ConfigError, match="measured with other.gguf"):
        load({"backend": "llamacpp", "model": str(model), "cost_curve": str(wrong)})
