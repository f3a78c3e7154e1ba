"""The members of a Java class body, found by a small scanner that skips comments, strings and
char literals (:mod:`copygram.bench.kinds_java`): a method inside an anonymous class or a lambda
is not a member of the class around it."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Member:
    """A member of a class body: its name, whether a method, its line span (``first``: its
    Javadoc's first line, or ``start``, its declaration's) and its declaration up to ``{``."""

    name: str
    method: bool
    first: int
    start: int
    brace: int
    last: int
    header: str


def mask(text: str) -> str:
    """``text`` with its comments and string and char literals blanked (newlines kept)."""
    out, i = list(text), 0
    while i < len(text):
        if text.startswith("//", i):
            end = text.find("\n", i)
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = end + 2 if end >= 0 else -1
        elif text[i] in "\"'":
            end = i + 1
            while end < len(text) and text[end] not in (text[i], "\n"):
                end += 2 if text[end] == "\\" else 1
            end += 1
        else:
            i += 1
            continue
        end = len(text) if end < 0 else min(end, len(text))
        out[i:end] = [c if c == "\n" else " " for c in text[i:end]]
        i = end
    return "".join(out)


def members(body: str) -> list[Member] | None:
    """The members of a class body in order, or None where its braces do not balance."""
    masked, found = mask(body), []
    depth, start, brace, previous = 0, -1, -1, 0

    def line(pos: int) -> int:
        return body.count("\n", 0, pos)

    def close(end: int) -> None:
        head = masked[start:brace if brace >= 0 else end]
        gap = body[previous:start]
        doc = gap.rfind("/**")
        method = "(" in head and not re.search(r"\b(class|interface|enum|record)\b", head)
        named = (re.search(r"([\w$]+)\s*\(", head) if method else
                 re.search(r"\b(?:class|interface|enum|record)\s+([\w$]+)", head)
                 or re.search(r"([\w$]+)\s*(?:=|;|$)", head))
        first = line(previous + doc) if doc >= 0 else line(start)
        found.append(Member(named.group(1) if named else "", method, first, line(start),
                            line(brace) if brace >= 0 else line(end), line(end),
                            " ".join(head.split())))

    for pos, char in enumerate(masked):
        if char.isspace():
            continue
        if start < 0:
            start, brace = pos, -1
        if char == "{":
            brace = pos if depth == 0 and brace < 0 else brace
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and "=" not in masked[start:brace]:
                close(pos)
                start, previous = -1, pos + 1
        elif char == ";" and depth == 0:
            close(pos)
            start, previous = -1, pos + 1
    return found if depth == 0 and start < 0 else None
