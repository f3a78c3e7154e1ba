"""A replacement's lines and its closing line, as the lexeme ``TAIL`` of the search/replace
constraint (:mod:`copygram.constraints.search_replace`): which lines a replacement may hold
(never the format's markup, unless the document holds it) and which line closes it."""

from __future__ import annotations

from collections.abc import Sequence

from copygram.constraints.document_grammar import regex_escape
from copygram.language.search_replace import BLOCK_CLOSE, CLOSE_ARROWS, DIVIDER


def _char_class_except(chars: str) -> str:
    """Any one character but those of ``chars`` and ``\\n``."""
    return "[^" + "".join("\\" + c if c in "]\\^-[" else c for c in chars) + "\\n]"


_Trie = dict[str, "_Trie"]


def line_except(*words: str) -> str:
    """A regex of one line (any text, then ``\\n``) whose text is none of ``words`` (each
    without ``\\n``): the complement of a finite set, spelled along the words' trie."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def rest(node: _Trie) -> str:
        # Text s such that (the node's prefix) + s is no word: a child's character and what
        # follows it, or a character that leaves every word here and then anything.
        children = sorted(c for c in node if c)
        parts = [regex_escape(c) + rest(node[c]) for c in children]
        parts.append(_char_class_except("".join(children)) + "[^\\n]*")
        return "(?:" + "|".join(parts) + ")" + ("" if "" in node else "?")

    return rest(trie) + "\\n"


def _replacement_line(banned: Sequence[str]) -> str:
    """A replacement line's regex: neither the closing marker nor a ``banned`` marker line."""
    return line_except(BLOCK_CLOSE.rstrip("\n"), *(line.rstrip("\n") for line in banned))


_DIVIDER_RX = regex_escape(DIVIDER.rstrip("\n")) + "\\n"
_CLOSE_RX = regex_escape(BLOCK_CLOSE.rstrip("\n")) + "\\n"
# A loosely closing line (search_replace.LOOSE_CLOSE as a set of lines): any text, then the
# arrows; one the parser reads: text without ">" that ends in no space, then the arrows.
_ARROWS_RX = "[ \\t]*>{3,} ?REPLACE\\n"
_LOOSE_RX = "[^\\n]*" + _ARROWS_RX
_LOOSE_OK_RX = "(?:[^>\\n]*[^> \\t\\n])?" + _ARROWS_RX


def tail_regex(banned: Sequence[str] = ()) -> str:
    """The divider, the replacement's lines and the closing marker, as one regex; no
    replacement line reads as the closing marker or as one of the ``banned`` marker lines."""
    return _DIVIDER_RX + "(?:" + _replacement_line(banned) + ")*" + _CLOSE_RX


def tail_rules(banned: Sequence[str] = (), arrows: bool = False,
               loose: bool = False, starts: Sequence[str] = ()) -> list[str]:
    """The lark rules of ``TAIL``, one lexeme (:func:`tail_regex`). With ``arrows``, no
    replacement line holds :data:`~copygram.language.search_replace.CLOSE_ARROWS` anywhere
    either (:func:`~copygram.language.search_replace.bars_arrows`); with ``loose``, a block
    may close on the line it ends (:func:`~copygram.language.search_replace.read_close`): the
    closing line is any :data:`~copygram.language.search_replace.LOOSE_CLOSE` line whose text
    holds no ``>`` and reads as no ``banned`` marker, and no replacement line is a
    :data:`~copygram.language.search_replace.LOOSE_CLOSE` line. Both are spelled with
    llguidance's ``&`` (and) and ``~`` (not) on a line of :func:`tail_regex`; the closing line
    and a replacement line are never both, so the lexeme ends at the first closing line. No
    replacement line, and no line a block closes on, opens with a run of ``starts``
    (:data:`~copygram.language.search_replace.MARKER_LIKE`: ``======= REPLACE``)."""
    if not arrows and not loose and not starts:
        return [f"TAIL: /{tail_regex(banned)}/"]
    line = f"/{_replacement_line(banned)}/"
    if starts:
        runs = "|".join(regex_escape(run) for run in starts)
        line += f" & ~/(?:{runs})[^\\n]*\\n/"
    if arrows:
        line += f" & ~/[^\\n]*{regex_escape(CLOSE_ARROWS)}[^\\n]*\\n/"
    close = f"/{_CLOSE_RX}/"
    if loose:
        line += f" & ~/{_LOOSE_RX}/"
        close = f"/{_LOOSE_OK_RX}/"
        if starts:
            close += f" & ~/(?:{runs})[^\\n]*\\n/"
        if banned:
            markers = "|".join(regex_escape(marker.rstrip("\n")) for marker in banned)
            close += f" & ~/(?:{markers}){_ARROWS_RX}/"
    return [f"TAIL: /{_DIVIDER_RX}/ RLINE* CLOSE", f"RLINE: {line}", f"CLOSE: {close}"]


__all__ = ["line_except", "tail_regex", "tail_rules"]
