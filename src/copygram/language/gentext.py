"""Gen text: what it may hold, as a regex for the grammar files, and its escaping rule.

Gen text is written verbatim, so that code (``a < b``, ``&&``, ``&lt;`` in HTML) is written the
way a model writes it. It may not hold a few *reserved words*: the gen op's closing tag (it ends
the text), and the openers of the ops, the gen's and the copy's first word (``<gen``,
``<copy``): a model that writes an op inside gen text means to close the gen first, and refusing
the opener there makes it do so (measured, docs/quality.md). Every
reserved word starts with ``<`` and holds no other ``<``, so occurrences never overlap.

Escaping (lossless for every string): a reserved word in the text is written ``&lt;`` and the
word after its ``<``; a text that already holds such an entity (``&lt;/gen>``, ``&amp;lt;/gen>``,
...) gains one ``amp;`` after its ``&``. Nothing else changes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from copygram.errors import CopygramError

Words = tuple[str, ...]


def check_words(words: Sequence[str]) -> Words:
    """``words`` as a tuple, checked: each starts with ``<``, holds no other ``<`` nor ``&``,
    and none is a prefix of another (the text's end would be ambiguous)."""
    out = tuple(words)
    for word in out:
        if len(word) < 2 or word[0] != "<" or "<" in word[1:] or "&" in word:
            raise CopygramError(f"reserved gen-text word {word!r} must start with '<' and hold "
                                "no other '<' or '&'")
    if any(a != b and b.startswith(a) for a in out for b in out):
        raise CopygramError(f"reserved gen-text words {out!r}: one is a prefix of another")
    return out


def _char(ch: str) -> str:
    # "/" would end a Lark regex literal; \x2f means "/" to Python, Rust and llguidance alike.
    return r"\x2f" if ch == "/" else re.escape(ch)


def text_regex(words: Sequence[str]) -> str:
    """A regex of the non-empty texts that hold none of ``words`` (any may end with a piece of
    one: the op's closing tag follows). Built on the trie of the words after their ``<``."""
    words = check_words(words)
    trie: dict[str, object] = {}
    for word in words:
        node = trie
        for ch in word[1:]:
            node = node.setdefault(ch, {})  # type: ignore[assignment]
    ends = {word[1:] for word in words}

    def partial(node: dict[str, object], path: str) -> str:
        """A proper piece of a word, read on from ``path`` (possibly nothing more)."""
        alts = [_char(ch) + partial(child, path + ch)  # type: ignore[arg-type]
                for ch, child in sorted(node.items()) if path + ch not in ends]
        return f"(?:{'|'.join(alts)})?" if alts else ""

    def leave(node: dict[str, object], path: str) -> str:
        """A piece of a word from ``path`` followed by a character that leaves every word."""
        chars = "".join(_char(ch) for ch in sorted(node))
        alts = [f"[^{chars}<]"]
        alts += [_char(ch) + leave(child, path + ch)  # type: ignore[arg-type]
                 for ch, child in sorted(node.items()) if path + ch not in ends]
        return f"(?:{'|'.join(alts)})"

    piece = partial(trie, "")
    block = f"(?:[^<]|<(?:{piece}<)*{leave(trie, '')})"
    tail = f"<(?:{piece}<)*{piece}"
    return f"(?:{block}+(?:{tail})?|{tail})"


@functools.cache
def _patterns(words: Words) -> tuple[re.Pattern[str], re.Pattern[str]]:
    tails = "|".join(re.escape(word[1:]) for word in words)
    entity = f"&((?:amp;)*)lt;(?:{tails})"
    return re.compile(f"{entity}|{'|'.join(re.escape(w) for w in words)}"), re.compile(entity)


def escape(text: str, words: Sequence[str]) -> str:
    """``text`` as gen text writes it: the identity unless it holds a reserved word or an
    entity of one."""
    escaper, _ = _patterns(check_words(words))
    return escaper.sub(lambda m: "&amp;" + m.group(0)[1:] if m.group(0)[0] == "&"
                       else "&lt;" + m.group(0)[1:], text)


def unescape(written: str, words: Sequence[str]) -> str:
    """Inverse of :func:`escape`."""
    _, entity = _patterns(check_words(words))
    return entity.sub(lambda m: "<" + m.group(0)[4:] if not m.group(1)
                      else "&" + m.group(0)[5:], written)


__all__ = ["Words", "check_words", "escape", "text_regex", "unescape"]
