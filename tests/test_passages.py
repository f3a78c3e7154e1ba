"""The passages of a prose document an instruction quotes (copygram.language.passages), their
excerpt (copygram.language.focus) and auto's scoped rewrite of a long text (a scripted model:
the excerpt's rewrite is the edit, the whole text is never rewritten)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import EditSession
from copygram.decode.events import EditResult
from copygram.decode.prompt import REWRITE_SYSTEM
from copygram.errors import DamagedEditError
from copygram.language.damage import PROSE, find_damage
from copygram.language.focus import ELISION, excerpt_view, splice
from copygram.language.lines import split_lines
from copygram.language.passages import (
    MAX_PASSAGE_LINES,
    lost_paragraphs,
    named_passages,
    revised_paragraphs,
)
from copygram.language.reading import read_edit
from copygram.testing import PromptedBackend


def _paragraph(topic: str, n: int) -> str:
    return "".join(f"The {topic} sentence number {i} says something about {topic}.\n"
                   for i in range(n))


PARAGRAPHS = [_paragraph(t, n) for t, n in
              [("river", 4), ("harbour", 3), ("bridge", 5), ("tunnel", 2), ("canal", 6)] * 4]
TEXT = "\n".join(PARAGRAPHS)
LINES = split_lines(TEXT)


def _span_of(paragraph: int) -> tuple[int, int]:
    start = 1 + sum(len(split_lines(p)) + 1 for p in PARAGRAPHS[:paragraph])
    return start, start + len(split_lines(PARAGRAPHS[paragraph])) - 1


def test_the_paragraph_that_starts_with_a_quote_is_its_passage() -> None:
    quote = "The bridge sentence number 0"  # in 4 paragraphs: names no place
    assert named_passages(TEXT, f'Revise the paragraph that starts with "{quote}".') == ()
    unique = TEXT.replace("The canal sentence number 3 says", "Boats on the canal say", 1)
    found = named_passages(unique, 'Improve the paragraph with "Boats on the canal say".')
    assert found == (_span_of(4),)


def test_every_quote_kind_and_several_quotes() -> None:
    text = TEXT.replace("harbour sentence number 1", "pier line one", 1).replace(
        "tunnel sentence number 1", "deep tube line", 1)
    for instruction in ("Fix 'pier line one' and “deep tube line”.",
                        'Fix `pier line one` and "deep tube line".'):
        assert named_passages(text, instruction) == (_span_of(1), _span_of(3))


def test_no_place_without_a_quote_an_apostrophe_a_short_one_or_an_edit_everywhere() -> None:
    text = TEXT.replace("harbour sentence number 1", "pier line one", 1)
    assert named_passages(text, "Make the pier line one clearer.") == ()
    assert named_passages(text, "Don't touch it's 'pier line one' part") == (_span_of(1),)
    assert named_passages(text, "Don't change the writer's pier line one part.") == ()
    assert named_passages(text, 'Replace "pier" with "jetty".') == ()  # shorter than MIN_QUOTE
    for everywhere in ('Replace "pier line one" everywhere.',
                       'Make every sentence like "pier line one" shorter.',
                       'Fix the spelling throughout, as in "pier line one".'):
        assert named_passages(text, everywhere) == ()
    assert named_passages(text, 'Revise "no such words at all here".') == ()


def test_a_quote_compares_its_white_space_collapsed() -> None:
    text = TEXT.replace("harbour sentence number 1 says", "harbour   sentence\tnumber 1 said", 1)
    found = named_passages(text, 'Fix the tense in "harbour sentence number 1 said".')
    assert found == (_span_of(1),)


def test_a_paragraph_longer_than_the_cap_gives_the_lines_around_the_quote() -> None:
    long = "".join(f"Line {i} of one long run.\n" for i in range(200))
    (start, end), = named_passages(long, 'Fix "Line 120 of one long run".')
    assert end - start + 1 == MAX_PASSAGE_LINES and start <= 121 <= end


def test_the_excerpt_shows_the_passages_and_splices_back() -> None:
    text = TEXT.replace("harbour sentence number 1", "pier line one", 1).replace(
        "canal sentence number 2", "deep tube line", 1)
    instruction = "Rewrite the sentences 'pier line one' and 'deep tube line'."
    view = excerpt_view(text, instruction, PROSE)
    assert view is not None and view.shown == (_span_of(1), _span_of(4))
    elisions = [line for line in split_lines(view.text) if ELISION.match(line)]
    assert elisions == [f"[... lines {_span_of(1)[1] + 1}-{_span_of(4)[0] - 1} not shown ...]\n"]
    assert splice(text, view, view.text) == text
    edited = splice(text, view, view.text.replace("pier line one", "jetty line one"))
    assert edited == text.replace("pier line one", "jetty line one")
    # An elision line left in the text is a marker the damage check finds.
    assert {d.kind for d in find_damage(text, text + elisions[0], language=PROSE)} == {"marker"}


_WORDS = st.text(alphabet="abcdefghij ", min_size=12, max_size=40).filter(
    lambda s: len(s.split()) >= 2)


@given(st.lists(st.lists(_WORDS, min_size=1, max_size=6), min_size=2, max_size=12),
       st.data())
def test_a_unique_quoted_line_is_inside_its_passage_of_non_blank_lines(
        paragraphs: list[list[str]], data: st.DataObject) -> None:
    text = "\n".join("".join(f"{line.strip()}\n" for line in p) for p in paragraphs)
    lines = split_lines(text)
    number = data.draw(st.sampled_from([i for i, line in enumerate(lines, 1) if line.strip()]))
    quote = " ".join(lines[number - 1].split())
    found = named_passages(text, f'Edit the sentence "{quote}".')
    hits = {i for i, line in enumerate(lines, 1) if quote in " ".join(line.split())}
    if len(quote.strip(" .,;:")) < 8:
        return
    for start, end in found:
        assert all(lines[i - 1].strip() for i in range(start, end + 1))
    if len(hits) == 1:
        assert any(start <= number <= end for start, end in found)
    view = excerpt_view(text, f'Edit the sentence "{quote}".', PROSE)
    if view is not None:
        assert splice(text, view, view.text) == text


def _session(reply: str) -> EditSession:
    backend = PromptedBackend(TEXT, replies=((REWRITE_SYSTEM, reply),))
    return EditSession(backend, mode="auto", focus_tokens=64, auto_rewrite_tokens=64)


def test_auto_rewrites_the_quoted_paragraph_of_a_long_text_and_nothing_else() -> None:
    text = TEXT.replace("The canal sentence number 3 says", "Boats on the canal say", 1)
    instruction = 'Revise the paragraph that starts with "The canal sentence number 0" ...'
    assert named_passages(text, instruction) == ()  # four such paragraphs: no place
    instruction = 'Revise the paragraph that holds "Boats on the canal say".'
    view = excerpt_view(text, instruction, PROSE)
    assert view is not None and "river" not in view.text
    session = _session(view.text.replace("Boats on the canal say", "Canal boats say"))
    assert session.mode_for(text, instruction) == "rewrite"
    result = session.edit(text, instruction)
    assert result.text == text.replace("Boats on the canal say", "Canal boats say")
    assert 0 < result.stats.scope_lines < len(split_lines(text)) // 4


def test_only_prose_is_read_for_passages() -> None:
    text = TEXT.replace("harbour sentence number 1", "pier line one", 1)
    instruction = "Rewrite the sentence 'pier line one'."
    assert read_edit(text, instruction, PROSE).passages == (_span_of(1),)
    assert read_edit(text, instruction, "python").passages == ()


def test_a_short_texts_quoted_paragraph_is_rewritten_alone_too() -> None:
    # The default model answers "revise the paragraph ..." with that paragraph: as the whole
    # text's rewrite it would lose every other one; as the excerpt's, it is spliced in place.
    text = "\n".join(PARAGRAPHS[:3]).replace("harbour sentence number 1", "pier line one", 1)
    instruction = "Revise the paragraph with 'pier line one'."
    revised = "The harbour is calm. The pier line one is long.\n"
    backend = PromptedBackend(text, replies=((REWRITE_SYSTEM, revised),))
    session = EditSession(backend, mode="auto")  # the default focus_tokens: longer than the text
    assert session.mode_for(text, instruction) == "rewrite"
    result = session.edit(text, instruction)
    assert result.text == "".join([PARAGRAPHS[0], "\n", revised, "\n", PARAGRAPHS[2]])
    # Unscoped, the reply (too unlike any paragraph to be put back) would lose the text: refused.
    unscoped = EditSession(backend, mode="auto", focus_tokens=0)
    with pytest.raises(DamagedEditError, match="3 paragraphs is one paragraph") as refused:
        unscoped.edit(text, instruction)
    assert isinstance(refused.value.result, EditResult)
    assert [d.kind for d in refused.value.result.damage] == ["lost"]


MARKDOWN = """# Guide

Intro text for the guide.

## Getting started

Install the package first.

```sh
# Getting started quickly
pip install thing
```

Then run it.

### Details of getting started

More words here.

## Usage in production

Use it well.
"""


def test_a_quoted_heading_names_its_section_not_its_title_line() -> None:
    lines = split_lines(MARKDOWN)
    start = lines.index("## Getting started\n") + 1
    end = lines.index("More words here.\n") + 1
    # "Getting started" is also a comment in the fenced block (no heading: its paragraph is
    # a place of its own, inside the section).
    for quote in ("Getting started", "## Getting started"):
        assert named_passages(MARKDOWN, f'Rewrite the section "{quote}".') == ((start, end),)
    fence = lines.index("```sh\n") + 1
    assert named_passages(MARKDOWN, 'Fix "pip install thing".') == ((fence, fence + 3),)
    usage = lines.index("## Usage in production\n") + 1
    assert named_passages(MARKDOWN, "Shorten 'Usage in production'.") == (
        (usage, len(lines)),)


def test_an_rst_title_names_its_section_up_to_the_next_of_its_rank() -> None:
    rst = ("Title\n=====\n\nIntro.\n\nFirst part\n----------\n\nText one.\n\nSub part\n"
           "~~~~~~~~\n\nText two.\n\nSecond part\n-----------\n\nText three.\n")
    lines = split_lines(rst)
    first = lines.index("First part\n") + 1
    second = lines.index("Second part\n") + 1
    assert named_passages(rst, 'Revise "First part".') == ((first, second - 2),)


def test_a_section_longer_than_the_cap_names_no_place() -> None:
    long = "## A long section here\n\n" + "".join(f"Line {i}.\n\n" for i in range(150))
    assert named_passages(long, 'Revise "A long section here".') == ()


def test_a_counted_paragraph_is_its_passage() -> None:
    assert named_passages(TEXT, "Revise the second paragraph.") == (_span_of(1),)
    assert named_passages(TEXT, "Make the 3rd paragraph shorter") == (_span_of(2),)
    assert named_passages(TEXT, "Edit paragraph 4 for style.") == (_span_of(3),)
    assert named_passages(TEXT, "Fix the first and third paragraphs.") == (_span_of(0), _span_of(2))
    assert named_passages(TEXT, "Reword paragraphs 2 and 5.") == (_span_of(1), _span_of(4))
    last = len(PARAGRAPHS) - 1
    assert named_passages(TEXT, "Tighten the last paragraph.") == (_span_of(last),)
    assert named_passages(TEXT, "Tighten the second-to-last paragraph.") == (_span_of(last - 1),)
    assert named_passages(TEXT, "Merge the last two paragraphs.") == (
        _span_of(last - 1), _span_of(last))
    assert named_passages(TEXT, "Revise the first two paragraphs.") == (_span_of(0), _span_of(1))
    assert named_passages(TEXT, "Make the opening sentence punchier.") == (_span_of(0),)
    assert named_passages(TEXT, "Fix the last sentence of the first paragraph.") == (
        _span_of(0),)  # a paragraph counted outranks the sentence's own count


def test_the_introduction_and_the_conclusion_are_their_section_or_paragraph() -> None:
    last = len(PARAGRAPHS) - 1
    assert named_passages(TEXT, "Rewrite the introduction to be more concise.") == (_span_of(0),)
    assert named_passages(TEXT, "Make the intro friendlier.") == (_span_of(0),)
    assert named_passages(TEXT, "Tighten the introductory paragraph.") == (_span_of(0),)
    assert named_passages(TEXT, "Shorten the conclusion.") == (_span_of(last),)
    assert named_passages(TEXT, "Revise the introduction and the conclusion.") == (
        _span_of(0), _span_of(last))
    # The act of introducing something, an introduction to write, a word in a quote: no place.
    assert named_passages(TEXT, "Describe the introduction of the canal tax.") == ()
    assert named_passages(TEXT, "Add an introduction.") == ()
    titled = ("# Report\n\nA preface line.\n\n## 1. Introduction\n\nFirst words.\n\n"
              "More first words.\n\n## Method\n\nHow it was done.\n\n## Conclusions:\n\n"
              "What we found.\n\nWhat comes next.\n")
    lines = split_lines(titled)
    intro = lines.index("## 1. Introduction\n") + 1
    method = lines.index("## Method\n") + 1
    outro = lines.index("## Conclusions:\n") + 1
    assert named_passages(titled, "Rewrite the introduction.") == ((intro, method - 2),)
    assert named_passages(titled, "Shorten the conclusion.") == ((outro, len(lines)),)
    more = lines.index("More first words.\n") + 1
    assert named_passages(titled, "Revise the second paragraph of the introduction.") == (
        (more, more),)


def test_no_place_from_a_count_past_the_text_everywhere_or_without_paragraphs() -> None:
    assert named_passages(TEXT, "Revise the 30th paragraph.") == ()
    assert named_passages(TEXT, "Revise the first and 30th paragraphs.") == ()  # all or none
    assert named_passages(TEXT, "Fix the first sentence of every paragraph.") == ()
    assert named_passages(TEXT, "Revise the text for fluency.") == ()
    long = "".join(f"Line {i} of one long run.\n" for i in range(200))
    assert named_passages(long, "Revise the first paragraph.") == ()  # past MAX_PASSAGE_LINES


def test_a_reader_counts_no_heading_code_block_or_list_as_a_paragraph() -> None:
    lines = split_lines(MARKDOWN)
    intro = lines.index("Intro text for the guide.\n") + 1
    install = lines.index("Install the package first.\n") + 1
    then = lines.index("Then run it.\n") + 1
    assert named_passages(MARKDOWN, "Revise the first paragraph.") == ((intro, intro),)
    assert named_passages(MARKDOWN, "Revise the third paragraph.") == ((then, then),)
    listed = MARKDOWN.replace("Then run it.\n", "- one\n- two\n\nThen run it.\n")
    after_list = split_lines(listed).index("Then run it.\n") + 1
    assert named_passages(listed, "Revise the third paragraph.") == ((after_list, after_list),)
    tabled = MARKDOWN.replace("Then run it.\n", "| a | b |\n|---|---|\n\n| not a table\n\n"
                              "Then run it.\n")
    lines = split_lines(tabled)
    lone_bar = lines.index("| not a table\n") + 1
    assert named_passages(tabled, "Revise the third paragraph.") == ((lone_bar, lone_bar),)
    # Counted within the section a quoted heading names; a quoted paragraph is narrower.
    assert named_passages(MARKDOWN, 'Revise the second paragraph of "Getting started".') == (
        (then, then),)
    assert named_passages(MARKDOWN, 'Revise the first paragraph, "Install the package".') == (
        (install, install),)


@given(st.lists(st.lists(_WORDS, min_size=1, max_size=6), min_size=1, max_size=12),
       st.integers(min_value=-14, max_value=14))
def test_a_counted_passage_is_one_of_the_texts_paragraphs(
        paragraphs: list[list[str]], count: int) -> None:
    text = "\n".join("".join(f"{line.strip()}\n" for line in p) for p in paragraphs)
    lines = split_lines(text)
    if count == 0:
        return
    words = f"paragraph {count}" if count > 0 else "last paragraph"
    found = named_passages(text, f"Revise the {words}.")
    index = count - 1 if count > 0 else -1
    if count > len(paragraphs) or not any(line.strip() for line in paragraphs[index]):
        return  # past the text, or a paragraph of blank lines that merged into its neighbours
    for start, end in found:
        assert all(lines[i - 1].strip() for i in range(start, end + 1))
        assert start == 1 or not lines[start - 2].strip()
        assert end == len(lines) or not lines[end].strip()


def test_auto_rewrites_a_counted_paragraph_of_a_short_text_alone() -> None:
    text = "\n".join(PARAGRAPHS[:4])
    revised = "The harbour is calm tonight.\n"
    backend = PromptedBackend(text, replies=((REWRITE_SYSTEM, revised),))
    session = EditSession(backend, mode="auto")
    instruction = "Rewrite the second paragraph as one calm sentence."
    assert session.mode_for(text, instruction) == "rewrite"
    assert session.edit(text, instruction).text == "".join(
        [PARAGRAPHS[0], "\n", revised, "\n", PARAGRAPHS[2], "\n", PARAGRAPHS[3]])


def test_a_one_paragraph_rewrite_of_a_longer_text_is_lost_unless_asked_for() -> None:
    text = "\n".join(PARAGRAPHS[:4])
    reply = PARAGRAPHS[2].replace("bridge sentence", "bridge line")
    assert "4 paragraphs is one paragraph" in (lost_paragraphs(text, reply, "Improve it.") or "")
    for asked in ("Summarize the text.", "Condense it into a single paragraph.",
                  "Remove all but the bridge paragraph.", "Shorten it a lot."):
        assert lost_paragraphs(text, reply, asked) is None
    assert lost_paragraphs("\n".join(PARAGRAPHS[:2]), PARAGRAPHS[1], "Improve it.") is None
    assert lost_paragraphs(text, text.replace("river", "stream"), "Improve it.") is None
    assert lost_paragraphs(text, reply + "\n" + PARAGRAPHS[3], "Improve it.") is None  # 2 kept
    assert lost_paragraphs(text, reply, "Make it more concise.") is None
    assert revised_paragraphs(text, reply) == (_span_of(2),)
    assert revised_paragraphs(text, "Something else entirely, unlike any of them.\n") is None


def test_a_rewrite_that_kept_fewer_than_half_the_paragraphs_is_lost() -> None:
    text = "\n".join(PARAGRAPHS[:6])
    two = (PARAGRAPHS[1].replace("says", "tells") + "\n"
           + PARAGRAPHS[4].replace("says", "tells"))
    assert "6 paragraphs is 2 paragraphs" in (lost_paragraphs(text, two, "Improve it.") or "")
    assert lost_paragraphs(text, two + "\n" + PARAGRAPHS[5], "Improve it.") is None  # half
    assert revised_paragraphs(text, two) == (_span_of(1), _span_of(4))
    # Out of order, or two replies on one paragraph: not put back.
    swapped = PARAGRAPHS[4] + "\n" + PARAGRAPHS[1]
    assert revised_paragraphs(text, swapped) is None
    assert revised_paragraphs(text, PARAGRAPHS[1] + "\n" + PARAGRAPHS[1]) is None


def test_a_whole_text_rewrite_that_kept_one_paragraph_is_put_back_in_its_place() -> None:
    text = "\n".join(PARAGRAPHS[:4])
    reply = PARAGRAPHS[2].replace("says something about", "tells of")
    backend = PromptedBackend(text, replies=((REWRITE_SYSTEM, reply),))
    instruction = "Make the bridge paragraph livelier."  # names no place: the whole text
    auto = EditSession(backend, mode="auto")
    result = auto.edit(text, instruction)
    assert result.text == text.replace(PARAGRAPHS[2], reply) and not result.damage
    # Asked to rewrite the text itself, the session does not guess: nothing written.
    with pytest.raises(DamagedEditError, match="paragraph") as refused:
        EditSession(backend, mode="rewrite").edit(text, instruction)
    assert isinstance(refused.value.result, EditResult) and refused.value.result.text == reply
    assert [d.kind for d in refused.value.result.damage] == ["lost"]
    kept = EditSession(backend, mode="rewrite", on_damage="keep").edit(text, instruction)
    assert kept.text == reply and [d.kind for d in kept.damage] == ["lost"]


def test_a_rewrite_that_kept_two_paragraphs_of_six_is_put_back_in_their_places() -> None:
    text = "\n".join(PARAGRAPHS[:6])
    first, second = (PARAGRAPHS[k].replace("says something about", "tells of") for k in (1, 4))
    backend = PromptedBackend(text, replies=((REWRITE_SYSTEM, first + "\n" + second),))
    result = EditSession(backend, mode="auto").edit(
        text, "Make the harbour and canal paragraphs livelier.")
    assert result.text == (text.replace(PARAGRAPHS[1], first).replace(PARAGRAPHS[4], second))
    assert not result.damage
    with pytest.raises(DamagedEditError, match="is 2 paragraphs"):
        EditSession(backend, mode="rewrite").edit(text, "Make them livelier.")


_TOPICS = ["river", "harbour", "bridge", "tunnel", "canal", "meadow", "forest", "castle"]


@given(st.lists(st.sampled_from(_TOPICS), min_size=3, max_size=8, unique=True),
       st.data())
def test_revised_paragraphs_finds_each_kept_one_in_its_place(topics: list[str],
                                                            data: st.DataObject) -> None:
    paragraphs = [_paragraph(topic, 3) for topic in topics]
    text = "\n".join(paragraphs)
    kept = sorted(data.draw(st.sets(st.integers(0, len(topics) - 1), min_size=1,
                                    max_size=(len(topics) - 1) // 2)))
    reply = "\n".join(paragraphs[k].replace("says something", "tells a thing") for k in kept)
    lines = split_lines(text)
    spans = revised_paragraphs(text, reply)
    assert spans is not None
    assert ["".join(lines[start - 1:end]) for start, end in spans] == [paragraphs[k] for k in kept]
    assert lost_paragraphs(text, reply, "Improve it.") is not None  # fewer than half, shorter
