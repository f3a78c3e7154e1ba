"""``bench quality``'s primed prefix (``prompt_prefix``): every prompt's document-free part, the
worked example a document's layout picks included, and never a token of the row's document."""

from __future__ import annotations

import pytest

from copygram.bench.data import EditRow
from copygram.bench.quality.approaches import PrefixPrimer, prompt_prefix
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


def _row(before: str) -> EditRow:
    return EditRow("set", "id", before, "Fix the bug.", before)


@pytest.mark.parametrize("document", [PY_BUGGY, JS_BUGGY], ids=["python", "js"])
@pytest.mark.parametrize("name", BUILDERS)
def test_the_prefix_is_the_prompt_up_to_the_instruction(name: str, document: str) -> None:
    backend = ScriptedBackend(document)
    builder = BUILDERS[name]
    row = _row(document)

    def prompt(doc: str, instruction: str) -> str:
        return builder.build(doc, instruction, backend)

    prefix = bytes(prompt_prefix(backend, prompt, row)).decode()
    text = prompt(row.before, row.instruction)
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
