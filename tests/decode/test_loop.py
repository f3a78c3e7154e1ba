"""The decode loop (through the session facade), driven by a scripted byte-level model and the
real llguidance constraint."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import (
    ConfigError,
    Copy,
    CopyEvent,
    DocumentError,
    DoneEvent,
    Gen,
    GenerationError,
    Program,
    TokenEvent,
    parse,
    render,
    resolve,
)
from copygram.bench.replay import replay
from copygram.decode.prompt import program_in_context
from copygram.language.lines import split_lines
from copygram.language.syntaxes import escape_gen_text
from copygram.session import EditSession
from copygram.testing import EOS, ScriptedBackend
from tests.strategies import programs, texts

DOCUMENT = "def f(x):\n    return x + 1\n\n\nprint(f(2))\r\nend"
PROGRAM = Program([Copy(1, 1), Gen("    return x + 2\n"), Copy(3, 6), Gen("# done\n"), Copy(2, 2)])


FIXED: dict[str, object] = {"draft_adaptive": False}  # draft lengths independent of timings
# (reproducible counts), as options


def session_for(document: str, program: Program, **kwargs: object) -> EditSession:
    for key, value in FIXED.items():
        kwargs.setdefault(key, value)
    kwargs.setdefault("ordered_copies", False)  # PROGRAM copies line 2 after line 6
    kwargs.setdefault("max_new_tokens", 1 << 15)  # random gens outgrow a derived budget
    kwargs.setdefault("mode", "program")
    return EditSession(ScriptedBackend(document, program), on_damage="keep",
                       syntax="lines", **kwargs)


NO_DRAFT: dict[str, object] = {"draft_tokens": 0}


@pytest.mark.parametrize("draft", [NO_DRAFT, FIXED, {"draft_adaptive": True}],
                         ids=["plain", "drafted", "adaptive"])
def test_edit_emits_the_program_and_splices_exactly_the_copied_lines(
        draft: dict[str, object]) -> None:
    session = session_for(DOCUMENT, PROGRAM, **draft)
    result = session.edit(DOCUMENT, "fix it")
    assert result.program == PROGRAM
    assert result.text == resolve(PROGRAM, DOCUMENT)
    backend = session.backend
    assert isinstance(backend, ScriptedBackend)
    # The cache holds the program with each copy's lines right after its tag, nothing else.
    prompt_len = len(backend.calls[0].ids)
    assert backend.cached_ids[prompt_len:] == list(program_in_context(PROGRAM, DOCUMENT).encode())
    lines = split_lines(DOCUMENT)
    contents = ["".join(lines[op.start - 1 : op.end]).encode() for op in PROGRAM.copies()]
    stats = result.stats
    assert stats.copy_ops == 3 and stats.gen_ops == 2
    assert stats.spliced_tokens == sum(len(c) for c in contents)
    assert stats.copy_span_tokens == [len(c) for c in contents]
    assert stats.program_tokens == len(render(PROGRAM).encode())
    assert stats.forwards == len(backend.calls) - 1  # every call after the prompt prefill
    if draft is NO_DRAFT:
        assert stats.drafted_tokens == 0
        assert stats.forwards == stats.decoded_tokens  # forced tokens ride along, never alone
    else:
        assert stats.drafted_tokens > 0


def test_drafts_cut_forwards_without_changing_the_output() -> None:
    plain = session_for(DOCUMENT, PROGRAM, **NO_DRAFT).edit(DOCUMENT, "x")
    drafted = session_for(DOCUMENT, PROGRAM).edit(DOCUMENT, "x")
    assert drafted.program_text == plain.program_text
    assert drafted.stats.forwards < plain.stats.forwards


def test_forced_markup_is_spliced_not_decoded() -> None:
    with_forced = session_for(DOCUMENT, PROGRAM, **NO_DRAFT).edit(DOCUMENT, "x").stats
    without = session_for(DOCUMENT, PROGRAM, splice_forced=False, **NO_DRAFT).edit(
        DOCUMENT, "x").stats
    assert with_forced.forced_tokens > 0 and without.forced_tokens == 0
    assert with_forced.forwards < without.forwards
    assert with_forced.program_tokens == without.program_tokens


def test_stream_yields_tokens_and_copies_in_order() -> None:
    events = list(session_for(DOCUMENT, PROGRAM).stream(DOCUMENT, "x"))
    copies = [e.lines for e in events if isinstance(e, CopyEvent)]
    assert [(r.start, r.end) for r in copies] == [(1, 1), (3, 6), (2, 2)]
    assert isinstance(events[-1], DoneEvent)
    assert any(isinstance(e, TokenEvent) for e in events)


@settings(max_examples=60)
@given(st.data(), texts.filter(lambda t: bool(t)))
def test_edit_and_replay_reproduce_any_program(data: st.DataObject, document: str) -> None:
    program = data.draw(programs(len(split_lines(document)))).normalized()
    session = session_for(document, program)
    result = session.edit(document, "x")
    assert result.program == program
    # The program comes from the ops the loop read as it went: what a parse of the text gives.
    assert result.program == parse(result.program_text)
    assert result.text == resolve(program, document)
    backend = session.backend
    assert isinstance(backend, ScriptedBackend)
    prompt_len = len(backend.calls[0].ids)
    assert backend.cached_ids[prompt_len:] == list(program_in_context(program, document).encode())
    replayed = replay(session, document, program)
    assert replayed.text == result.text
    assert replayed.copygram.forwards == result.stats.forwards
    assert replayed.copygram.drafted_tokens == result.stats.drafted_tokens
    assert replayed.plain is not None
    assert replayed.plain.forwards == len(result.text.encode())


def test_max_new_tokens_raises_with_the_partial_program() -> None:
    session = session_for(DOCUMENT, PROGRAM, max_new_tokens=5)
    with pytest.raises(GenerationError) as info:
        session.edit(DOCUMENT, "x")
    assert info.value.partial_program.startswith("<")


def test_empty_document_and_oversized_document_fail_before_model_work() -> None:
    with pytest.raises(DocumentError, match="empty"):
        session_for("", Program()).edit("", "x")
    backend = ScriptedBackend(DOCUMENT, PROGRAM, context_length=50)
    with pytest.raises(DocumentError, match="n_ctx") as caught:
        EditSession(backend, on_damage="keep", syntax="lines", mode="program").edit(DOCUMENT, "x")
    assert backend.calls == []
    prompt = len(EditSession(backend, on_damage="keep", syntax="lines",  # byte tokens
                             mode="program").prompt(DOCUMENT, "x").encode())
    short = prompt + len(DOCUMENT.encode()) + 64 - 50
    assert f"does not fit the model's context by {short} tokens" in str(caught.value)



def test_scripted_model_loses_track_when_fed_wrong_tokens() -> None:
    backend = ScriptedBackend(DOCUMENT, PROGRAM)
    backend.splice(list(b"prompt"))
    logits = backend.decode(ord("<"))
    assert logits.argmax() == ord("c")
    assert backend.decode(ord("x")).max() == 0  # flat: the "model" is lost
    assert EOS == backend.eos_token_id


@pytest.mark.parametrize("draft", [NO_DRAFT, FIXED], ids=["plain", "drafted"])
def test_compact_syntax_runs_the_same_loop(draft: dict[str, object]) -> None:
    backend = ScriptedBackend(DOCUMENT, PROGRAM, syntax="compact")
    session = EditSession(backend, on_damage="keep",
                          syntax="compact", ordered_copies=False, mode="program", **draft)
    result = session.edit(DOCUMENT, "x")
    assert result.program == PROGRAM and result.program_text == render(PROGRAM, "compact")
    prompt_len = len(backend.calls[0].ids)
    assert backend.cached_ids[prompt_len:] == list(
        program_in_context(PROGRAM, DOCUMENT, "compact").encode())
    lines_run = session_for(DOCUMENT, PROGRAM, **draft).edit(DOCUMENT, "x")
    assert result.stats.program_tokens < lines_run.stats.program_tokens



def test_second_edit_reuses_the_cached_prompt_prefix() -> None:
    session = session_for(DOCUMENT, PROGRAM)
    first = session.edit(DOCUMENT, "fix it")
    backend = session.backend
    assert isinstance(backend, ScriptedBackend)
    calls_before = len(backend.calls)
    second = session.edit(DOCUMENT, "fix it")
    prefill = backend.calls[calls_before]
    assert len(prefill.ids) == 1  # only the last prompt token is spliced again
    assert second.program == first.program and second.stats.prompt_tokens == first.stats.prompt_tokens


@settings(max_examples=40)
@given(st.data(), texts.filter(bool), st.sampled_from(["lines", "compact"]))
def test_splicing_and_drafts_write_what_stepwise_decoding_writes(
        data: st.DataObject, document: str, syntax: str) -> None:
    program = data.draw(programs(len(split_lines(document)))).normalized()
    runs = []
    for splice_forced, draft in ((False, NO_DRAFT), (True, NO_DRAFT), (True, FIXED),
                                 (True, {"draft_adaptive": False, "draft_tokens": 3})):
        backend = ScriptedBackend(document, program, syntax=syntax)
        session = EditSession(backend, on_damage="keep",
                              syntax=syntax, splice_forced=splice_forced,
                              ordered_copies=False, max_new_tokens=1 << 15, mode="program",
                              **draft)
        result = session.edit(document, "x")
        prompt_len = len(backend.calls[0].ids)
        runs.append((result.program_text, result.stats.program_tokens,
                     backend.cached_ids[prompt_len:]))
    stepwise = runs[0]
    assert stepwise[0] == render(program, syntax)
    assert all(run == stepwise for run in runs[1:])


class CountingBackend(ScriptedBackend):
    """Records every text it tokenizes."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.tokenized: list[str] = []

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        self.tokenized.append(text)
        return super().tokenize(text, special=special)


@pytest.mark.parametrize(("document", "times"), [
    (DOCUMENT, 1), ("if a < b:\n    pass\n", 1), ('s = "</gen>"\n    pass\n', 2)])
def test_an_edit_tokenizes_the_document_once(document: str, times: int) -> None:
    # Once for the room check, the drafter's old text and lookup; a second time only for a
    # document that gen text writes escaped (a reserved word such as "</gen>"; code with "<" is
    # written verbatim).
    program = Program([Copy(1, 1), Gen("x\n")])
    backend = CountingBackend(document, program)
    EditSession(backend, on_damage="keep", syntax="lines", mode="program",
                **FIXED).edit(document, "x")
    escaped = escape_gen_text(document)
    assert sum(text in (document, escaped) for text in backend.tokenized) == times


def test_copies_are_ordered_by_default_and_a_key_turns_it_off() -> None:
    from copygram.bench.replay import is_ordered
    from copygram.config import parse_config

    assert parse_config({}).session.ordered_copies is True
    config = parse_config({"route": {"syntax": "lines", "ordered_copies": False}})
    assert config.session.ordered_copies is False
    with pytest.raises(ConfigError):
        parse_config({"route": {"ordered_copies": "no"}})
    # Blocks always keep the document's order: turning it off there is refused, not ignored.
    with pytest.raises(ConfigError, match='ordered_copies acts on copy tags.*syntax = "lines"'):
        parse_config({"route": {"ordered_copies": False}})
    assert is_ordered(Program([Copy(1, 2), Gen("x"), Copy(4, 4)]))
    assert not is_ordered(Program([Copy(3, 4), Copy(1, 2)]))
    assert not is_ordered(Program([Copy(1, 2), Copy(2, 3)]))


def test_the_default_constraint_refuses_a_copy_that_goes_back() -> None:
    # PROGRAM copies line 2 after lines 3-6: stepwise the scripted model cannot write that copy
    # under the default order guard, so it never appears in the program, ordered or partial.
    session = EditSession(ScriptedBackend(DOCUMENT, PROGRAM), on_damage="keep",
                          syntax="lines", max_new_tokens=120, mode="program")
    with pytest.raises(GenerationError) as caught:
        session.edit(DOCUMENT, "x")
    partial = caught.value.partial_program
    assert partial is not None and '<copy lines="3-6"/>' in partial
    assert '<copy lines="2' not in partial
    unordered = session_for(DOCUMENT, PROGRAM).edit(DOCUMENT, "x")
    assert unordered.program == PROGRAM
