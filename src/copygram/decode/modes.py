"""Which mode edits a document when the session's mode is ``"auto"`` (the default).

Rewrite mode is plain greedy decoding of the whole file, the document drafting it
(docs/rewrite.md): its output is the model's own rewrite token for token, so it is as right as
the model is on every kind of edit, and a short file costs it little more than a program (the
draft is verified in a few batched forwards). Its cost grows with the file: every line is
verified again, and a verify forward at a long context is slow on a CPU. Program mode decodes
only what changes, so its cost barely grows with the file, but a small model places its blocks
less surely than it rewrites (docs/quality.md, "Which mode edits by default": the measurements
per kind and size that set :data:`~copygram.config.AUTO_REWRITE_TOKENS`).

So ``"auto"`` writes a program for a document longer than ``auto_rewrite_tokens`` tokens
(where the instruction introduces a name the document lacks, only where the program can be
held to the places the edit needs: a rename's definition and uses, docs/quality.md, "Renames
in files of 300-1,500 lines"; an added function or constant's place after the file's head or
its last definition, :mod:`copygram.language.additions`; before, a 728-line Python file's
"Add a function prod_signs" gave a free program that never wrote it, redone at the cost of
both; where it removes part of a definition it names, a rewrite of the excerpt that holds it,
:mod:`copygram.decode.scoped`, refused where it misses: on the six large rows of that kind the
excerpt's rewrites passed 4, the programs 3, whole-file rewrites 1 in 38 times the time; in
prose, where the instruction quotes the passages the edit lies in, a rewrite of those passages
at any length, :mod:`copygram.language.passages`: asked to revise one paragraph of a short text,
the default model's whole-text rewrite was that paragraph alone), and
for one of at most ``auto_program_tokens`` (as long as ``auto_rewrite_tokens`` by default:
every document) where the instruction names the document's definitions and introduces no new
name
(:func:`~copygram.language.targets.targets_definitions`: "Fix bugs in median", "Remove the
function f": the edit of code the document has, which head blocks name and rewrite, where
program mode passes more tests than a rewrite), unless it asks for documentation only
(docstrings or comments: the model's programs there were redone 5 of 6 times on the small
edit-kinds rows, for the tests a rewrite passes) or lists several definitions together ("Fix
bugs in f, g and h": 6 of 6 programs missed one and were redone) or removes a part of a
definition ("Remove the debug branch at the start of f", "Remove the parameter calls from f":
programs changed the branch's condition, or the signature alone and kept the line that used the
parameter: 7 of 12 small rows, each parameter's program redone, against rewrite mode's 10; a
whole definition's removal stays a program, 6 of 6 against 0 of 6); other short documents (a
rename, an added
function or constant, an instruction naming no definition) are rewritten, but a rename in a
file of more than ``focus_tokens`` gets the program held to its definition and uses that a
long file's rename gets (on the dev split's medium rows the whole file's rewrite had missed a
use or renamed something else: 0 of 3 such rows' renames passed, the held programs 3 of 3 in a
tenth of the time; docs/quality.md, "Renames in files of 50-300 lines"). A program for a
file of more than ``focus_tokens`` (~50 lines) reads a view of it, the definitions the
instruction names and their neighbours (:data:`~copygram.config.FOCUS_TOKENS`): on files of
50-300 lines the default model's programs had been redone more often than not when they read
the whole file, and they pass as many tests as its rewrite or more from the view
(:data:`~copygram.config.AUTO_PROGRAM_TOKENS`). Either way the result is checked
(:mod:`copygram.decode.checked`) and a program that is damaged, unfinished or misses what the
instruction names is redone in rewrite mode. A ``prediction`` drafts a rewrite,
so an edit given one is rewritten; so is every document in a language of
``auto_rewrite_languages`` (Java by default: the model's programs there are redone more often
than not; :data:`~copygram.config.AUTO_REWRITE_LANGUAGES`). The choice costs a parse of the
document (milliseconds); its tokens are counted for the edit anyway.
"""

from __future__ import annotations

from collections.abc import Collection

from copygram.config import MODES


def choose_mode(mode: str, document_tokens: int, *, auto_rewrite_tokens: int,
                auto_program_tokens: int | None = None, prediction: bool = False,
                names_definitions: bool = False, documentation: bool = False,
                listed: bool = False, language: str | None = None,
                rewrite_languages: Collection[str] = (), introduces: bool = False,
                placed: bool = False, removes_part: bool = False, passages: bool = False,
                renames: bool = False, focus_tokens: int = 0) -> str:
    """The mode (``"program"`` or ``"rewrite"``) that edits a document of ``document_tokens``
    tokens in a session of ``mode`` (``"program"`` and ``"rewrite"`` choose themselves; module
    doc for ``"auto"``); ``prediction``: whether the edit brings a predicted output;
    ``names_definitions``: whether the instruction names definitions of the document and introduces
    no name (:func:`~copygram.language.targets.targets_definitions`); a document whose
    ``language`` is one of ``rewrite_languages`` is always rewritten; a document of more than
    ``auto_program_tokens`` tokens (``None``: no such bound) and at most
    ``auto_rewrite_tokens`` is rewritten whatever its instruction names, and so is one whose
    instruction asks for ``documentation`` only
    (:func:`~copygram.language.targets.documentation_only`) or ``listed`` several definitions
    together (:func:`~copygram.language.targets.lists_definitions`); a longer document is
    rewritten where the instruction ``introduces`` a name the document lacks
    (:func:`~copygram.language.targets.introduces_names`), but where the edit is ``placed``:
    a program can be held to the places it needs (:func:`~copygram.language.targets.named_reach`:
    a rename's definition and uses, an added unit's place, the definitions a new parameter goes
    into); a document whose instruction ``removes_part`` of a definition
    (:func:`~copygram.language.targets.removes_part`) is rewritten, a long one where it is
    ``placed`` (on its excerpt: the session scopes it), and so is a prose document of any length
    whose instruction names the ``passages`` the edit lies in (quoting or counting them)
    (:func:`~copygram.language.passages.named_passages`; on their excerpt); an instruction that
    ``renames`` a definition (:func:`~copygram.language.targets.renames`) where the program is
    ``placed`` gets a program in any document of more than ``focus_tokens`` tokens (0: none),
    which it reads from a view (:func:`~copygram.decode.loop.prompt_document`)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    if mode != "auto":
        return mode
    # passages: a rewrite of the passages' excerpt, whatever the text's length (the session
    # scopes it)
    if prediction or passages or (language is not None and language in rewrite_languages):
        return "rewrite"
    if document_tokens > auto_rewrite_tokens:
        if removes_part and placed:
            return "rewrite"  # of the excerpt that holds it (the session scopes it)
        return "rewrite" if introduces and not placed else "program"
    if renames and placed and 0 < focus_tokens < document_tokens:
        return "program"  # held to the definition and its uses, read from a view
    short = auto_program_tokens is None or document_tokens <= auto_program_tokens
    one_place = names_definitions and not documentation and not listed and not removes_part
    return "program" if one_place and short else "rewrite"


__all__ = ["choose_mode"]
