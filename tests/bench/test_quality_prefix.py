"""``bench quality``'s primed prefix (``prompt_prefix``): every prompt's document-free part, the
worked example a document's layout picks included, and never a token of the row's document."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from copygram.bench.data import EditRow
from copygram.bench.quality.approaches import AutoPrompt, PrefixPrimer, prompt_prefix
from copygram.decode.prompt import (
    DefaultPromptBuilder,
    PromptBuilder,
    RewritePromptBuilder,
    SearchReplacePromptBuilder,
)
from copygram.testing import ScriptedBackend
from tests.bench.rows import JS_BUGGY, PY_BUGGY

BUILDERS: dict[str, PromptBuilder] = {
    "rewrite": RewritePromptBuilder(),
    "copy tags": DefaultPromptBuilder(),
    "blocks": SearchReplacePromptBuilder(scope="lines"),
    "head blocks": SearchReplacePromptBuilder(scope="head"),
}
DOCUMENT_FIRST: dict[str, PromptBuilder] = {
    "rewrite": RewritePromptBuilder(order="document_first"),
    "copy tags": DefaultPromptBuilder(order="document_first"),
    "blocks": SearchReplacePromptBuilder(scope="lines", order="document_first"),
    "head blocks": SearchReplacePromptBuilder(scope="head", order="document_first"),
}


def _row(before: str) -> EditRow:
    return EditRow("set", "id", before=before, after=before, instruction="Fix the bug.")


def _primed(builder: PromptBuilder, document: str,
            ) -> tuple[ScriptedBackend, Callable[[str, str], str], EditRow, str, str]:
    """The backend, the prompt function, the row, its prefix and its prompt's text."""
    backend = ScriptedBackend(document)
    row = _row(document)

    def prompt(doc: str, instruction: str) -> str:
        return builder.build(doc, instruction, backend)

    prefix = bytes(prompt_prefix(backend, prompt, row)).decode()
    return backend, prompt, row, prefix, prompt(row.before, row.instruction)


@pytest.mark.parametrize("document", [PY_BUGGY, JS_BUGGY], ids=["python", "js"])
@pytest.mark.parametrize("name", BUILDERS)
def test_the_prefix_is_the_prompt_up_to_the_instruction(name: str, document: str) -> None:
    backend, prompt, row, prefix, text = _primed(BUILDERS[name], document)
    # The byte-level backend: the prefix is the prompt's text up to the instruction's first
    # character, the worked example and the system message included, the document not.
    assert text.startswith(prefix) and prefix.endswith("Instruction: ")
    assert text.index(row.instruction) == len(prefix)
    assert "balance == 0" in document and "balance == 0" not in prefix
    primer = PrefixPrimer(backend, prompt)
    primer(row)
    assert backend.n_tokens == len(prefix)


def test_a_braced_documents_example_is_part_of_its_prefix() -> None:
    backend = ScriptedBackend(PY_BUGGY)
    builder = SearchReplacePromptBuilder(scope="head")

    def prompt(doc: str, instruction: str) -> str:
        return builder.build(doc, instruction, backend)

    python, js = (bytes(prompt_prefix(backend, prompt, _row(doc))).decode()
                  for doc in (PY_BUGGY, JS_BUGGY))
    assert "def perimeter(radius):" in python and "const perimeter = (radius) => {" in js


@pytest.mark.parametrize("document", [PY_BUGGY, JS_BUGGY], ids=["python", "js"])
@pytest.mark.parametrize("name", DOCUMENT_FIRST)
def test_with_the_document_first_the_prefix_stops_before_the_document(name: str,
                                                                      document: str) -> None:
    _, _, row, prefix, text = _primed(DOCUMENT_FIRST[name], document)
    # The document's first line (after its number, where lines are numbered) and everything
    # after it are the row's; the instruction comes after the document.
    assert text.startswith(prefix) and prefix.rstrip("0123456789| ").endswith("Document:\n")
    first_line = row.before.splitlines()[0]
    assert text[len(prefix):].lstrip("0123456789| ").startswith(first_line)
    assert text.index(row.instruction) > text.index("balance == 0") > len(prefix)


@pytest.mark.parametrize("name", DOCUMENT_FIRST)
def test_with_the_document_first_two_instructions_share_the_document(name: str) -> None:
    """What makes a repeated edit warm: the prompts of two instructions on one document part
    after the document, and those of two documents at their first different line."""
    backend = ScriptedBackend(PY_BUGGY)
    first, second = (DOCUMENT_FIRST[name].build(PY_BUGGY, instruction, backend)
                     for instruction in ("Fix the bug.", "Rename below_zero to dips."))
    shared = next(i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b)
    assert first[:shared].endswith("Instruction: ") or first[:shared].endswith(
        "Instruction: ".rstrip())
    assert "balance == 0" in first[:shared]
    ordinary = BUILDERS[name]
    first, second = (ordinary.build(PY_BUGGY, instruction, backend)
                     for instruction in ("Fix the bug.", "Rename below_zero to dips."))
    shared = next(i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b)
    assert "balance == 0" not in first[:shared]


def test_autos_prefix_is_the_prefix_of_the_mode_it_picks_for_the_row() -> None:
    """Auto's probes compare prompts of one mode: the mode picked for the row's own document and
    instruction, even where the probe's placeholder would tip the choice the other way."""
    program, rewrite = BUILDERS["head blocks"], BUILDERS["rewrite"]
    backend = ScriptedBackend(PY_BUGGY)
    row = _row(PY_BUGGY)
    picks: list[tuple[str, str]] = []

    def mode_for(document: str, instruction: str) -> str:
        picks.append((document, instruction))
        return "program" if document == row.before and instruction == row.instruction \
            else "rewrite"

    auto = AutoPrompt(mode_for, lambda d, i: program.build(d, i, backend),
                      lambda d, i: rewrite.build(d, i, backend))
    prefix = bytes(prompt_prefix(backend, auto, row)).decode()
    expected = bytes(prompt_prefix(backend, lambda d, i: program.build(d, i, backend),
                                   row)).decode()
    assert prefix == expected and prefix.endswith("Instruction: ")
    assert picks == [(row.before, row.instruction)]  # decided once, for the row itself
