"""The public facade: EditSession's arguments and the names importable from copygram."""

from __future__ import annotations

import pytest

import copygram
from copygram import Copy, Gen, Program
from copygram.bench.replay import replay
from copygram.errors import ConfigError
from copygram.session import EditSession
from copygram.testing import ScriptedBackend

DOCUMENT = "def f(x):\n    return x + 1\n\n\nprint(f(2))\r\nend"
PROGRAM = Program([Copy(1, 1), Gen("    return x + 2\n"), Copy(3, 6), Gen("# done\n"), Copy(2, 2)])


def test_bad_session_arguments() -> None:
    backend = ScriptedBackend(DOCUMENT, PROGRAM)
    with pytest.raises(ConfigError):
        EditSession(backend, engine="nope", mode="program")
    with pytest.raises(ConfigError):
        EditSession.from_config({"backend": "llamacpp", "colour": "red"})
    # Checked before any model loads: "false" as a string would otherwise read as true.
    for key in ("splice_forced", "prompt_example"):
        with pytest.raises(ConfigError, match=f"{key}.*true or false"):
            EditSession.from_config({"backend": "llamacpp", "route": {key: "false"}})



def test_the_public_names_come_from_the_decode_package() -> None:
    from copygram.decode import events

    for name in ("EditResult", "TokenEvent", "SpanEvent", "CopyEvent", "DoneEvent"):
        assert getattr(copygram, name) is getattr(events, name)
    assert copygram.EditSession is EditSession


def test_edit_stream_and_replay_delegate_to_one_loop() -> None:
    session = EditSession(ScriptedBackend(DOCUMENT, PROGRAM), syntax="lines", ordered_copies=False,
                          on_damage="keep", mode="program")
    result = session.edit(DOCUMENT, "x")
    events = list(session.stream(DOCUMENT, "x"))
    last = events[-1]
    assert isinstance(last, copygram.DoneEvent) and last.result.program == result.program
    replayed = replay(session, DOCUMENT, result.program, measure_plain=False)
    assert replayed.text == result.text and replayed.plain is None
    assert replayed.copygram.program_tokens == result.stats.program_tokens


def test_prepare_builds_once_what_the_first_edit_would(monkeypatch: pytest.MonkeyPatch) -> None:
    from copygram.constraints import vocab

    built: list[object] = []
    real = vocab._build

    def counted(tokenizer: object) -> vocab.Vocab:
        built.append(tokenizer)
        return real(tokenizer)

    monkeypatch.setattr(vocab, "_build", counted)
    tags = ScriptedBackend(DOCUMENT, PROGRAM)
    EditSession(tags, mode="rewrite").prepare()  # rewrite mode has no constraint to build
    assert built == []
    session = EditSession(tags, syntax="lines", ordered_copies=False, on_damage="keep",
                          mode="program")
    session.prepare()
    assert built == [tags]
    assert session.edit(DOCUMENT, "x").text == copygram.resolve(PROGRAM, DOCUMENT)
    assert built == [tags]  # the edit found it built
    blocks = ScriptedBackend(DOCUMENT, reply="")
    EditSession(blocks, mode="program").prepare()  # head blocks, the default
    EditSession(blocks, mode="program").derive(mode="rewrite").derive(mode="program").prepare()
    assert built == [tags, blocks]


def test_every_public_name_resolves() -> None:
    # The package facade names what a user composes with: the session, its options and results,
    # the events of both kinds of run, sampling and drafts, the backend protocol and load.
    for name in copygram.__all__:
        assert getattr(copygram, name) is not None, name
    for name in ("Sampling", "DraftConfig", "RetractEvent", "TokenEvent", "SpanEvent",
                 "StopReason", "Backend", "load", "SessionConfig", "parse_config"):
        assert name in copygram.__all__
    assert copygram.__version__[0].isdigit()


def test_options_go_by_position_and_changes_by_name() -> None:
    from copygram.config import SessionConfig
    from copygram.errors import ConfigError

    backend = ScriptedBackend(DOCUMENT, PROGRAM)
    options = SessionConfig(mode="rewrite", temperature=0.5)
    session = EditSession(backend, options, seed=3)
    assert session.options == options.replace(seed=3) and session.mode == "rewrite"
    with pytest.raises(ConfigError, match="by position"):
        EditSession(backend, options=options)
    with pytest.raises(ConfigError, match="unknown option.*'temprature'"):
        EditSession(backend, temprature=0.5)


@pytest.mark.parametrize("mode", ["program", "rewrite", "auto"])
@pytest.mark.parametrize("syntax", ["", "lines"])
def test_prompt_order_puts_the_document_first_in_every_mode(mode: str, syntax: str) -> None:
    document = "def f():\n    return 1\n"
    session = EditSession(ScriptedBackend(document), mode=mode, syntax=syntax,
                          prompt_order="document_first")
    prompt = session.prompt(document, "Make f return 2.")
    # The task's turn is the last user turn (a worked example may come before it).
    task = prompt[prompt.rindex("Document:"):]
    assert task.index("return 1") < task.index("Instruction: Make f return 2.")
    default = EditSession(ScriptedBackend(document), mode=mode, syntax=syntax)
    task = default.prompt(document, "Make f return 2.")
    task = task[task.rindex("Instruction: Make f"):]
    assert task.index("Document:") < task.index("return 1")


def test_a_program_that_adds_a_function_is_told_how_a_block_adds_one() -> None:
    from copygram.decode.prompt import ADDITION_ADVICE

    document = "import math\n\n\ndef f():\n    return 1\n"
    session = EditSession(ScriptedBackend(document), mode="program")
    added = session.prompt(document, "Add a function `g_of(x)` that doubles x.")
    assert ADDITION_ADVICE in added
    assert ADDITION_ADVICE not in session.prompt(document, "Make f return 2.")
    # Rewrite mode writes the whole file: no blocks to advise on.
    rewrite = session.derive(mode="rewrite")
    assert ADDITION_ADVICE not in rewrite.prompt(document, "Add a function `g_of(x)`.")
