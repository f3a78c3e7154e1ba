"""Program mode with search/replace blocks (syntax "search_replace") through the session, driven
by a scripted byte-level model that writes given blocks, and the real llguidance constraint."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given

from copygram import ConfigError, DoneEvent, Program, SpanEvent, TokenEvent
from copygram.bench.replay import replay
from copygram.decode.drafting import DraftConfig
from copygram.decode.prompt import SearchReplacePromptBuilder
from copygram.errors import CopygramError, GenerationError
from copygram.language.block_render import render
from copygram.language.lines import split_lines
from copygram.language.resolve import resolve
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    PLAN_PREFIX,
    SEARCH_REPLACE,
    parse,
    parse_blocks,
)
from copygram.session import EditSession
from copygram.testing import ScriptedBackend
from tests.strategies import ordered_edits

DOCUMENT = "def f(x):\n    y = x\n    return y + 1\n\n\ndef g():\n    return 2\n"
BLOCKS = BLOCK_OPEN + "    return y + 1\n" + DIVIDER + "    return y - 1\n" + BLOCK_CLOSE


def session_writing(reply: str, **kwargs: object) -> EditSession:
    """Blocks of the lines they change (``search_scope="lines"``) unless ``kwargs`` say else."""
    backend = ScriptedBackend(DOCUMENT, reply=reply)
    options = {"search_scope": "lines", "mode": "program", **kwargs}
    return EditSession(backend, on_damage="keep",
                       syntax="search_replace", **options)


def test_the_blocks_the_model_writes_are_the_edit() -> None:
    result = session_writing(BLOCKS).edit(DOCUMENT, "Return y - 1.")
    assert result.program_text == BLOCKS
    assert result.program == parse(BLOCKS, DOCUMENT)
    assert result.text == DOCUMENT.replace("y + 1", "y - 1")


def test_a_decided_search_line_costs_one_forward() -> None:
    session = session_writing(BLOCKS)
    result = session.edit(DOCUMENT, "Return y - 1.")
    stats = result.stats
    # The search line is decided at its 6th byte (two lines start "    re"): the rest of it and
    # the divider's first bytes are forced, and appended with the choice in one forward.
    assert stats.forced_tokens >= len("turn y + 1\n")
    assert (stats.decoded_tokens + stats.forced_tokens + stats.drafted_tokens
            == len(BLOCKS.encode()))
    assert stats.forwards < stats.decoded_tokens + stats.forced_tokens


@given(ordered_edits())
def test_any_rendered_edit_comes_out_as_its_result(edit: tuple[str, Program]) -> None:
    document, program = edit
    try:
        blocks = render(program, document)
    except CopygramError:
        return  # an edit blocks cannot spell (tests/test_search_replace.py)
    backend = ScriptedBackend(document, reply=blocks)
    session = EditSession(backend, on_damage="keep", syntax="search_replace", search_scope="lines",
                          max_new_tokens=1 << 14, mode="program")
    events = list(session.stream(document, "edit"))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.result.text == resolve(program, document)
    # Each token the model chose is an event at its bytes in the program (what the grammar
    # forced has none: the gaps between events), and the events' texts spell the program.
    written = blocks.encode("utf-8")
    tokens = [e for e in events if isinstance(e, TokenEvent | SpanEvent)]
    assert all(a.end <= b.start for a, b in itertools.pairwise(tokens))
    assert all(written[e.start:e.end] == bytes([e.token_id]) for e in tokens
               if isinstance(e, TokenEvent))
    assert all(written[e.start:e.end] == bytes(e.token_ids) for e in tokens
               if isinstance(e, SpanEvent))
    assert "".join(e.text for e in events if isinstance(e, TokenEvent | SpanEvent | DoneEvent)) \
        == blocks


def test_the_prompt_shows_the_document_unnumbered_and_an_example_in_blocks() -> None:
    session = session_writing(BLOCKS)
    assert isinstance(session.prompt_builder, SearchReplacePromptBuilder)
    prompt = session.prompt(DOCUMENT, "Return y - 1.")
    assert "Document:\n" + DOCUMENT in prompt
    assert BLOCK_OPEN + "    return width + height\n" + DIVIDER in prompt


@pytest.mark.parametrize("options", [{"engine": "outlines"}, {"verify_copies": True},
                                     {"copy_to_end": True}])
def test_options_for_copy_tags_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match="search_replace"):
        session_writing(BLOCKS, **options)


def test_replay_needs_a_tag_syntax() -> None:
    with pytest.raises(ConfigError, match="replay"):
        replay(session_writing(BLOCKS), DOCUMENT, Program())


def test_the_config_takes_the_syntax() -> None:
    from copygram.config import parse_config

    assert parse_config({"route": {"syntax": "search_replace"}}).session.syntax == "search_replace"
    with pytest.raises(ConfigError, match="verify_copies"):
        parse_config({"route": {"syntax": "search_replace", "verify_copies": True}})


def test_a_replacement_is_drafted_from_its_search_lines_and_verified() -> None:
    # The replacement repeats its two search lines but for one character.
    blocks = (BLOCK_OPEN + "    y = x\n    return y + 1\n" + DIVIDER
              + "    y = x\n    return y - 1\n" + BLOCK_CLOSE)
    plain = session_writing(blocks, draft_tokens=0).edit(DOCUMENT, "y - 1")
    drafted = session_writing(blocks).edit(DOCUMENT, "y - 1")
    assert drafted.program_text == plain.program_text == blocks
    assert drafted.text == plain.text == DOCUMENT.replace("y + 1", "y - 1")
    assert drafted.stats.drafted_tokens > 10
    assert drafted.stats.forwards < plain.stats.forwards


def test_the_unit_scope_shows_a_whole_function_in_its_example() -> None:
    for scope, n_lines in (("lines", 1), ("unit", 3)):
        messages = SearchReplacePromptBuilder(scope=scope).messages(DOCUMENT, "x")
        example_document = messages[1]["content"].split("Document:\n", 1)[1]
        blocks = messages[2]["content"]
        (block,) = parse_blocks(blocks, split_lines(example_document))
        assert block.search.n_lines == n_lines
        assert blocks.count("\n", 0, blocks.index(DIVIDER)) == 1 + n_lines
        fixed = resolve(parse(blocks, example_document), example_document)
        assert fixed == example_document.replace("width + height", "width * height", 1)
    with pytest.raises(ConfigError, match="search_scope"):
        SearchReplacePromptBuilder(scope="file")


BRACED = "const f = (x) => {\n  return x + 1;\n}\n"


@pytest.mark.parametrize("plan", [False, True])
@pytest.mark.parametrize("document", [DOCUMENT, BRACED])
def test_the_head_example_changes_a_function_below_the_first_line(plan: bool,
                                                                  document: str) -> None:
    messages = SearchReplacePromptBuilder(scope="head", plan=plan).messages(document, "x")
    example_document = messages[1]["content"].split("Document:\n", 1)[1]
    # The example is laid out as the document is: bodies closed by a brace, or by indentation.
    assert example_document.endswith("}\n") == (document == BRACED)
    lines = split_lines(example_document)
    answer = messages[2]["content"]
    assert answer.startswith(PLAN_PREFIX) == plan
    blocks = answer.split("\n", 1)[1] if plan else answer
    assert blocks.count("\n", 0, blocks.index(DIVIDER)) == 2  # the search part: one line
    (block,) = parse_blocks(blocks, lines, heads=True)
    assert block.search.start > 1  # the head of a later function, not line 1
    assert block.search.start + block.search.n_lines - 1 == len(lines)  # all of that function
    fixed = resolve(parse(blocks, example_document, heads=True), example_document)
    old, new = ("PI * radius;", "2 * PI * radius;") if document == BRACED else (
        "math.pi * radius\n", "2 * math.pi * radius\n")
    assert fixed == example_document.replace(old, new)
    # The function written again ends with its closing line, as the document's do.
    assert blocks.endswith(("}\n" if document == BRACED else "radius\n") + BLOCK_CLOSE)


def test_a_long_search_run_is_drafted_from_the_document() -> None:
    # The whole function, searched and written again with one change.
    function = "def f(x):\n    y = x\n    return y + 1\n"
    blocks = BLOCK_OPEN + function + DIVIDER + function.replace("+", "-") + BLOCK_CLOSE
    plain = session_writing(blocks, draft_tokens=0).edit(DOCUMENT, "y - 1")
    drafted = session_writing(blocks).edit(DOCUMENT, "y - 1")
    assert drafted.program_text == plain.program_text == blocks
    # Search lines past the first are drafted (the rest of the run), not chosen line by line.
    assert drafted.stats.forwards < plain.stats.forwards
    assert drafted.stats.decoded_tokens < plain.stats.decoded_tokens - 2


def test_inside_a_search_part_the_draft_is_the_rest_of_the_run() -> None:
    from copygram.decode.drafting.blocks import BlockDrafter

    backend = ScriptedBackend(DOCUMENT, reply="")
    drafter = BlockDrafter(split_lines(DOCUMENT), backend.tokenize, backend.token_bytes(),
                           DraftConfig(adaptive=False))
    program = BLOCK_OPEN + "    y = x\n    ret"
    draft = drafter.propose(backend.tokenize(program))
    assert draft is not None and draft.source == "run"
    assert backend.detokenize(draft.tokens) == "urn y + 1\n\n\ndef g():\n"[:len(draft.tokens)]
    # Before the run's first line is complete the model chooses where it starts: no draft.
    first = BLOCK_OPEN + "    y"
    assert drafter.propose(backend.tokenize(first)) is None


def test_merge_retyped_takes_a_replacements_retyped_neighbours_into_its_run() -> None:
    # The model searches one line, then writes the fix and the next line again.
    reply = (BLOCK_OPEN + "    y = x\n" + DIVIDER + "    y = 2 * x\n    return y + 1\n"
             + BLOCK_CLOSE)
    fixed = DOCUMENT.replace("y = x\n", "y = 2 * x\n")
    as_written = session_writing(reply).edit(DOCUMENT, "Double y.")
    assert as_written.text == fixed.replace("    return y + 1\n", "    return y + 1\n" * 2, 1)
    merged = session_writing(reply, merge_retyped=True).edit(DOCUMENT, "Double y.")
    assert merged.text == fixed and merged.program_text == reply
    assert merged.program == parse(reply, DOCUMENT, merge=True)


def test_merge_retyped_needs_blocks() -> None:
    from copygram.config import parse_config

    with pytest.raises(ConfigError, match="merge_retyped"):
        parse_config({"route": {"syntax": "lines", "merge_retyped": True}})
    with pytest.raises(ConfigError, match="merge_retyped"):
        EditSession(ScriptedBackend(DOCUMENT, reply=""), on_damage="keep",
                    syntax="compact", merge_retyped=True, mode="program")
    assert parse_config({"route": {"syntax": "search_replace", "merge_retyped": True}}).session.merge_retyped


def test_search_plan_asks_for_a_plan_line_and_the_edit_is_the_blocks_after_it() -> None:
    plan = "Plan: f returns y + 1; it must return y - 1.\n"
    session = session_writing(plan + BLOCKS, search_plan=True)
    prompt = session.prompt(DOCUMENT, "Return y - 1.")
    assert "Before the blocks, write one line that starts with `Plan:`" in prompt
    assert "Plan: area adds width and height; it must multiply them.\n" + BLOCK_OPEN in prompt
    result = session.edit(DOCUMENT, "Return y - 1.")
    assert result.program_text == plan + BLOCKS
    assert result.text == session_writing(BLOCKS).edit(DOCUMENT, "Return y - 1.").text
    # Without the option the prompt asks for no plan, and the constraint admits none.
    assert "Plan:" not in session_writing(BLOCKS).prompt(DOCUMENT, "Return y - 1.")
    with pytest.raises(CopygramError):
        session_writing(plan + BLOCKS).edit(DOCUMENT, "Return y - 1.")


def test_search_plan_needs_blocks() -> None:
    from copygram.config import parse_config

    with pytest.raises(ConfigError, match="search_plan"):
        parse_config({"route": {"syntax": "lines", "search_plan": True}})
    config = parse_config({"route": {"syntax": "search_replace", "search_plan": True}})
    assert config.session.search_plan


def test_a_head_block_writes_the_unit_once_drafted_from_the_unit() -> None:
    # The model names f by its first line and writes f again, changed: the drafts are f's lines.
    function = "def f(x):\n    y = x\n    return y + 1\n"
    reply = BLOCK_OPEN + "def f(x):\n" + DIVIDER + function.replace("+", "-") + BLOCK_CLOSE
    plain = session_writing(reply, search_scope="head", draft_tokens=0)
    drafted = session_writing(reply, search_scope="head")
    assert "its first line, exactly as it is in the document" in drafted.prompt(DOCUMENT, "x")
    assert BLOCK_OPEN + "def perimeter(radius):\n" + DIVIDER in drafted.prompt(DOCUMENT, "x")
    results = [session.edit(DOCUMENT, "y - 1") for session in (plain, drafted)]
    for result in results:
        assert result.program_text == reply
        assert result.text == DOCUMENT.replace("y + 1", "y - 1")
    assert results[1].stats.drafted_tokens > len("    y = x\n")
    assert results[1].stats.forwards < results[0].stats.forwards
    # Read as a lines-scope block, the same text would have replaced the head line only.
    assert session_writing(reply).edit(DOCUMENT, "y - 1").text != results[0].text


def test_the_head_scope_needs_blocks() -> None:
    from copygram.config import parse_config

    with pytest.raises(ConfigError, match="search_scope"):
        parse_config({"route": {"syntax": "lines", "search_scope": "head"}})
    with pytest.raises(ConfigError, match="search_scope"):
        EditSession(ScriptedBackend(DOCUMENT, reply=""), on_damage="keep",
                    syntax="lines", search_scope="head", mode="program")
    session = EditSession.from_config(
        {"route": {"syntax": "search_replace", "search_scope": "head"}},
        backend=ScriptedBackend(DOCUMENT, reply=""))
    assert session.options.search_scope == "head" and session.setup().heads
    assert session.derive(mode="program").options.search_scope == "head"


def test_program_mode_writes_head_blocks_by_default() -> None:
    from copygram.config import parse_config

    # docs/quality.md: head blocks pass the most tests of the program-mode routes.
    function = "def f(x):\n    y = x\n    return y + 1\n"
    reply = BLOCK_OPEN + "def f(x):\n" + DIVIDER + function.replace("+", "-") + BLOCK_CLOSE
    session = EditSession(ScriptedBackend(DOCUMENT, reply=reply), mode="program")
    assert (session.options.syntax, session.options.search_scope) == (SEARCH_REPLACE, "head")
    assert session.derive(mode="rewrite").derive(mode="program").options.search_scope == "head"
    result = session.edit(DOCUMENT, "Return y - 1.")
    assert result.program_text == reply
    assert result.text == DOCUMENT.replace("y + 1", "y - 1")
    config = parse_config({}).session
    assert (config.syntax, config.search_scope) == (SEARCH_REPLACE, "head")
    assert parse_config({"route": {"search_scope": "unit"}}).session.search_scope == "unit"
    # A written-out config reads back the same (to_dict writes what was set).
    assert parse_config(parse_config({}).to_dict()).session == config
    # The outlines engine compiles one regex, which cannot hold blocks: copy tags there.
    tags = EditSession(ScriptedBackend(DOCUMENT, reply=""), on_damage="keep", engine="outlines",
                       mode="program")
    assert (tags.options.syntax, tags.options.search_scope) == ("lines", "lines")
    assert parse_config({"route": {"engine": "outlines"}}).session.syntax == "lines"
    with pytest.raises(ConfigError, match='engine "outlines" write copy tags: syntax = "lines"'):
        parse_config({"route": {"engine": "outlines", "syntax": "search_replace"}})


# -- touch_named: a program held to reach the definitions its instruction names ------------------

def test_a_program_is_held_to_reach_the_definition_its_instruction_names() -> None:
    head_f = BLOCK_OPEN + "def f(x):\n" + DIVIDER + "def f(x):\n    return x\n" + BLOCK_CLOSE
    named = session_writing(head_f, search_scope="head").edit(DOCUMENT, "Fix bugs in f.",
                                                             language="python")
    assert named.stats.touch_ranges == 1 and named.program_text == head_f
    # Not where the instruction names no definition, nor without the document's language
    # (a teacher's replay), nor with touch_named off.
    session = session_writing(head_f, search_scope="head")
    assert session.edit(DOCUMENT, "Make it faster.", language="python").stats.touch_ranges == 0
    assert session.edit(DOCUMENT, "Fix bugs in f.").stats.touch_ranges == 1  # guessed: python
    off = session_writing(head_f, search_scope="head", touch_named=False)
    assert off.edit(DOCUMENT, "Fix bugs in f.", language="python").stats.touch_ranges == 0
    # A model that would end after a block elsewhere is held to go on (this scripted one then
    # has nothing to write and runs out of budget): its program never stops short of g.
    with pytest.raises(GenerationError) as caught:
        session.edit(DOCUMENT, "Fix bugs in g.", language="python")
    assert caught.value.partial_program.startswith(head_f)
    assert session_writing(head_f, search_scope="head", touch_named=False).edit(
        DOCUMENT, "Fix bugs in g.", language="python").program_text == head_f


def test_touch_named_needs_blocks() -> None:
    with pytest.raises(ConfigError, match="touch_named acts on search/replace blocks"):
        EditSession(ScriptedBackend(DOCUMENT), syntax="lines", touch_named=True,
                    mode="program")
    assert EditSession(ScriptedBackend(DOCUMENT), syntax="lines", mode="program").options \
        .touch_named is False


# -- focus_tokens: a long document shown as a view of what the instruction names ----------------

LONG = "import math\n" + "".join(
    f"\n\ndef f{i}(x):\n" + "".join(f"    x = x * {j} + {i}\n" for j in range(6))
    + "    return x\n" for i in range(10))


def test_a_long_document_is_shown_as_a_view_and_edited_whole() -> None:
    fixed = "def f7(x):\n    return x - 7\n"
    reply = BLOCK_OPEN + "def f7(x):\n" + DIVIDER + fixed + BLOCK_CLOSE
    session = EditSession(ScriptedBackend(LONG, reply=reply), mode="program", on_damage="keep",
                          focus_tokens=200)
    prompt = session.prompt(LONG, "Fix bugs in f7.", language="python")
    assert "def f7(x):\n    x = x * 0 + 7\n" in prompt and "def f2(x):" not in prompt
    assert "import math\n\n\n# ... lines 4-" in prompt
    assert len(prompt) < len(session.derive(focus_tokens=0).prompt(LONG, "Fix bugs in f7.")) / 2
    result = session.edit(LONG, "Fix bugs in f7.", language="python")
    start = LONG.index("def f7(x):")
    end = LONG.index("\n\n\ndef f8")
    assert result.text == LONG[:start] + fixed.rstrip("\n") + LONG[end:]
    assert result.stats.prompt_tokens == len(session.backend.tokenize(prompt, special=True))
    # The whole document: at most focus_tokens tokens, focus_tokens 0, an instruction that
    # names no definition, or copy tags (their copies name line numbers).
    for shown in (session.derive(focus_tokens=len(LONG)), session.derive(focus_tokens=0)):
        assert LONG in shown.prompt(LONG, "Fix bugs in f7.", language="python")
    assert LONG in session.prompt(LONG, "Make it faster.", language="python")
    tags = EditSession(ScriptedBackend(LONG, reply=""), mode="program", syntax="lines",
                       focus_tokens=200)
    assert "def f2(x):" in tags.prompt(LONG, "Fix bugs in f7.", language="python")


def test_the_document_first_order_keeps_the_whole_document_for_the_next_edit() -> None:
    # That order exists so that the next edit of the document reuses its KV.
    session = EditSession(ScriptedBackend(LONG, reply=""), mode="program", focus_tokens=200,
                          prompt_order="document_first")
    assert LONG in session.prompt(LONG, "Fix bugs in f7.", language="python")
