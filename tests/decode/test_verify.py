"""Draft verification, with draft sources that stress it: drafts that close a copy before their
last token, that announce the wrong copy, or announce one their tokens never close. Whatever the
drafts, the loop must write what step-by-step decoding writes and leave the cache holding the
program with each copy's lines after its tag, nothing rejected."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import Copy, Gen, Program, parse, render
from copygram.config import SessionConfig
from copygram.decode.document import EditDocument
from copygram.decode.drafting import Draft, DraftSource
from copygram.decode.events import CopyEvent, DoneEvent, EditResult, Event, SpanEvent
from copygram.decode.loop import edit_job, prompt_ids, run_edit
from copygram.decode.policies import SamplingPolicy
from copygram.decode.prompt import DefaultPromptBuilder, program_in_context
from copygram.decode.sampling import Sampling
from copygram.decode.setup import EditSetup
from copygram.language.lines import split_lines
from copygram.language.types import LineRange
from copygram.testing import ScriptedBackend
from tests.strategies import programs, texts

DOCUMENT = "def f(x):\n    return x + 1\n\n\nprint(f(2))\r\nend"
RANDOM_PROGRAM_BUDGET = 1 << 15  # random gens may be far longer than an edit's own budget
PROGRAM = Program([Copy(1, 1), Gen("    return x + 2\n"), Copy(3, 6), Gen("# done\n"), Copy(2, 2)])


class ProgramAhead:
    """Drafts the next ``k`` bytes of the memorised program text, copy closes and the ops after
    them included (so a draft often closes a copy before its last token), announcing
    ``announce`` as the copy it closes and asking for the lines to ride along when ``content``."""

    def __init__(self, program_text: str, k: int, announce: LineRange | None = None,
                 content: bool = False) -> None:
        self.text = program_text.encode("utf-8")
        self.k, self.announce, self.content = k, announce, content
        self.verdicts: list[tuple[int, int, int]] = []  # (program bytes before, drafted, accepted)
        self._done = 0
        self.program: Callable[[], str] = str  # the program so far: the edit's constraint's

    def propose(self, context: Sequence[int], feed: int = 1) -> Draft | None:
        done = len(self.program().encode("utf-8"))
        rest = list(self.text[done : done + self.k])
        if not rest:
            return None
        self._done = done
        return Draft(rest, self.announce, source="ahead")

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        return self.content

    def feedback(self, draft: Draft, accepted: int) -> None:
        self.verdicts.append((self._done, len(draft.tokens), accepted))

    def observe_forward(self, n_tokens: int, seconds: float) -> None:
        pass


def run_with(document: str, program: Program, source: DraftSource | None, *,
             splice_forced: bool = True) -> tuple[EditResult, list[Event], ScriptedBackend]:
    backend = ScriptedBackend(document, program)
    options = SessionConfig(syntax="lines", splice_forced=splice_forced, draft_tokens=0,
                            ordered_copies=False, max_new_tokens=RANDOM_PROGRAM_BUDGET)
    setup = EditSetup(backend=backend, token_bytes=backend.token_bytes(),
                      prompt_builder=DefaultPromptBuilder(), options=options)
    doc = EditDocument(document, backend.tokenize)
    prompt = prompt_ids(setup, document, "x")

    policy = SamplingPolicy(Sampling())
    job = dataclasses.replace(edit_job(setup, doc, "x", policy, len(prompt)), drafter=source)
    if isinstance(source, ProgramAhead):
        source.program = lambda: job.constraint.program_text
    events = list(run_edit(setup, doc, prompt, policy, job))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    return done.result, events, backend


def assert_exact(document: str, program: Program, result: EditResult,
                 backend: ScriptedBackend) -> None:
    assert result.program == program.normalized() or result.program == program
    assert result.program == parse(result.program_text)
    prompt_len = len(backend.calls[0].ids)
    assert backend.cached_ids[prompt_len:] == list(
        program_in_context(result.program, document).encode())
    stats = result.stats
    assert stats.prompt_tokens + stats.program_tokens + stats.spliced_tokens == backend.n_tokens
    lines = split_lines(document)
    assert stats.copy_span_tokens == [
        len("".join(lines[c.start - 1 : c.end]).encode()) for c in result.program.copies()]


def test_a_draft_that_closes_a_copy_before_its_last_token_is_cut_at_the_close() -> None:
    text = render(PROGRAM)
    source = ProgramAhead(text, k=40)
    result, events, backend = run_with(DOCUMENT, PROGRAM, source)
    assert_exact(DOCUMENT, PROGRAM, result, backend)
    # Drafts ran past copy closes: accepted up to the close, the rest dropped (the old loop
    # asserted that only a draft's last token could close a copy).
    closes, end = set(), 0
    for op in PROGRAM:
        end += len(render(Program([op])).encode())
        if isinstance(op, Copy):
            closes.add(end)
    early = [(at, n, ok) for at, n, ok in source.verdicts if at + ok in closes and ok < n]
    assert early
    copies = [e.lines for e in events if isinstance(e, CopyEvent)]
    assert [(c.start, c.end) for c in copies] == [(1, 1), (3, 6), (2, 2)]
    assert any(isinstance(e, SpanEvent) for e in events)
    plain, _, _ = run_with(DOCUMENT, PROGRAM, None)
    assert result.program_text == plain.program_text
    assert result.stats.program_tokens == plain.stats.program_tokens
    assert result.stats.forwards < plain.stats.forwards


def test_a_draft_announcing_the_wrong_copy_with_its_lines_is_still_exact() -> None:
    text = render(PROGRAM)
    for k in (3, 8, 19, 40):
        for announce in (LineRange(1, 1), LineRange(2, 5), LineRange(3, 6)):
            source = ProgramAhead(text, k=k, announce=announce, content=True)
            result, _, backend = run_with(DOCUMENT, PROGRAM, source)
            assert_exact(DOCUMENT, PROGRAM, result, backend)


@settings(max_examples=40, deadline=None)
@given(st.data(), texts.filter(bool), st.integers(1, 24), st.booleans(), st.booleans())
def test_any_drafts_give_the_step_by_step_program(data: st.DataObject, document: str, k: int,
                                                  announce: bool, content: bool) -> None:
    program = data.draw(programs(len(split_lines(document)))).normalized()
    stepwise, _, _ = run_with(document, program, None, splice_forced=False)
    lines = LineRange(1, len(split_lines(document))) if announce else None
    source = ProgramAhead(render(program), k, lines, content)
    drafted, _, backend = run_with(document, program, source)
    assert drafted.program_text == stepwise.program_text == render(program)
    assert drafted.stats.program_tokens == stepwise.stats.program_tokens
    assert_exact(document, program, drafted, backend)

