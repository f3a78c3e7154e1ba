"""``copygram bench quality`` end to end over a scripted model: the data path, the approaches, the
outputs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from copygram.bench.quality import (
    DATA_ENV,
    UNCHANGED,
    data_path,
    parse_approaches,
)
from copygram.bench.quality.command import rows_sink
from copygram.errors import ConfigError
from copygram.language.oracle import oracle
from copygram.session import EditSession
from copygram.testing import SplitPromptBackend
from tests.bench.rows import PY_BUGGY, PY_FIXED, py_row


def test_data_path_and_approaches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(ConfigError, match=f"--data.*{DATA_ENV}"):
        data_path(None)
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    assert data_path(None) == tmp_path.resolve()
    assert data_path(str(tmp_path / "..")) == tmp_path.parent.resolve()
    assert parse_approaches("rewrite, program,rewrite") == ["rewrite", "program"]
    with pytest.raises(ConfigError):
        parse_approaches("program,magic")
    assert parse_approaches("none") == []


def test_command_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    from copygram import cli
    from copygram.bench import quality

    assert cli._BENCHMARKS["quality"][0] == "copygram.bench.quality"
    rows = [py_row(row_id=f"py/{i}") for i in range(2)]
    data = tmp_path / "data"
    data.mkdir()
    with (data / "humanevalfix_docs_python.dev.jsonl").open("w") as handle:
        for row in rows:
            handle.write(json.dumps({"id": row.id, "source": "", "lang": row.lang,
                                     "before": row.before, "instruction": row.instruction,
                                     "after": row.after, "meta": row.meta}) + "\n")
    session = EditSession(SplitPromptBackend(PY_BUGGY, oracle(PY_BUGGY, PY_FIXED)), syntax="lines",
                          on_damage="keep", mode="program")
    configs: list[dict[str, object]] = []

    def from_config(config: dict[str, object]) -> EditSession:
        configs.append(config)
        return session

    monkeypatch.setattr(EditSession, "from_config", from_config)
    monkeypatch.setenv(DATA_ENV, str(data))
    out = tmp_path / "q.json"
    parser = argparse.ArgumentParser()
    quality.add_arguments(parser)
    args = parser.parse_args([
        "--datasets", "humanevalfix_docs_python", "--model", "tiny-model",
        "--json", str(out), "--rows", str(tmp_path / "rows.jsonl"), "--limit", "2"])
    assert quality.run(args) == 0
    assert configs[0]["model"] == "tiny-model" and configs[0]["backend"] == "llamacpp"
    assert configs[0]["mode"] == "program"  # approach "program" whatever the default mode
    written = json.loads(out.read_text())
    assert set(written) == {"run", "results"}
    run = written["run"]
    # The record names what the figures depend on: the command, the model, the CPU, the rows.
    assert run["config"]["model"] == "tiny-model" and isinstance(run["argv"], list)
    assert run["cpu"]["cpus"] >= 1 and run["cpu"]["description"]
    assert run["arguments"]["repeats"] == 1 and run["arguments"]["limit"] == 2
    assert run["datasets"] == ["humanevalfix_docs_python"] and run["routes"] == {}
    assert run["seconds"] >= 0
    entry = written["results"]["humanevalfix_docs_python"]
    assert set(entry) == {"auto", "program", "rewrite", "rewrite-mode", UNCHANGED}
    assert entry["auto"]["rows"] == 2  # the default mode, whichever mode it picks per row
    assert entry["program"]["pass"] == 2 and entry["program"]["rows"] == 2
    assert entry[UNCHANGED]["pass"] == 0 and entry[UNCHANGED]["unchanged"] == 2
    assert entry["rewrite"]["valid"] == 2  # the scripted model writes its program as text
    assert entry["rewrite"]["pass"] == 0
    # Rewrite mode writes exactly what the baseline writes, on every row.
    assert entry["rewrite-mode"]["same_as_rewrite"] == 2
    mode = entry["rewrite-mode"]
    assert mode["decoded_tokens"] + mode["accepted_prediction_tokens"] == (
        entry["rewrite"]["decoded_tokens"])
    lines = (tmp_path / "rows.jsonl").read_text().splitlines()
    assert len(lines) == 10
    captured = capsys.readouterr()
    assert "| humanevalfix_docs_python | program | 2/2 |" in captured.out
    assert "py/1: auto=pass" in captured.err and " program=pass" in captured.err


def test_a_tested_set_without_its_toolchain_is_refused_before_the_model_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from copygram.bench import quality
    from tests.bench.rows import cpp_row

    row = cpp_row()
    (tmp_path / "humanevalfix_docs_cpp.dev.jsonl").write_text(json.dumps(
        {"id": row.id, "source": "", "lang": row.lang, "before": row.before,
         "instruction": row.instruction, "after": row.after, "meta": row.meta}) + "\n")
    real = shutil.which
    monkeypatch.setattr(shutil, "which",
                        lambda name, *a, **k: None if name == "g++" else real(name, *a, **k))
    monkeypatch.setattr(EditSession, "from_config", lambda config: pytest.fail("loaded"))
    parser = argparse.ArgumentParser()
    quality.add_arguments(parser)
    args = parser.parse_args(["--data", str(tmp_path), "--datasets", "humanevalfix_docs_cpp"])
    with pytest.raises(ConfigError, match=r"humanevalfix_docs_cpp: g\+\+ is not installed.*"
                                          r"apt-get install g\+\+.*leave .* out of --datasets"):
        quality.run(args)


def test_a_rows_file_another_run_is_writing_is_refused(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("an earlier run's line\n")
    with rows_sink(rows) as first:
        assert rows.read_text() == ""  # emptied for this run
        first.write('{"row": 1}\n')
        first.flush()
        with pytest.raises(ConfigError, match="another run is writing it"):
            rows_sink(rows)
        first.write('{"row": 2}\n')
    # The refused run neither emptied the file nor wrote into it.
    assert rows.read_text() == '{"row": 1}\n{"row": 2}\n'
    with rows_sink(rows):  # free again once the first run closed it
        pass
