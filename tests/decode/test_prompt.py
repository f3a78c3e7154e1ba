"""The prompt: numbered lines, the program as the model sees it in context, the default prompt."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.decode.prompt import DefaultPromptBuilder, number_lines, program_in_context
from copygram.language.lines import split_lines
from copygram.language.ops import Copy
from copygram.language.syntaxes import get_syntax, syntax_names
from tests.strategies import programs, texts

_PREFIX = re.compile(r" *([0-9]+)\| ")


@given(texts)
def test_number_lines_prefixes_every_line_and_keeps_its_text(document: str) -> None:
    numbered = number_lines(document)
    lines = split_lines(document)
    out = split_lines(numbered)
    assert len(out) == len(lines)
    width = len(str(len(lines)))
    for i, (line, shown) in enumerate(zip(lines, out, strict=True), 1):
        match = _PREFIX.match(shown)
        assert match is not None and int(match.group(1)) == i
        assert match.end() == width + 2  # right-aligned numbers: the text starts in one column
        body = shown[match.end() :]
        # Only a last line without an ending gets one, so the next message starts on its own line.
        assert body == line or (i == len(lines) and body == line + "\n")
    assert numbered == "" or numbered.endswith(("\n", "\r"))


@pytest.mark.parametrize("syntax", syntax_names())
@given(data=st.data(), document=texts.filter(bool))
def test_program_in_context_is_each_op_then_its_copied_lines(
    syntax: str, data: st.DataObject, document: str
) -> None:
    lines = split_lines(document)
    program = data.draw(programs(len(lines)))
    shown = program_in_context(program, document, syntax)
    render_op = get_syntax(syntax).render_op
    at = 0
    for op in program:
        rendered = render_op(op)
        assert shown.startswith(rendered, at)
        at += len(rendered)
        if isinstance(op, Copy):
            copied = "".join(lines[op.start - 1 : op.end])
            assert shown.startswith(copied, at)
            at += len(copied)
    assert at == len(shown)


class _JoinChat:
    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        return "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in messages)


@pytest.mark.parametrize("syntax", syntax_names())
@given(document=texts.filter(bool), instruction=texts)
def test_default_prompt_holds_the_instruction_and_every_line_number(
    syntax: str, document: str, instruction: str
) -> None:
    prompt = DefaultPromptBuilder(syntax=syntax).build(document, instruction, _JoinChat())
    task = prompt[prompt.rindex("<user>") :]  # the last user message: this document's task
    assert instruction.strip() in task
    n = len(split_lines(document))
    width = len(str(n))
    for i in range(1, n + 1):
        assert f"{i:>{width}}| " in task
    assert number_lines(document) in task
    # The language is described in the chosen syntax.
    assert get_syntax(syntax).render_op(Copy(1, 2)).split("1")[0] in prompt


def test_the_worked_example_can_be_left_out() -> None:
    document, instruction = "a\nb\n", "Swap the lines."
    full = DefaultPromptBuilder().messages(document, instruction)
    bare = DefaultPromptBuilder(with_example=False).messages(document, instruction)
    assert [m["role"] for m in full] == ["system", "user", "assistant", "user"]
    assert [m["role"] for m in bare] == ["system", "user"]
    assert bare == [full[0], full[-1]]


def test_the_head_blocks_example_is_laid_out_as_the_document_is_indented() -> None:
    # Shown four spaces, Qwen2.5-Coder-1.5B wrote a tab- or two-space-indented Python file's
    # function in four (copygram.language.indent_style): the example takes the file's unit
    # where it indents by tabs or by fewer spaces, and is left as it is otherwise.
    from copygram.decode.prompt import SearchReplacePromptBuilder

    def example(document: str) -> str:
        return SearchReplacePromptBuilder().messages(document, "Fix f.")[2]["content"]

    python = "def f(x):\n    if x:\n        return 1\n    return 2\n"
    assert "\n    return 2 * math.pi * radius" in example(python)
    assert "\n\treturn 2 * math.pi * radius" in example(python.replace("    ", "\t"))
    assert "\n  return 2 * math.pi * radius" in example(python.replace("    ", "  "))
    braced = "function f(x) {\n    if (x) {\n        return 1;\n    }\n    return 2;\n}\n"
    assert "\n  return 2 * PI * radius;" in example(braced)  # four spaces: no fewer than its two
    assert "\n\treturn 2 * PI * radius;" in example(braced.replace("    ", "\t"))
