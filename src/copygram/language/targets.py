"""Whether an edit reached what its instruction names: the check that sends a program which
edited the wrong place to rewrite mode.

A small model writing an edit program sometimes places its block on the wrong function: asked to
"Replace the docstring of below_zero", it rewrites ``is_sorted``; asked to add a constant, it
edits a function. The file is sound, so :mod:`copygram.language.damage` sees nothing, but the
edit missed. Read against the instruction, two things show it:

* the instruction mentions names the document **defines** (functions, methods, classes,
  module-level variables; Python through :mod:`ast`, JavaScript, TypeScript, Java, C, C++, Go
  and Rust through tree-sitter, where its grammar is installed) and the edit left every one of
  those definitions untouched: no line of any (with the comment block right above it) changed,
  nothing was inserted inside one; blank lines and trailing spaces do not count. One reached is
  enough: "Fix median: it must return the mean of the two middle values" names ``mean`` in
  passing; but names the instruction lists together ("Fix bugs in parse and render", "a, b and
  c") are each a target, and so is each sentence that commands an edit (it starts with add,
  fix, give, change, update...: "Add a last parameter calls=None to f: ... Give g a parameter
  calls too and pass it on in its call of f": one of the names each names; a program that
  changed ``g`` alone missed ``f``);
* a name the instruction **introduces** (written as code: in backticks, or in snake_case or
  lowerCamelCase, or given a value, "a parameter calls=None", or named as a definition to add,
  "Add a function fib(n)"; and found nowhere
  in the document) that the result still does not hold. Other plain words, capitals and
  CapitalisedCamelCase are left out: "sum(" in an instruction's prose may be an example, and
  "README", "GitHub" or "API" name things outside the file;
* where the instruction **targets definitions** (it names some and introduces no name: "Fix
  bugs in strlen"), an edit that also changed inside a definition it does not name (one that
  neither holds a named one nor lies in one): asked to fix ``strlen``, a program that fixed it
  and then rewrote ``add`` and ``largest_divisor`` too, breaking both. Lines outside every
  definition (imports, constants) may change;
* an instruction that asks to **remove** a definition ("Remove the function f", "delete the
  unused method `g`": the name right after the verb and its describing words) and an edit
  after which the file still defines it: a model asked to remove a function that writes it
  again, changed, reached it but did not remove it;
* an instruction that asks to **rename** a definition ("Rename the function f to g and update
  every call of it": :func:`renames`) and an edit whose code still uses the old name (a
  mention in a comment or docstring aside), or that changed a definition holding no use of it
  (a rename program that renamed four more functions with the same prefix);
* an instruction that asks for **documentation only** (it speaks of docstrings or comments,
  and, outside the text it quotes, of no code work: no fix, bug, rename, implement, refactor,
  optimise, handle, raise or return) and an edit that changed the code itself: Python's syntax
  tree without its docstrings, or another language's tree-sitter leaves without their comments,
  differ. Asked to replace a docstring, a program that writes its function
  again sometimes rewrites the body too;
* a docstring or block comment the instruction **quotes** (``\"\"\"...\"\"\"``, ``'''...'''``,
  ``/* ... */``) that neither the document nor the result holds as a docstring or comment (white
  space aside; a ``//`` or ``#`` comment counts): asked for the one-line docstring ``\"\"\"You are
  given a list of integers.\"\"\"``, a program that changed one line of the old one;
* an edit that writes a sentence of the instruction's own words that commands the edit ("Add a
  last parameter calls=None to f:", "Give g ...": :data:`~copygram.language.asks.ECHO_WORDS`
  or more words, outside what it quotes) into the file where the document did not hold it: a
  program that replaced a function's body by a docstring quoting the instruction. What an instruction describes ("Given
  a positive integer n, return ...") may become a new function's docstring, and is left out.

Each is a miss, not damage to the file: :mod:`copygram.decode.checked` redoes such a program in
rewrite mode and refuses a redo that still misses, and refuses a rewrite for a ``certain`` miss.
A mention is a weak signal (an instruction may name a function it only talks about): a false
alarm costs a rewrite. Cost: a parse of the document and a line diff (milliseconds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from copygram.language.additions import (
    added_names,
    addition_places,
    body_start,
    empty_definitions,
)
from copygram.language.asks import (
    FOR_FILE,
    asked_renames,
    command_sentences,
    commanded,
    commanded_removals,
    documentation_only,
    flat,
    introduced,
    listed_together,
    quoted_for_file,
    removed_names,
)
from copygram.language.definitions import callers, code_only, definitions, using
from copygram.language.line_changes import changed_ranges, touches
from copygram.language.lines import split_lines
from copygram.language.types import MAX_REACH, Reach, Scope

_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def find_misses(before: str, after: str, instruction: str, language: str | None, *,
                certain: bool = False) -> tuple[str, ...]:
    """What the edit ``before`` -> ``after`` missed of ``instruction`` (module doc), each as a
    sentence; empty where it reached every name the instruction mentions. ``language``: the
    document's (Python and the tree-sitter languages above read definitions; any other, or
    ``None``, the introduced names alone). ``certain``: only the misses no reference edit of the
    dev split shows (a removal kept, a rename's old name left or its strays, a quoted comment
    never written, an added stub or copy)."""
    words = set(_WORD.findall(instruction))
    misses: list[str] = []
    regions = definitions(before, language)
    named = [] if certain else sorted(words & set(regions))
    # The line diff only where a named definition needs it.
    changed = changed_ranges(split_lines(before), split_lines(after)) if named else []
    def reached(name: str) -> bool:
        return any(touches(changed, start, end) for start, end in regions[name])

    if named and not any(reached(name) for name in named):
        listed = ", ".join(named)
        misses.append(f"the instruction names {listed} and the edit left "
                      f"{'its definition' if len(named) == 1 else 'each definition'} as it was")
    elif named:
        for group in listed_together(instruction, regions):
            left = [name for name in group if not reached(name)]
            if left:
                were = "it was" if len(left) == 1 else "they were"
                misses.append(f"the instruction lists {' and '.join(group)} together and the "
                              f"edit left {', '.join(left)} as {were}")
    if named and misses == []:
        for group in commanded(instruction, regions):
            if not any(reached(name) for name in group):
                misses.append(f"a sentence of the instruction asks for an edit in "
                              f"{' or '.join(group)} and the edit left "
                              f"{'it' if len(group) == 1 else 'each'} as it was")
    if misses == [] and named and targets_definitions(before, instruction, language):
        strayed = _strayed(regions, named, changed)
        if strayed:
            misses.append(f"the instruction names {', '.join(named)} and the edit also changed "
                          f"{', '.join(strayed)}, which it does not name")
    if regions:
        kept = [name for name in removed_names(instruction) if name in regions
                and name in definitions(after, language)]
        misses += [f"the instruction asks to remove {name} and the edit kept its definition"
                   for name in kept]
    pairs = renames(before, instruction, language) if regions else ()
    misses += [f"the instruction renames {old} to {new} and the edit left code that uses {old}"
               for old, new in pairs if _uses(after, old, language)]
    if pairs:
        scope = rename_scope(before, instruction, language)
        within = [name for name, spans in regions.items()
                  if any(a <= end and start <= b for a, b in spans for start, end in scope)]
        changed = changed_ranges(split_lines(before), split_lines(after))
        strayed = _strayed(regions, within, changed)
        if strayed:
            misses.append(f"the instruction renames {', '.join(old for old, _ in pairs)} and "
                          f"the edit also changed {', '.join(strayed)}, which do not use it")
    if not certain and documentation_only(instruction) and _code_changed(before, after, language):
        misses.append("the instruction asks for documentation only and the edit changed the "
                      "code")
    flat_before, flat_after = flat(before), flat(after)
    quoted = quoted_for_file(instruction)
    held = _written(before) | _written(after) if quoted else frozenset()
    for text in quoted:
        if text not in held:
            misses.append(f"the instruction quotes {_short(text)!r} for the file and the edit "
                          "never wrote it")
    for sentence in () if certain else command_sentences(instruction):
        if sentence in flat_after and sentence not in flat_before:
            misses.append(f"the edit wrote the instruction's words {_short(sentence)!r} into "
                          "the file")
    present_before = set(_WORD.findall(before))
    present_after = set(_WORD.findall(after))
    for name in sorted(set() if certain else introduced(instruction) - present_before):
        if name not in present_after:
            misses.append(f"{name} is introduced by the instruction and the edit never wrote it")
    misses += _unwritten_additions(before, after, instruction, language)
    return tuple(misses)


def _unwritten_additions(before: str, after: str, instruction: str,
                         language: str | None) -> list[str]:
    """A definition the instruction adds that the edit wrote as its header alone (nothing in
    its body but documentation) or with another definition's body, line for line: the default
    model's added functions on the large rows were both, and their files parsed."""
    added = added_names(before, instruction) & set(_WORD.findall(after))
    if not added:
        return []
    misses = [f"the edit added {name} with nothing in its body"
              for name in sorted(empty_definitions(after, added, language))]
    old_lines, new_lines = split_lines(before), split_lines(after)
    bodies = {"".join(old_lines[body_start(old_lines, name, start, end) - 1:end]).strip(): name
              for name, spans in definitions(before, language).items() for start, end in spans}
    bodies.pop("", None)
    for name, spans in sorted(definitions(after, language).items()):
        if name not in added:
            continue
        copied = {bodies.get("".join(new_lines[body_start(new_lines, name, start, end) - 1:end])
                             .strip()) for start, end in spans}
        misses += [f"the edit added {name} with the body of {other}"
                   for other in sorted(n for n in copied if n is not None)]
    return misses


def targets_definitions(document: str, instruction: str, language: str | None) -> bool:
    """Whether ``instruction`` names a definition of ``document`` and introduces no name
    (module doc): an edit of code the document already has ("Fix bugs in median", "Remove the
    function f"), which head blocks name and rewrite, where program mode passes more tests than
    a rewrite; a new name (a rename, however plain its new name, an added function or
    constant) or no name at all is left to a rewrite (docs/quality.md, "Which mode edits by
    default")."""
    words = set(_WORD.findall(instruction))
    if not words & set(definitions(document, language)) or renames(document, instruction,
                                                                   language):
        return False
    return not introduces_names(document, instruction)


def introduces_names(document: str, instruction: str) -> bool:
    """Whether ``instruction`` introduces a name ``document`` lacks: one it writes as code (in
    backticks, snake_case or lowerCamelCase; module doc) that the document nowhere holds (an
    added function, a rename's new name, a new constant). Microseconds a page."""
    return bool(introduced(instruction) - set(_WORD.findall(document)))


def named_reach(document: str, instruction: str, language: str | None) -> Reach:
    """What a program must reach where ``instruction`` targets definitions of ``document``
    (:func:`targets_definitions`: it names one and introduces no name), as ``touch_named`` holds
    head blocks to it: each definition it lists together with others ("Fix bugs in parse and
    render": an edit that leaves one as it was is a miss, :func:`find_misses`) and, for each
    sentence that commands an edit ("Add a parameter to f. Give g one too"), the definition it
    edits (:func:`~copygram.language.asks.commanded`: ``f``, then ``g``); where that makes none
    or more than :data:`~copygram.language.types.MAX_REACH` requirements, any one it names; for
    an addition (:func:`~copygram.language.additions.addition_places`), one of its places; for
    a new name that goes into definitions the document has ("Add a parameter max_calls to f"),
    those the sentences that command the edit edit; for a rename
    (:func:`renames`), its definitions and each place that uses an old name outside them, the
    first :data:`~copygram.language.types.MAX_REACH` of them. Each requirement
    as its line ranges (1-based, inclusive, sorted; with the comment block right above). Empty
    where it targets none. Milliseconds (the definitions are cached per document)."""
    pairs = renames(document, instruction, language)
    if pairs:
        return _rename_reach(document, pairs, language)
    places = addition_places(document, instruction, language)
    if places:
        return (places,)
    regions = definitions(document, language)
    groups = commanded(instruction, regions) if added_names(document, instruction) else []
    if 1 <= len(groups) <= MAX_REACH:
        # A new name that goes into definitions the document has ("Add a parameter max_calls
        # to f"): the sentences' targets.
        return tuple(sorted(tuple(sorted({span for name in group for span in regions[name]}))
                            for group in {frozenset(group) for group in groups}))
    if not targets_definitions(document, instruction, language):
        return ()
    together = {frozenset([name]) for group in listed_together(instruction, regions)
                for name in group}
    wanted = together | {frozenset(group) for group in commanded(instruction, regions)}
    # A requirement that holds a smaller one is met wherever the smaller one is.
    wanted = {group for group in wanted if not any(other < group for other in wanted)}
    if 1 <= len(wanted) <= MAX_REACH:
        return tuple(sorted(tuple(sorted({span for name in group for span in regions[name]}))
                            for group in wanted))
    named = set(_WORD.findall(instruction)) & set(regions)
    return (tuple(sorted({span for name in named for span in regions[name]})),)


def renames(document: str, instruction: str, language: str | None) -> tuple[tuple[str, str], ...]:
    """The renames ``instruction`` asks of definitions of ``document`` ("Rename the function f to
    g and update every call of it"), each ``(old, new)``: ``old`` a definition, ``new`` a name
    the document nowhere holds. Empty where it asks none, where one it asks is not such a pair,
    or where it also introduces another name (an added helper: that edit is more than a rename).
    Milliseconds (the definitions are cached per document)."""
    found = asked_renames(instruction)
    if not found:
        return ()
    regions = definitions(document, language)
    present = set(_WORD.findall(document))
    pairs = tuple((old, new) for old, new in found if old in regions and new not in present)
    if len(pairs) != len(found) or introduced(instruction) - present - {new for _, new in pairs}:
        return ()
    return pairs


def _rename_reach(document: str, pairs: Sequence[tuple[str, str]], language: str | None) -> Reach:
    """A rename's requirements (:func:`named_reach`): the definitions renamed, then each place
    that uses an old name outside them, in document order (:func:`rename_scope`), the first
    :data:`~copygram.language.types.MAX_REACH` of them (a use past those that keeps the old name
    is a miss all the same: :func:`find_misses`)."""
    own, uses = _rename_places(document, pairs, language)
    return (own, *((span,) for span in uses))[:MAX_REACH]


def block_scope(document: str, instruction: str, language: str | None) -> Scope:
    """Where a program's blocks may edit (``only`` of the constraint): a rename's uses
    (:func:`rename_scope`), an addition's places
    (:func:`~copygram.language.additions.addition_places`: the new unit goes after one, and no
    other unit is asked to change), else anywhere (empty). Milliseconds."""
    return (rename_scope(document, instruction, language)
            or addition_places(document, instruction, language))


def rename_scope(document: str, instruction: str, language: str | None) -> Scope:
    """Where a rename's program may edit (``only`` of the constraint): each line whose code holds
    an old name (its definitions' first lines and every use; a mention in a comment or docstring
    is none), so that a head block's unit must hold one; empty where ``instruction`` asks no
    rename (:func:`renames`). The default model's rename programs on the large rows renamed
    four more functions after the right three blocks (JavaScript), and rewrote lines in the
    renamed function's body that hold no old name (C++): nothing asked for either. Linear in
    the document."""
    pairs = renames(document, instruction, language)
    return tuple((k, k) for k in using(split_lines(document), [old for old, _ in pairs]))


def _rename_places(document: str, pairs: Sequence[tuple[str, str]],
                   language: str | None) -> tuple[Scope, list[tuple[int, int]]]:
    """The renamed definitions' line ranges, and each use of an old name outside them."""
    regions = definitions(document, language)
    old = {name for name, _ in pairs}
    own = tuple(sorted({span for name in old for span in regions[name]}))
    return own, callers(split_lines(document), old, regions, own)


def _uses(text: str, name: str, language: str | None) -> bool:
    """Whether ``text``'s code (its documentation aside: :func:`code_only`) uses ``name``: a
    Python name, attribute, argument or definition so named; a tree-sitter leaf that reads it.
    ``False`` where ``text`` does not parse (the damage check's concern)."""
    code = code_only(text, language)
    if isinstance(code, str):
        return re.search(rf"\b(?:id|name|attr|arg)='{re.escape(name)}'", code) is not None
    return code is not None and any(leaf == name.encode() for _, leaf in code)


def removal_targets(document: str, instruction: str,
                    language: str | None) -> tuple[tuple[int, int], ...]:
    """The line ranges (1-based, inclusive, sorted; with the comment block right above) of the
    definitions of ``document`` that ``instruction`` asks to remove ("Remove the function f";
    module doc); empty where it asks none. Milliseconds."""
    names = removed_names(instruction)
    if not names:
        return ()
    regions = definitions(document, language)
    return tuple(sorted({span for name in names for span in regions.get(name, ())}))


_PRONOUNS = frozenset({"it", "them", "this", "that", "these", "those"})


def removes_part(document: str, instruction: str, language: str | None) -> bool:
    """Whether ``instruction`` commands a removal of something that is no definition of
    ``document`` ("Remove the debug branch at the start of f", "Remove the parameter calls
    from f": a part of a definition, where "Remove the function f" removes a whole one;
    :func:`~copygram.language.asks.commanded_removals`; a pronoun refers back and counts as
    nothing). Milliseconds."""
    removed = [word for word in commanded_removals(instruction) if word.lower() not in _PRONOUNS]
    if not removed:
        return False
    regions = definitions(document, language)
    return any(word not in regions for word in removed)


def lists_definitions(document: str, instruction: str, language: str | None) -> bool:
    """Whether ``instruction`` lists two or more definitions of ``document`` together ("Fix bugs
    in parse and render": each a target, :func:`find_misses`). Milliseconds."""
    return bool(listed_together(instruction, definitions(document, language)))


_LINE_COMMENT = re.compile(r"(?://|#)([^\n]*)")


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _written(text: str) -> frozenset[str]:
    """The docstrings and comments of ``text`` as :func:`flat` texts: the inside of every
    ``\"\"\"``, ``\'\'\'`` and ``/* */``, and every ``//`` or ``#`` comment's text."""
    found = {flat(next(part for part in match.groups() if part is not None))
             for match in FOR_FILE.finditer(text)}
    found.update(flat(match.group(1)) for match in _LINE_COMMENT.finditer(text))
    return frozenset(found)


def _strayed(regions: Mapping[str, tuple[tuple[int, int], ...]], named: Sequence[str],
             changed: Sequence[tuple[int, int]]) -> list[str]:
    """The definitions the edit changed inside (a line of one changed, or lines inserted between
    two of its lines) that the instruction does not name, leaving out those that hold a named
    one or lie in one (a named method's class, a named class's methods)."""
    spans = [span for name in named for span in regions[name]]

    def related(start: int, end: int) -> bool:
        return any((start <= a and b <= end) or (a <= start and end <= b) for a, b in spans)

    return sorted(name for name, ranges in regions.items() if name not in named
                  and any(touches(changed, a, b, after=False) and not related(a, b)
                          for a, b in ranges))


def _code_changed(before: str, after: str, language: str | None) -> bool:
    """Whether ``after``'s code differs from ``before``'s, docstrings and comments aside; not
    where either does not parse (the damage check's concern) or the language has no reader."""
    old, new = code_only(before, language), code_only(after, language)
    return old is not None and new is not None and old != new


__all__ = ["block_scope", "documentation_only", "find_misses", "introduces_names", "lists_definitions",
           "named_reach", "removal_targets", "removes_part", "rename_scope", "renames",
           "targets_definitions"]
