"""The decode loop, driven by a scripted byte-level model and the real llguidance constraint."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import Copy, DocumentError, Gen, GenerationError, Program, resolve
from copygram.backends.scripted import EOS, ScriptedBackend
from copygram.drafting import DraftConfig
from copygram.errors import ConfigError
from copygram.lines import split_lines
from copygram.prompt import program_in_context
from copygram.session import CopyEvent, DoneEvent, EditSession, GenTokenEvent, TeacherPolicy
from tests.strategies import programs, texts

DOCUMENT = "def f(x):\n    return x + 1\n\n\nprint(f(2))\r\nend"
PROGRAM = Program([Copy(1, 1), Gen("    return x + 2\n"), Copy(3, 6), Gen("# done\n"), Copy(2, 2)])


FIXED = DraftConfig(adaptive=False)  # draft lengths independent of timings: reproducible counts


def session_for(document: str, program: Program, **kwargs: object) -> EditSession:
    kwargs.setdefault("draft", FIXED)
    return EditSession(ScriptedBackend(document, program), **kwargs)  # type: ignore[arg-type]


NO_DRAFT = DraftConfig(max_tokens=0)


@pytest.mark.parametrize("draft", [NO_DRAFT, FIXED, DraftConfig()],
                         ids=["plain", "drafted", "adaptive"])
def test_edit_emits_the_program_and_splices_exactly_the_copied_lines(draft: DraftConfig) -> None:
    session = session_for(DOCUMENT, PROGRAM, draft=draft)
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
    assert stats.program_tokens == len(PROGRAM.render().encode())
    assert stats.forwards == len(backend.calls) - 1  # every call after the prompt prefill
    if draft is NO_DRAFT:
        assert stats.drafted_tokens == 0
        assert stats.forwards == stats.decoded_tokens  # forced tokens ride along, never alone
    else:
        assert stats.drafted_tokens > 0


def test_drafts_cut_forwards_without_changing_the_output() -> None:
    plain = session_for(DOCUMENT, PROGRAM, draft=NO_DRAFT).edit(DOCUMENT, "x")
    drafted = session_for(DOCUMENT, PROGRAM).edit(DOCUMENT, "x")
    assert drafted.program_text == plain.program_text
    assert drafted.stats.forwards < plain.stats.forwards


def test_forced_markup_is_spliced_not_decoded() -> None:
    with_forced = session_for(DOCUMENT, PROGRAM, draft=NO_DRAFT).edit(DOCUMENT, "x").stats
    without = session_for(DOCUMENT, PROGRAM, splice_forced=False, draft=NO_DRAFT).edit(
        DOCUMENT, "x").stats
    assert with_forced.forced_tokens > 0 and without.forced_tokens == 0
    assert with_forced.forwards < without.forwards
    assert with_forced.program_tokens == without.program_tokens


def test_stream_yields_tokens_and_copies_in_order() -> None:
    events = list(session_for(DOCUMENT, PROGRAM).stream(DOCUMENT, "x"))
    copies = [e.lines for e in events if isinstance(e, CopyEvent)]
    assert [(r.start, r.end) for r in copies] == [(1, 1), (3, 6), (2, 2)]
    assert isinstance(events[-1], DoneEvent)
    assert any(isinstance(e, GenTokenEvent) for e in events)


@settings(max_examples=60)
@given(st.data(), texts.filter(lambda t: bool(t)))
def test_edit_and_replay_reproduce_any_program(data: st.DataObject, document: str) -> None:
    program = data.draw(programs(len(split_lines(document)))).normalized()
    session = session_for(document, program)
    result = session.edit(document, "x")
    assert result.program == program
    assert result.text == resolve(program, document)
    backend = session.backend
    assert isinstance(backend, ScriptedBackend)
    prompt_len = len(backend.calls[0].ids)
    assert backend.cached_ids[prompt_len:] == list(program_in_context(program, document).encode())
    replay = session.replay(document, program)
    assert replay.text == result.text
    assert replay.copygram.forwards == result.stats.forwards
    assert replay.copygram.drafted_tokens == result.stats.drafted_tokens
    assert replay.plain is not None
    assert replay.plain.forwards == len(result.text.encode())


def test_max_new_tokens_raises_with_the_partial_program() -> None:
    session = session_for(DOCUMENT, PROGRAM, max_new_tokens=5)
    with pytest.raises(GenerationError) as info:
        session.edit(DOCUMENT, "x")
    assert info.value.partial_program.startswith("<")


def test_empty_document_and_oversized_document_fail_before_model_work() -> None:
    with pytest.raises(DocumentError, match="empty"):
        session_for("", Program()).edit("", "x")
    backend = ScriptedBackend(DOCUMENT, PROGRAM, context_length=50)
    with pytest.raises(DocumentError, match="n_ctx"):
        EditSession(backend).edit(DOCUMENT, "x")
    assert backend.calls == []


def test_bad_session_arguments() -> None:
    backend = ScriptedBackend(DOCUMENT, PROGRAM)
    with pytest.raises(ConfigError):
        EditSession(backend, engine="nope")
    with pytest.raises(ConfigError):
        EditSession.from_config({"backend": "llamacpp", "colour": "red"})
    # Checked before any model loads: "false" as a string would otherwise read as true.
    for key in ("splice_forced", "prompt_example"):
        with pytest.raises(ConfigError, match=f"{key}.*true or false"):
            EditSession.from_config({"backend": "llamacpp", key: "false"})


def test_scripted_model_loses_track_when_fed_wrong_tokens() -> None:
    backend = ScriptedBackend(DOCUMENT, PROGRAM)
    backend.splice(list(b"prompt"))
    logits = backend.decode(ord("<"))
    assert logits.argmax() == ord("c")
    assert backend.decode(ord("x")).max() == 0  # flat: the "model" is lost
    assert EOS == backend.eos_token_id


@pytest.mark.parametrize("draft", [NO_DRAFT, FIXED], ids=["plain", "drafted"])
def test_compact_syntax_runs_the_same_loop(draft: DraftConfig) -> None:
    backend = ScriptedBackend(DOCUMENT, PROGRAM, syntax="compact")
    session = EditSession(backend, syntax="compact", draft=draft)
    result = session.edit(DOCUMENT, "x")
    assert result.program == PROGRAM and result.program_text == PROGRAM.render("compact")
    prompt_len = len(backend.calls[0].ids)
    assert backend.cached_ids[prompt_len:] == list(
        program_in_context(PROGRAM, DOCUMENT, "compact").encode())
    lines_run = session_for(DOCUMENT, PROGRAM, draft=draft).edit(DOCUMENT, "x")
    assert result.stats.program_tokens < lines_run.stats.program_tokens


def test_teacher_writes_the_program_as_the_tokenizer_splits_it_except_across_a_copy_close() -> None:
    # "><" is how the worked example tokenizes "</gen><copy"; '"/><' would put the next op's
    # "<" before the lines the copy splices, so the teacher never writes it.
    vocabulary = [*(bytes([i]) for i in range(256)), b"><", b'"/><']

    class Merging:
        def tokenize(self, text: str, special: bool = False) -> list[int]:
            data, out = text.encode("utf-8"), []
            while data:
                token = next((t for t in (257, 256) if data.startswith(vocabulary[t])), data[0])
                out.append(token)
                data = data[len(vocabulary[token]):]
            return out

    program = Program([Copy(1, 1), Gen("x\n"), Copy(3, 4), Gen("y\n")])
    teacher = TeacherPolicy(program, "lines", Merging(), frozenset({999}),  # type: ignore[arg-type]
                            vocabulary)
    allowed = np.ones(len(vocabulary), dtype=np.bool_)
    written: list[int] = []
    while len(b"".join(vocabulary[t] for t in written)) < len(program.render()):
        written.append(teacher.choose(np.zeros(len(vocabulary), dtype=np.float32), allowed))
        teacher.advance(written[-1])
    assert b"".join(vocabulary[t] for t in written) == program.render().encode()
    assert written.count(256) == 1 and 257 not in written


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
