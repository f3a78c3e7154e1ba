"""``bench quality --program-config``: program-mode routes side by side on one loaded model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from copygram import Copy, EditSession, Gen, Program
from copygram.bench.quality import DATA_ENV
from copygram.errors import ConfigError
from copygram.testing import ScriptedBackend, SplitPromptBackend
from tests.bench.rows import AFTER, BEFORE, quix_row

FIX = Program([Copy(1, 1), Gen("    return w * h\n")])


def run_with_routes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                    configs: dict[str, str]) -> dict[str, dict[str, dict[str, object]]]:
    from copygram.bench import quality

    data = tmp_path / "data"
    data.mkdir()
    row = quix_row()
    (data / "quixbugs_python.dev.jsonl").write_text(json.dumps({
        "id": row.id, "source": "", "lang": "python", "before": BEFORE,
        "instruction": "Fix area.", "after": AFTER, "meta": {}}) + "\n")
    backend = ScriptedBackend(BEFORE, FIX)
    loaded: list[object] = []
    real = EditSession.from_config

    def from_config(config: object, *, backend: object = None) -> EditSession:
        if backend is None:  # the run's model: loaded once
            loaded.append(config)
            return EditSession(SplitPromptBackend(BEFORE, FIX), syntax="lines", mode="program")
        return real(config, backend=backend)  # type: ignore[arg-type]

    monkeypatch.setattr(EditSession, "from_config", from_config)
    monkeypatch.setenv(DATA_ENV, str(data))
    args = ["--datasets", "quixbugs_python", "--approaches", "program"]
    for stem, text in configs.items():
        (tmp_path / f"{stem}.toml").write_text(text)
        args += ["--program-config", str(tmp_path / f"{stem}.toml")]
    out = tmp_path / "q.json"
    parser = argparse.ArgumentParser()
    quality.add_arguments(parser)
    assert quality.run(parser.parse_args([*args, "--json", str(out)])) == 0
    assert len(loaded) == 1 and backend.calls == []
    written = json.loads(out.read_text())
    # Each route's configuration text travels with the figures.
    assert written["run"]["routes"] == {f"program:{stem}": text for stem, text in configs.items()}
    result: dict[str, dict[str, dict[str, object]]] = written["results"]
    return result


def test_each_config_is_a_program_route_on_the_shared_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pooled = run_with_routes(tmp_path, monkeypatch, {
        "unordered": '[route]\nsyntax = "lines"\nordered_copies = false\n',
        "compact": '[route]\nsyntax = "compact"\n'})
    routes = pooled["quixbugs_python"]
    assert list(routes) == ["program", "program:unordered", "program:compact", "copy_unchanged"]
    # The scripted model writes the fix in the paper's syntax: the compact route cannot follow it.
    assert routes["program"]["exact"] == routes["program:unordered"]["exact"] == 1
    assert routes["program:compact"]["exact"] == 0


def test_a_route_cannot_name_backend_keys(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="model do not apply"):
        run_with_routes(tmp_path, monkeypatch, {"other": 'model = "qwen2.5-coder-1.5b"\n'})
