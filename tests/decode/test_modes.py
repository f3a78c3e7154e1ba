"""mode = "auto" (copygram.decode.modes): rewrite mode for a short document, program mode for a
long one, and the session runs the mode it picks (its result says which)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import EditSession
from copygram.config import (
    AUTO_PROGRAM_TOKENS,
    AUTO_REWRITE_TOKENS,
    FOCUS_TOKENS,
    SessionConfig,
)
from copygram.decode.events import DoneEvent, RedoEvent
from copygram.decode.modes import choose_mode
from copygram.decode.prompt import REWRITE_SYSTEM, RewritePromptBuilder
from copygram.errors import ConfigError
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.testing import PromptedBackend

DOCUMENT = "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y\n"
FIXED = DOCUMENT.replace("x + 1", "x + 2")
PROGRAM = BLOCK_OPEN + "def f(x):\n" + DIVIDER + "def f(x):\n    return x + 2\n" + BLOCK_CLOSE
# A rewrite the program could not have written, so the result shows which mode ran.
REWRITTEN = DOCUMENT.replace("x + 1", "x + 3")


def backend() -> PromptedBackend:
    return PromptedBackend(DOCUMENT, replies=((REWRITE_SYSTEM, REWRITTEN), ("", PROGRAM)))


@given(tokens=st.integers(0, 1 << 16), threshold=st.integers(0, 1 << 16),
       short=st.none() | st.integers(0, 1 << 16), prediction=st.booleans(), one=st.booleans(),
       docs=st.booleans(), listed=st.booleans(),
       language=st.sampled_from([None, "python", "java", "cpp"]),
       rewritten=st.sets(st.sampled_from(["java", "cpp", "rust"])), introduces=st.booleans(),
       placed=st.booleans(), part=st.booleans(), quoted=st.booleans(), renames=st.booleans(),
       focus=st.integers(0, 1 << 16))
def test_auto_programs_long_documents_and_short_targeted_edits(
        tokens: int, threshold: int, short: int | None, prediction: bool, one: bool,
        docs: bool, listed: bool, language: str | None, rewritten: set[str],
        introduces: bool, placed: bool, part: bool, quoted: bool, renames: bool,
        focus: int) -> None:
    chosen = choose_mode("auto", tokens, auto_rewrite_tokens=threshold,
                         auto_program_tokens=short, prediction=prediction,
                         names_definitions=one, documentation=docs, listed=listed,
                         language=language,
                         rewrite_languages=rewritten, introduces=introduces, placed=placed,
                         removes_part=part, passages=quoted, renames=renames,
                         focus_tokens=focus)
    always_rewritten = language in rewritten
    targeted = (one and not docs and not listed and not part
                and (short is None or tokens <= short))
    # a rename held to its uses, in a file long enough to be read from a view
    held_rename = renames and placed and 0 < focus < tokens
    assert chosen == ("rewrite" if prediction or always_rewritten
                      or (tokens <= threshold and not targeted and not held_rename)
                      or (tokens > threshold and introduces and not placed)
                      or (tokens > threshold and part and placed) or quoted else "program")
    for fixed in ("program", "rewrite"):  # the other modes are themselves whatever the edit
        assert choose_mode(fixed, tokens, auto_rewrite_tokens=threshold,
                           prediction=prediction, names_definitions=one, language=language,
                           rewrite_languages=rewritten) == fixed


def test_auto_rewrites_java_by_default_and_the_route_says_which_languages() -> None:
    java = "class A {\n    int f(int x) {\n        return x;\n    }\n}\n"
    session = EditSession(backend(), mode="auto", auto_rewrite_tokens=0)  # else: programs
    assert SessionConfig().auto_rewrite_languages == ("java",)
    assert session.mode_for(java, "Fix bugs in f.", language="java") == "rewrite"
    assert session.mode_for(java, "Fix bugs in f.") == "rewrite"  # the language guessed
    assert session.mode_for(DOCUMENT, "Fix f.") == "program"
    everything = EditSession(backend(), mode="auto", auto_rewrite_tokens=0,
                             auto_rewrite_languages=[])
    assert everything.mode_for(java, "Fix bugs in f.", language="java") == "program"
    assert EditSession(backend(), mode="auto", auto_rewrite_languages="python, java").options \
        .auto_rewrite_languages == ("python", "java")


def test_auto_is_the_default_mode() -> None:
    assert SessionConfig().mode == EditSession(backend()).mode == "auto"
    assert SessionConfig().auto_rewrite_tokens == AUTO_REWRITE_TOKENS


def test_an_auto_session_rewrites_a_short_document_unless_definitions_are_named() -> None:
    session = EditSession(backend(), mode="auto", auto_rewrite_tokens=len(DOCUMENT))  # bytes
    assert session.mode_for(DOCUMENT, "Make it faster.") == "rewrite"
    result = session.edit(DOCUMENT, "Make it faster.")
    assert (result.text, result.mode, result.redone) == (REWRITTEN, "rewrite", None)
    # Definitions named, no name introduced: head blocks' edit, so a program.
    assert session.mode_for(DOCUMENT, "Fix f.") == "program"
    assert session.mode_for(DOCUMENT, "Fix f and g.") == "rewrite"  # listed together
    # A part of a definition removed (its programs kept the line that used a removed
    # parameter, or changed a branch's condition): rewritten; a whole definition: a program.
    assert session.mode_for(DOCUMENT, "Remove the debug branch at the start of f.") == "rewrite"
    assert session.mode_for(DOCUMENT, "Remove the parameter x from f.") == "rewrite"
    assert session.mode_for(DOCUMENT, "Remove the function f; nothing calls it.") == "program"
    long = EditSession(backend(), mode="auto", auto_rewrite_tokens=0)  # every document long
    assert long.mode_for(DOCUMENT, "Make it faster.") == "program"
    # An added function of a long document: a program held to its place (after g, the last
    # definition); a new name with no place to hold it to (no definition there) is rewritten.
    assert long.mode_for(DOCUMENT, "Add a function `h_of` that doubles y.") == "program"
    assert long.mode_for("x = 1\n", "Add a function `h_of` that doubles x.") == "rewrite"
    assert session.mode_for(DOCUMENT, "Add a function `h_of` that doubles y.") == "rewrite"
    # A rename of a long document: a program held to the definition and its uses.
    assert long.mode_for(DOCUMENT, "Rename f to compute_f.") == "program"
    assert long.mode_for(DOCUMENT, "Rename f to compute_f and add `h_of`.") == "rewrite"
    assert session.edit(DOCUMENT, "Fix f.").mode == "program"
    # A rename's new name plain ("average", as in the stats.py) is a rename all the
    # same: a short document's is rewritten, not a program of head blocks.
    for other in ("Rename f to f_plus_one.", "Fix it.", "Rename the function f to increment."):
        assert session.mode_for(DOCUMENT, other) == "rewrite"
    # Longer than focus_tokens (a file read from a view): a rename is the held program there
    # too, and nothing else that introduces a name is.
    viewed = session.derive(focus_tokens=len(DOCUMENT) - 1)
    assert viewed.mode_for(DOCUMENT, "Rename the function f to increment.") == "program"
    assert viewed.mode_for(DOCUMENT, "Add a function `h_of` that doubles y.") == "rewrite"
    assert viewed.mode_for(DOCUMENT, "Make it faster.") == "rewrite"
    assert session.derive(focus_tokens=0).mode_for(DOCUMENT, "Rename f to g_of.") == "rewrite"


def test_an_auto_session_rewrites_a_mid_sized_document_whatever_its_instruction_names() -> None:
    # By default no band: a program's file of 50-300 lines reads a view (focus_tokens).
    assert SessionConfig().auto_program_tokens == AUTO_PROGRAM_TOKENS == AUTO_REWRITE_TOKENS
    assert SessionConfig().focus_tokens == FOCUS_TOKENS < AUTO_PROGRAM_TOKENS
    tokens = len(DOCUMENT)  # bytes: the scripted backend's tokens
    mid = EditSession(backend(), mode="auto", auto_rewrite_tokens=tokens,
                      auto_program_tokens=tokens - 1)
    assert mid.mode_for(DOCUMENT, "Fix f.") == "rewrite"
    assert mid.edit(DOCUMENT, "Fix f.").mode == "rewrite"
    short = mid.derive(auto_program_tokens=tokens)
    assert short.mode_for(DOCUMENT, "Fix f.") == "program"
    assert short.mode_for(DOCUMENT, "Make it faster.") == "rewrite"
    # Documentation alone is rewritten, short or not.
    assert short.mode_for(DOCUMENT, "Replace the docstring of f with one line.") == "rewrite"
    assert short.mode_for(DOCUMENT, "Fix bugs in f and g.") == "rewrite"  # listed together
    # Past auto_rewrite_tokens every document gets a program, as before.
    assert mid.derive(auto_rewrite_tokens=tokens - 1).mode_for(DOCUMENT, "Fix f.") == "program"


def test_an_auto_session_writes_a_program_for_a_longer_document() -> None:
    session = EditSession(backend(), mode="auto", auto_rewrite_tokens=len(DOCUMENT) - 1)
    assert session.mode_for(DOCUMENT, "Make it faster.") == "program"
    events = list(session.stream(DOCUMENT, "Fix f."))
    assert not any(isinstance(e, RedoEvent) for e in events)
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert (done.result.text, done.result.mode) == (FIXED, "program")
    # A prediction drafts a rewrite, so an edit that brings one is rewritten.
    assert session.mode_for(DOCUMENT, "Fix f.", prediction=FIXED) == "rewrite"
    assert session.edit(DOCUMENT, "Fix f.", prediction=FIXED).mode == "rewrite"


def test_the_threshold_is_checked_and_travels_with_derived_sessions() -> None:
    with pytest.raises(ConfigError, match="auto_rewrite_tokens"):
        EditSession(backend(), auto_rewrite_tokens=-1)
    with pytest.raises(ConfigError, match="auto_rewrite_tokens"):
        SessionConfig(auto_rewrite_tokens=1.5)  # type: ignore[arg-type]
    session = EditSession(backend(), mode="auto", auto_rewrite_tokens=7)
    assert session.derive(mode="program").derive(mode="auto").options.auto_rewrite_tokens == 7
    # An auto session's programs use its own prompt, as program mode's do.
    assert session.derive(mode="program").prompt_builder == session.prompt_builder
    assert session.derive(mode="rewrite").prompt_builder != session.prompt_builder
    custom = session.with_prompt(RewritePromptBuilder())
    assert custom.derive(mode="program").prompt_builder is custom.prompt_builder
    assert custom.derive(mode="rewrite").prompt_builder == RewritePromptBuilder()
    assert custom.derive(mode="program", temperature=0.5).prompt_builder is custom.prompt_builder
