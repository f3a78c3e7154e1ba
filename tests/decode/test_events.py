"""Events: where each token lies in the program text, and the benchmark statistics computed from
the events after the loop (markup forwards)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import EditResult, Gen, Program, render
from copygram.bench.replay import replay
from copygram.decode.events import DoneEvent, Event, SpanEvent, TokenEvent, count_markup_forwards
from copygram.decode.stats import RunStats
from copygram.language.lines import split_lines
from copygram.language.syntaxes import get_syntax
from copygram.session import EditSession
from copygram.testing import ScriptedBackend
from tests.strategies import programs, texts


def markup_forwards_from_the_ops(events: list[Event], syntax: str) -> int:
    """The count from the parsed program, op by op: a token chosen from its own forward counts
    unless both its ends lie within one gen op's rendered text."""
    done = events[-1]
    assert isinstance(done, DoneEvent)
    s = get_syntax(syntax)
    spans, at = [], 0
    for op in s.parse(done.result.program_text):
        rendered = s.render_op(op).encode()
        if isinstance(op, Gen):
            start = at + len(s.gen_open.encode())
            spans.append((start, at + len(rendered) - len(s.gen_close.encode())))
        at += len(rendered)
    return sum(
        not any(a <= e.start and e.end <= b for a, b in spans)
        for e in events if isinstance(e, TokenEvent))


@settings(max_examples=40)
@given(st.data(), texts.filter(bool), st.sampled_from(["lines", "compact"]),
       st.sampled_from([0, 4, 16]))
def test_token_offsets_and_markup_forwards(data: st.DataObject, document: str, syntax: str,
                                           draft_tokens: int) -> None:
    program: Program = data.draw(programs(len(split_lines(document)))).normalized()
    backend = ScriptedBackend(document, program, syntax=syntax)
    session = EditSession(backend, on_damage="keep",
                          syntax=syntax, ordered_copies=False, max_new_tokens=1 << 15,
                          draft_tokens=draft_tokens, draft_adaptive=False,
                          mode="program")
    events = list(session.stream(document, "x"))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    text = done.result.program_text.encode()
    assert text == render(program, syntax).encode()
    tokens = [e for e in events if isinstance(e, TokenEvent)]
    spans = [e for e in events if isinstance(e, SpanEvent)]
    for event in tokens:
        assert text[event.start : event.end] == bytes([event.token_id])
    for span in spans:
        assert text[span.start : span.end] == bytes(span.token_ids)
    assert len(tokens) == done.result.stats.decoded_tokens
    assert sum(len(e.token_ids) for e in spans) == done.result.stats.drafted_tokens
    # Every event's text joined is the program: forced markup rides on the next event.
    assert "".join(e.text for e in events if isinstance(e, TokenEvent | SpanEvent | DoneEvent)) \
        == done.result.program_text
    expected = markup_forwards_from_the_ops(events, syntax)
    assert count_markup_forwards(events, syntax) == expected
    replayed = replay(session, document, program, measure_plain=False)
    assert done.result.stats.markup_forwards == 0  # not counted in the loop
    # Replay counts them from its own events; teacher forcing writes the same tokens here.
    assert replayed.copygram.markup_forwards == expected


def test_markup_forwards_of_a_known_program() -> None:
    # Without drafts or forced splices every byte is its own forward: the markup ones are those
    # of the tags (and the one that ends the gen text), the gen text's bytes are not.
    from copygram import Copy, Gen

    program = Program([Copy(1, 1), Gen("ab\n")])
    backend = ScriptedBackend("x\ny\n", program)
    session = EditSession(backend, on_damage="keep",
                          syntax="lines", splice_forced=False, draft_tokens=0,
                          mode="program")
    events = list(session.stream("x\ny\n", "x"))
    markup = len(render(program)) - len("ab\n")
    assert count_markup_forwards(events) == markup


def test_a_damaged_edit_kept_still_streams_its_whole_program() -> None:
    """Found by Hypothesis: a program whose last copy tag was forced after ``<c`` held the
    tag's rest back for the last event, and a damaged edit kept (``on_damage="keep"``: the
    file here gets the format's markup) was re-wrapped without it: joined, the events were not
    the program."""
    from copygram import Copy, Gen

    document = "</gen>"
    program = Program([Gen('<copy lines="1-2"/>'), Copy(1, 1)]).normalized()
    session = EditSession(ScriptedBackend(document, program, syntax="lines"), on_damage="keep",
                          syntax="lines", ordered_copies=False, draft_tokens=0, mode="program")
    events = list(session.stream(document, "x"))
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.result.damage
    joined = "".join(e.text for e in events if isinstance(e, TokenEvent | SpanEvent | DoneEvent))
    assert joined == done.result.program_text


def test_no_speedup_is_estimated_without_a_timed_decode_step() -> None:
    def result(decode_s: float, forwards: list[int]) -> EditResult:
        stats = RunStats(decoded_tokens=3, decode_s=decode_s, wall_s=2.0, output_tokens=600,
                         forward_tokens=forwards)
        return EditResult(text="x\n", program=Program([]), program_text="", stats=stats)

    # Every choice read from a batched forward: no step to price the decoding it saved.
    assert math.isnan(result(0.0, [12, 40]).speedup)
    # A step is priced by the one-token forwards alone: three tokens were chosen, but one of
    # them from a splice's logits, so two steps took the 0.3 s (the estimate once divided by
    # the three, and read 0.7x where a head block's edit was several times faster).
    assert result(0.3, [1, 12, 1, 40]).speedup == 600 * (0.3 / 2) / 2.0
