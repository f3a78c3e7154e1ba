"""The README's Python example runs as written against the current API (a scripted model stands
in for Qwen2.5-Coder-1.5B, answering each prompt as that model does on the demo: the demo itself
runs the real model, `make demo`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import copygram.backends
from copygram.decode.events import EditResult
from copygram.decode.prompt import HEAD_SYSTEM, REWRITE_SYSTEM, SYSTEM, program_in_context
from copygram.language.formats import render
from copygram.language.oracle import oracle
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.testing import PromptedBackend
from tests.test_examples import BUGGY, FIXED

ROOT = Path(__file__).resolve().parent.parent


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert match is not None, "the README has no Python example"
    return match.group(1)


def test_the_readme_example_runs(monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    document = (ROOT / "examples" / "stats.py").read_text(encoding="utf-8")
    fixed = document.replace(BUGGY, FIXED)
    median = fixed[fixed.index("def median"):fixed.index("\n\n\ndef variance") + 1]
    head_block = BLOCK_OPEN + "def median(values):\n" + DIVIDER + median + BLOCK_CLOSE
    program = oracle(document, fixed)
    tags = render(program, "lines")
    # Each prompt's own line: the head-block prompt, the rewrite prompt, the copy-tag prompt.
    replies = ((HEAD_SYSTEM.splitlines()[1], head_block),
               (REWRITE_SYSTEM[:60], "```python\n" + fixed + "```"),
               # A scripted model's reply holds what the cache gets: each copy's lines after it.
               (SYSTEM.splitlines()[0], program_in_context(program, document, "lines")))
    loaded: list[object] = []

    def load(config: object) -> PromptedBackend:
        loaded.append(config)
        return PromptedBackend(document, replies=replies)

    monkeypatch.setattr(copygram.backends, "load", load)
    # The fake model's tokens are bytes: examples/stats.py is 984 of them, 246 of Qwen2.5's,
    # under focus_tokens (640: no view) where the README's model reads it.
    from copygram.config import SessionConfig

    defaults = SessionConfig.__init__.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "focus_tokens", 1 << 16)
    monkeypatch.chdir(ROOT)
    scope: dict[str, object] = {}
    exec(compile(readme_example(), "README.md", "exec"), scope)  # noqa: S102 - our own README
    assert len(loaded) == 1  # one model, shared by the derived and the tag sessions
    edit, result = scope["edit"], scope["result"]
    assert isinstance(edit, EditResult) and isinstance(result, EditResult)
    assert edit.mode == "program" and edit.text == fixed
    assert result.mode == "rewrite" and result.text == fixed
    out = capsys.readouterr().out
    assert head_block in out and tags in out
