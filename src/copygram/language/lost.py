"""Definitions an edit lost, and a partial rewrite's reply put back in its file.

Asked to edit one function of a file, a small model's rewrite is often that function alone, or
the file from that function on: on the dev split's edit-kinds rows the default model's whole-file
rewrites left out the functions above the one it fixed (a 177-line file written as 149 lines),
the function after the one it removed, a whole function when asked to replace a docstring, or
every function but the one it was asked to add. Each result parsed, used no name it lost, and
was written as a success.

* :func:`lost_definitions`: the definitions of a file (functions, methods, classes, top-level
  variables: :func:`~copygram.language.definitions.definitions`) that an edit's result no
  longer defines, where the instruction names a definition of the file or asks to add
  something, does not name them (a removal or a rename names what it takes away), they do not
  lie inside a definition it names (an edit may restructure that one's insides), and the
  instruction has no word of restructuring ("Clean up f", "Merge the helpers": those may take
  what they do not name).
* :func:`put_back`: a result with the lost top-level definitions put back, each as the file had
  it, after the definition that preceded it in the file (or before the one that followed it),
  and a reply of new definitions alone after the file's last one: the reply read as the new
  text of the definitions it holds, the rest of the file kept. A lost method of a class the
  reply kept goes back after the method that preceded it in that class (or before the one that
  followed it), where the class is written at the indentation it had.

Cost: one parse of each text per call (milliseconds); :func:`put_back` parses once per
definition it puts back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from copygram.language.asks import asks_to_add
from copygram.language.definitions import definitions, outermost
from copygram.language.lines import ended, inserted, leading_space, split_lines
from copygram.language.types import PROSE

_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
# Instructions that may take away definitions they do not name: cleaning up, restructuring,
# merging or moving code ("cleanup of auth __eq__" took four more definitions with it).
RESTRUCTURE = re.compile(
    r"\b(?:clean|tidy|refactor|restructur|reorgani[sz]|merg|combin|consolidat|dedup|de-dup|"
    r"mov|split|inlin|unused|dead|extract)", re.IGNORECASE)
# "Fix the bug(s)": a plural's "(s)" names no definition "s".
_PLURAL = re.compile(r"\(s\)")

Spans = Mapping[str, tuple[tuple[int, int], ...]]


def lost_definitions(before: str, after: str, instruction: str,
                     language: str | None) -> tuple[str, ...]:
    """The names of ``before``'s definitions that ``after`` no longer defines and
    ``instruction`` does not account for (module doc), in the order ``before`` defines them;
    ``()`` for prose, a language without a parser here, or a ``before`` that does not parse."""
    if language is None or language == PROSE:
        return ()
    old = definitions(before, language)
    if not old:
        return ()
    words = set(_WORD.findall(_PLURAL.sub("", instruction)))
    named = words & set(old)
    # An instruction that names nothing of the file and adds nothing says nothing of what may
    # go ("Fix the bug(s) in this solution": a fix may drop a helper).
    if not (named or asks_to_add(instruction)) or RESTRUCTURE.search(instruction):
        return ()
    new = definitions(after, language)
    inside = [span for name in named for span in old[name]]
    lost = [name for name, spans in old.items()
            if name not in new and name not in words
            and not all(_within(span, inside) for span in spans)]
    # A method of a lost class goes with it: the class names the loss.
    outer = [span for name in lost for span in old[name]]
    lost = [name for name in lost if not all(_within(span, outer) for span in old[name])]
    return tuple(sorted(lost, key=lambda name: old[name][0]))


def put_back(before: str, after: str, lost: Sequence[str], language: str) -> str | None:
    """``after`` with each of ``lost`` (names from :func:`lost_definitions`) written back as
    ``before`` has it, with the blank lines above it, after the nearest definition before it
    that ``after`` holds (or with the blank lines below it, before the nearest one after it),
    and the document's head (imports, a module docstring) and tail (a ``__main__`` block) where
    the reply has nothing above its first or below its last definition. A reply that holds
    only new definitions (asked to add a function, the model wrote that function alone) is put
    after the document's last definition, the document kept whole. A lost method of a class
    the reply kept goes back among its siblings (:func:`_member_back`). ``None`` where the
    reply holds no definition to place one by."""
    old = definitions(before, language)
    tops = outermost(old)
    by_span = {span: name for name, spans in old.items() for span in spans if span in tops}
    order = [by_span[span] for span in tops]
    members = [name for name in lost if not any(span in tops for span in old[name])]
    lost = [name for name in lost if name not in members]
    lines = split_lines(before)
    new = definitions(after, language)
    if new and not set(new) & set(old):  # only new definitions: after the document's last
        end, first = tops[-1][1], _block_start(lines, tops[-1][0], 0)
        # The blank lines above the last definition: the file's spacing.
        gap = lines[_blanks_above(lines, first) - 1:first - 1] or ["\n"]
        reply = split_lines(after)
        first = _block_start(reply, outermost(new)[0][0], 0)
        return "".join([*ended(lines[:end]), *gap, *ended(reply[first - 1:]), *lines[end:]])
    text = after
    for name in [name for name in order if name in lost]:
        index = order.index(name)
        current = definitions(text, language)
        now = outermost(current)
        # Where each name is a top-level definition of the text so far (a method of the same
        # name inside a class is no place to put a function after).
        placed = {n: [span for span in spans if span in now] for n, spans in current.items()}
        out = split_lines(text)
        start, end = _top_span(old, name, tops)
        # The whole of its comment above it (a C block comment's inner lines are not marked).
        start = _block_start(lines, start, _end_before(tops, start))
        previous = [n for n in reversed(order[:index]) if placed.get(n)]
        following = [n for n in order[index + 1:] if placed.get(n)]
        if previous:  # the blank lines above it, then it, after the definition before it
            piece = lines[_blanks_above(lines, start) - 1:end]
            at = max(span[1] for span in placed[previous[0]])
        elif following:  # it, then the blank lines below it, before the definition after it
            piece = lines[start - 1:_blanks_below(lines, end)]
            first_line = min(span[0] for span in placed[following[0]])
            at = _block_start(out, first_line, _end_before(now, first_line)) - 1
        else:
            return None
        text = inserted(out, at, piece)
    for name in members:  # a method of a class the reply kept: back among its siblings
        placed_text = _member_back(old, lines, text, name, language)
        if placed_text is None:
            return None
        text = placed_text
    return _headed(lines, tops, text, language)


def _member_back(old: Spans, lines: Sequence[str], text: str, name: str,
                 language: str) -> str | None:
    """``text`` with the member ``name`` of a definition (a method of a class) written back as
    ``lines`` (the document) has it, after the member that preceded it in its class (or before
    the one that followed it), where ``text`` holds that class once, that sibling inside it, at
    the indentation the document had; ``None`` otherwise."""
    if len(old[name]) != 1:
        return None
    span = old[name][0]
    parents = [(n, p) for n, spans in old.items() for p in spans
               if p != span and p[0] <= span[0] and span[1] <= p[1]]
    if not parents:
        return None
    parent_name, parent = min(parents, key=lambda item: item[1][1] - item[1][0])
    current = definitions(text, language)
    if len(old[parent_name]) != 1 or len(current.get(parent_name, ())) != 1:
        return None
    new_parent = current[parent_name][0]
    inside = {n: p for n, spans in old.items() for p in spans
              if p != parent and parent[0] <= p[0] and p[1] <= parent[1]}
    siblings = sorted((p, n) for n, p in inside.items()
                      if not any(_within(p, [q]) for q in inside.values()))
    index = [n for _, n in siblings].index(name) if name in inside else -1
    if index < 0:
        return None
    out = split_lines(text)

    def there(sibling: str) -> tuple[int, int] | None:
        spans = [p for p in current.get(sibling, ())
                 if new_parent[0] < p[0] and p[1] <= new_parent[1]]
        return spans[0] if len(spans) == 1 else None

    start, end = span
    previous = [(p, n) for p, n in reversed(siblings[:index]) if there(n)]
    following = [(p, n) for p, n in siblings[index + 1:] if there(n)]
    if not previous and not following:
        return None
    old_sibling, sibling = (previous or following)[0]
    new_sibling = there(sibling)
    # The class written at another indentation: no place to tell the method's.
    if new_sibling is None or (leading_space(lines[old_sibling[0] - 1])
                               != leading_space(out[new_sibling[0] - 1])):
        return None
    if previous:  # the blank lines above it, then it, after the member before it
        start = _block_start(lines, start, old_sibling[1])
        piece, at = lines[_blanks_above(lines, start) - 1:end], new_sibling[1]
    else:  # it, then the blank lines below it, before the member after it
        start = _block_start(lines, start, parent[0])
        piece = lines[start - 1:_blanks_below(lines, end)]
        at = _block_start(out, new_sibling[0], new_parent[0]) - 1
    return inserted(out, at, piece)


def _headed(lines: Sequence[str], tops: Sequence[tuple[int, int]], text: str,
            language: str) -> str:
    """``text`` with the document's head (its lines above its first definition: imports, a
    module docstring) put first where ``text`` has nothing above its own first definition, and
    its tail (the lines below its last definition: a ``__main__`` block) put last where
    ``text`` has nothing below its own last one."""
    out = split_lines(text)
    now = outermost(definitions(text, language))
    if not now:
        return text
    head = lines[:_block_start(lines, tops[0][0], 0) - 1]
    top = _block_start(out, now[0][0], 0) - 1
    if "".join(head).strip() and not "".join(out[:top]).strip():
        out = [*ended(list(head)), *out[top:]]
        now = outermost(definitions("".join(out), language))
    tail = lines[tops[-1][1]:]
    if "".join(tail).strip() and not "".join(out[now[-1][1]:]).strip():
        out = [*ended(out[:now[-1][1]]), *tail]
    return "".join(out)


def _blanks_above(lines: Sequence[str], start: int) -> int:
    """The first of the blank lines right above line ``start`` (``start`` where there are none)."""
    while start > 1 and not lines[start - 2].strip():
        start -= 1
    return start


def _blanks_below(lines: Sequence[str], end: int) -> int:
    """The last of the blank lines right below line ``end`` (``end`` where there are none)."""
    while end < len(lines) and not lines[end].strip():
        end += 1
    return end


def _end_before(tops: Sequence[tuple[int, int]], line: int) -> int:
    """The last line of the last of ``tops`` that ends before ``line`` (0: none)."""
    return max((end for _, end in tops if end < line), default=0)


def _block_start(lines: Sequence[str], start: int, floor: int) -> int:
    """``start`` moved up over the lines right above it that are not blank, down to ``floor``
    (exclusive): the top of a definition's comment block."""
    while start - 1 > floor and lines[start - 2].strip():
        start -= 1
    return start


def _top_span(old: Spans, name: str, tops: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The first top-level span of ``name`` in ``old``."""
    return next(span for span in old[name] if span in tops)


def _within(span: tuple[int, int], outer: Sequence[tuple[int, int]]) -> bool:
    """Whether ``span`` lies inside one of ``outer`` (and is not one of them)."""
    return any(a <= span[0] and span[1] <= b and (a, b) != span for a, b in outer)




__all__ = ["RESTRUCTURE", "lost_definitions", "put_back"]
