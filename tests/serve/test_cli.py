"""The ``copygram serve`` command without a model: its registration, its checks, the names it
serves under, and the library's independence from starlette and uvicorn."""

from __future__ import annotations

import subprocess
import sys

import pytest

from copygram.cli import build_parser, main
from copygram.serve.cli import model_names


def fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)


def test_the_library_and_the_command_line_import_no_server_stack() -> None:
    out = fresh("import sys, copygram, copygram.cli, copygram.serve.cli; "
                "copygram.cli.build_parser(); "
                "print([m for m in ('starlette', 'uvicorn') if m in sys.modules])")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_without_the_extra_the_error_names_it() -> None:
    out = fresh("import sys; sys.modules['starlette'] = None; "
                "import copygram.serve.app")
    assert out.returncode != 0
    assert "pip install 'copygram[serve]'" in out.stderr


def test_the_command_is_registered_with_its_defaults() -> None:
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.api_key, args.model) == ("127.0.0.1", 8000, None, None)
    assert args.replicas == 1
    assert args._module == "copygram.serve.cli"


@pytest.mark.parametrize("argv", [["--port", "0"], ["--timeout", "0"], ["--max-waiting", "-1"],
                                  ["--config", "/nonexistent.toml"],
                                  ["--model", "no-such-model"], ["--replicas", "0"]])
def test_bad_arguments_fail_before_any_model_loads(argv: list[str],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", *argv]) == 1
    assert "copygram: error:" in capsys.readouterr().err


def test_the_names_a_model_is_served_under() -> None:
    assert model_names("default", True) == ("smollm2-135m", ["default"])
    assert model_names("smollm2-135m", True) == ("smollm2-135m", ["default"])
    assert model_names("/models/q.gguf", False) == ("q.gguf", ["/models/q.gguf"])
