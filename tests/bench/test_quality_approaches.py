"""``bench quality``'s approaches over scripted models: fence stripping, the rewrite baseline
(plain greedy decoding), rewrite mode and program mode."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from copygram.bench.data import EditRow
from copygram.bench.quality import (
    RewriteBaseline,
    evaluate_row,
    extract_document,
    markdown_table,
    pool,
    program_approach,
    rewrite_budget,
    rewrite_decode,
    rewrite_mode_approach,
)
from copygram.decode.prompt import RewritePromptBuilder
from copygram.errors import GenerationError
from copygram.language.oracle import oracle
from copygram.session import EditSession
from copygram.testing import ScriptedBackend, SplitPromptBackend, TwoMindsBackend
from tests.bench.rows import AFTER, BEFORE, QUIX_BUGGY, QUIX_FIXED, QUIX_TESTS, py_row

_DOC = st.text(max_size=200).map(
    lambda t: t if not t or t.endswith("\n") else t + "\n")
_TAG = st.sampled_from(["", "python", "py", "js", "javascript", "c++", "python3 "])


@given(_DOC, _TAG, st.sampled_from(["", "\n", "\n\n", "  \n", "\nThat fixes the bug.\n"]),
       st.sampled_from(["```", "````", "~~~"]))
def test_stripping_a_fenced_text_gives_it_back(text: str, tag: str, tail: str,
                                               marker: str) -> None:
    fenced = f"{marker}{tag}\n{text}{marker}{tail}"
    assert extract_document(fenced) == text
    assert extract_document("\n" + fenced) == text


@given(_DOC)
def test_unfenced_text_is_kept(text: str) -> None:
    first = text.lstrip().split("\n", 1)[0]
    if not first.startswith(("```", "~~~")):
        assert extract_document(text) == text


def test_fence_examples() -> None:
    assert extract_document("```python\ndef f():\n    pass\n") == "def f():\n    pass\n"
    assert extract_document("```\n```") == ""
    assert extract_document("```py\nx = 1\n```\n") == "x = 1\n"
    # The document's final line break survives a model that stops right after the last character.
    assert extract_document("x = 1", "x = 0\n") == "x = 1\n"
    assert extract_document("x = 1", "x = 0\r\n") == "x = 1\r\n"
    assert extract_document("x = 1", "x = 0") == "x = 1"
    assert extract_document("", "x = 0\n") == ""
    assert extract_document("x = '```'\n") == "x = '```'\n"
    assert extract_document("Here it is:\n```\nx\n```\n") == "Here it is:\n```\nx\n```\n"


def test_a_lead_in_before_the_fence_goes_when_the_document_does_not_have_it() -> None:
    reply = "Here is the fixed code:\n\n```python\nx = 1\n```\nIt sets x.\n"
    assert extract_document(reply, "x = 0\n") == "x = 1\n"
    # A fence never closed (the budget ran out) still loses the lead-in and its opening line.
    assert extract_document("Sure.\n```\nx = 1\n", "x = 0\n") == "x = 1\n"
    # A Markdown file rewritten as it stands keeps its own code blocks: its heading is a line of
    # the document, so the text before the fence is the file's.
    readme = "# Title\n\nRun:\n```sh\nmake\n```\n"
    assert extract_document(readme.replace("make", "make test"), readme) == (
        readme.replace("make", "make test"))
    # A fence opening must be a whole line: a backtick run inside a line is text.
    assert extract_document("print('```')\n", "x\n") == "print('```')\n"


@given(_DOC, _DOC, st.sampled_from(["Here is the fixed file:\n", "Sure!\n\n", "The fix:\n  \n"]))
def test_a_lead_in_that_is_not_in_the_document_never_reaches_the_file(
        text: str, document: str, lead_in: str) -> None:
    assume(lead_in.split("\n")[0] not in {line.strip() for line in document.splitlines()})
    assert extract_document(f"{lead_in}```python\n{text}```\n", document) == (
        extract_document(f"```python\n{text}```\n", document))
    inner = "# doc\n```\ncode\n```\nend\n"
    assert extract_document(f"```markdown\n{inner}```\n") == inner


# --- the rewrite baseline -----------------------------------------------------------------------


def reply_backend(reply: str, context_length: int = 1 << 20) -> ScriptedBackend:
    """A fake model over bytes (plus EOS) that answers every prompt with ``reply``, byte by
    byte, then EOS; every forward is recorded. The prompt may come in more than one forward."""
    return SplitPromptBackend(reply=reply, context_length=context_length)


def forwards(backend: ScriptedBackend) -> list[tuple[str, int]]:
    """The backend's forwards so far, as ``(kind, n_tokens)``."""
    return [(call.kind, len(call.ids)) for call in backend.calls]




def test_rewrite_decode_is_plain_greedy_and_strips_the_fence() -> None:
    reply = f"```python\n{AFTER}```"
    backend = reply_backend(reply)
    out = rewrite_decode(backend, BEFORE, "Fix area.")
    assert out.text == AFTER and out.raw == reply and out.stop == "eos"
    assert out.decoded_tokens == len(reply.encode())
    prompt = backend.tokenize(RewritePromptBuilder().build(BEFORE, "Fix area.", backend),
                              special=True)
    assert out.prompt_tokens == len(prompt)
    assert backend.cached_ids[:len(prompt)] == prompt
    # Plain greedy is one token per forward, the prompt's last token too: a batched row is not
    # bit-equal to a one-token step on llama.cpp, so the baseline must not read its first token
    # from the prompt's splice. The prompt but its last token in one splice, the last token
    # alone, then one decode step per output token (the last one's logits say EOS).
    assert forwards(backend) == ([("splice", len(prompt) - 1), ("decode", 1)]
                                 + [("decode", 1)] * len(reply.encode()))
    assert backend.calls[1].ids == (prompt[-1],)
    assert out.forwards == len(reply.encode())  # the steps after the prompt
    assert out.budget == rewrite_budget(len(BEFORE.encode()))

    again = rewrite_decode(backend, BEFORE, "Fix area.")  # the cached prompt prefix is reused
    assert again.text == AFTER
    assert forwards(backend)[len(reply) + 2 : len(reply) + 4] == [("splice", 1), ("decode", 1)]


def test_rewrite_decode_ends_at_the_fence_that_closes_the_file() -> None:
    # As rewrite mode's loop ends (copygram.decode.rewrite.file_end): the model's explanation
    # after its closing fence is not decoded, so it cannot run the budget out.
    closed = f"```python\n{AFTER}```\n"
    out = rewrite_decode(reply_backend(closed + "\nThis fixes area. " * 100), BEFORE, "Fix area.")
    assert (out.text, out.raw, out.stop) == (AFTER, closed, "stop")
    assert out.decoded_tokens == len(closed.encode())


def test_rewrite_decode_budget_and_context() -> None:
    backend = reply_backend("x" * 500)
    out = rewrite_decode(backend, BEFORE, "Fix area.", max_new_tokens=10)
    assert out.stop == "budget" and out.decoded_tokens == 10 and out.raw == "x" * 10
    # the prompt's last token, then a step after each output token but the last
    assert sum(1 for kind, _ in forwards(backend) if kind == "decode") == 1 + 9
    default = rewrite_decode(reply_backend("x" * 500), BEFORE, "Fix area.")
    assert default.stop == "budget" and default.decoded_tokens == rewrite_budget(len(BEFORE))

    prompt_len = len(backend.tokenize(RewritePromptBuilder().build(BEFORE, "Fix area.", backend)))
    tight = reply_backend("x" * 500, context_length=prompt_len + 5)
    out = rewrite_decode(tight, BEFORE, "Fix area.")
    assert out.stop == "context" and tight.n_tokens <= prompt_len + 5

    too_small = reply_backend(AFTER, context_length=10)
    text, _, error = RewriteBaseline(too_small)(py_row())
    assert text is None and error is not None and error.startswith("DocumentError")


def test_rewrite_baseline_as_an_approach() -> None:
    row = EditRow("quixbugs_python", "quix/gcd", QUIX_BUGGY, QUIX_FIXED,
                  instruction="Fix the bug in gcd.", lang="python",
                  meta={"tests": QUIX_TESTS})
    quality, (_, stats, _) = evaluate_row(row, "rewrite",
                                          RewriteBaseline(reply_backend(f"```\n{QUIX_FIXED}```")))
    assert quality.valid and quality.passed and quality.exact
    assert quality.decoded_tokens == stats["decoded_tokens"] == len(QUIX_FIXED) + 7
    assert stats["raw"] == f"```\n{QUIX_FIXED}```" and stats["stop"] == "eos"
    # Generation: every one-token step, the prompt's last token first; the rest is the prompt's.
    assert stats["gen_s"] == stats["decode_s"] == quality.gen_s
    assert 0 < quality.gen_s + stats["prefill_s"] <= quality.wall_s  # type: ignore[operator]


def test_rewrite_mode_as_an_approach() -> None:
    row = py_row()
    reply = f"```python\n{row.after}```"
    session = EditSession(ScriptedBackend(reply=reply), mode="rewrite")
    quality, (text, stats, error) = evaluate_row(row, "rewrite-mode",
                                                 rewrite_mode_approach(session))
    assert text == row.after and error is None and quality.passed and quality.exact
    assert stats["raw"] == reply == rewrite_decode(reply_backend(reply), row.before,
                                                   row.instruction).raw
    assert quality.accepted_prediction_tokens == stats["accepted_prediction_tokens"]
    assert quality.forwards == stats["forwards"]
    assert quality.accepted_prediction_tokens > 0 and quality.forwards < len(reply)
    assert quality.gen_s is not None and quality.gen_s == stats["gen_s"]
    assert 0 < quality.gen_s <= quality.wall_s
    # The kernel curve's bound: the reply's tokens, its unchanged lines at the batched price.
    assert quality.output_tokens == stats["output_tokens"] == len(session.backend.tokenize(reply))
    assert quality.bound_steps is not None and quality.bound_steps == stats["bound_steps"]
    assert 0 < quality.bound_steps < quality.output_tokens
    tight = EditSession(ScriptedBackend(reply=reply, context_length=50), mode="rewrite")
    text, _, error = rewrite_mode_approach(tight)(row)
    assert text is None and error is not None and error.startswith("DocumentError")
    with pytest.raises(ValueError, match="rewrite mode"):
        rewrite_mode_approach(EditSession(ScriptedBackend(), syntax="lines", mode="program"))
    table = markdown_table(pool([quality]))
    assert "| accepted prediction | rejected prediction | same as rewrite |" in table


# --- program mode and the command ---------------------------------------------------------------


def test_program_approach_valid_and_invalid() -> None:
    row = py_row()
    session = EditSession(ScriptedBackend(row.before, oracle(row.before, row.after)), syntax="lines",
                          mode="program")
    quality, (text, stats, error) = evaluate_row(row, "program", program_approach(session))
    assert text == row.after and error is None and quality.passed and quality.exact
    assert isinstance(stats["program"], str) and quality.decoded_tokens > 0
    assert quality.gen_s is not None and 0 < quality.gen_s <= quality.wall_s

    class Failing:
        def edit(self, document: str, instruction: str) -> None:
            raise GenerationError("the edit ran out of context", partial_program="<copy")

    text, stats, error = program_approach(Failing())(row)  # type: ignore[arg-type]
    assert text is None and stats["partial_program"] == "<copy"
    assert error == "GenerationError: the edit ran out of context"


def test_program_approach_counts_the_blocks_written_again() -> None:
    from tests.decode.test_unchanged import DOCUMENT, FIX, NO_OP

    row = EditRow("d", "r", DOCUMENT, DOCUMENT.replace("pi * r\n", "pi * r * r\n"), "Fix area.")
    session = EditSession(TwoMindsBackend(DOCUMENT, reply=NO_OP, second=FIX), mode="program")
    quality, (_, stats, _) = evaluate_row(row, "program", program_approach(session))
    assert quality.exact and stats["unchanged_retries"] == quality.unchanged_retries == 1
    assert pool([quality, quality])["d"]["program"]["unchanged_retries"] == 2


def test_program_approach_records_a_damaged_edit_redone_and_times_both() -> None:
    from copygram.decode.prompt import REWRITE_SYSTEM
    from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
    from copygram.testing import PromptedBackend

    row = py_row()
    head = next(line for line in row.before.splitlines(keepends=True) if line.startswith("def "))
    # The function written twice: a duplicated definition the session redoes in rewrite mode.
    twice = (BLOCK_OPEN + head + DIVIDER + head + "    pass\n\n\n" + head + "    pass\n"
             + BLOCK_CLOSE)
    backend = PromptedBackend(row.before, replies=((REWRITE_SYSTEM, row.after), ("", twice)))
    quality, (text, stats, _) = evaluate_row(row, "program", program_approach(
        EditSession(backend, mode="program")))
    assert text == row.after and quality.passed
    assert quality.redone == stats["redone"] == "duplicate" and quality.damage == ""
    assert stats["redone_program"] == twice
    assert pool([quality])["humanevalfix_docs_python"]["program"]["redone"] == 1


def test_a_primed_row_starts_with_the_approachs_fixed_prefix_and_no_document() -> None:
    from copygram.bench.quality.approaches import PrefixPrimer

    backend = ScriptedBackend(BEFORE, reply=AFTER)
    session = EditSession(backend, mode="rewrite")
    row = py_row(BEFORE, AFTER)
    backend.splice(backend.tokenize("another approach's prompt, with the document " + BEFORE))
    PrefixPrimer(backend, session.prompt)(row)
    cached = backend.detokenize(backend.cached_ids)
    full = session.prompt(row.before, row.instruction)
    assert cached and full.startswith(cached)
    assert row.before not in cached and row.instruction not in cached
    # What the row adds is its own instruction and document, and the template's end.
    assert full[len(cached):].startswith(row.instruction)
