"""Decimal range regexes: the per-document LINE_NUMBER terminal.

``range_regex(1, n)`` matches exactly the canonical decimal spellings (no sign, no leading zero)
of the integers 1..n. It has O(log n) alternatives of O(log n) characters each, so compiling it is
cheap for any document size. It uses only ``[0-9]`` classes (never ``\\d``, which is Unicode-wide
in Rust's regex crate) so that Python ``re``, llguidance and outlines_core all read it the same.
"""

from __future__ import annotations


def _digit_class(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    if (lo, hi) == (0, 9):
        return "[0-9]"
    return f"[{lo}-{hi}]"


def _any_digits(count: int) -> str:
    if count == 0:
        return ""
    return "[0-9]" if count == 1 else f"[0-9]{{{count}}}"


def _same_length(a: str, b: str) -> list[str]:
    """Alternatives matching every decimal string s with len(s) == len(a) and a <= s <= b."""
    if a == b:
        return [a]
    prefix = 0
    while a[prefix] == b[prefix]:
        prefix += 1
    if prefix:
        return [a[:prefix] + alt for alt in _same_length(a[prefix:], b[prefix:])]
    rest = len(a) - 1
    first_a, first_b = int(a[0]), int(b[0])
    if rest == 0:
        return [_digit_class(first_a, first_b)]
    alts: list[str] = []
    full_lo, full_hi = first_a, first_b
    if a[1:] != "0" * rest:
        alts += [a[0] + alt for alt in _same_length(a[1:], "9" * rest)]
        full_lo += 1
    tail: list[str] = []
    if b[1:] != "9" * rest:
        tail = [b[0] + alt for alt in _same_length("0" * rest, b[1:])]
        full_hi -= 1
    if full_lo <= full_hi:
        alts.append(_digit_class(full_lo, full_hi) + _any_digits(rest))
    return alts + tail


def range_alternatives(lo: int, hi: int) -> list[str]:
    """The disjoint alternatives of :func:`range_regex`, shortest numbers first."""
    if not 0 <= lo <= hi:
        raise ValueError(f"range_regex needs 0 <= lo <= hi, got {lo}, {hi}")
    alts: list[str] = []
    for width in range(len(str(lo)), len(str(hi)) + 1):
        width_lo = max(lo, 10 ** (width - 1) if width > 1 else 0)
        width_hi = min(hi, 10**width - 1)
        if width_lo <= width_hi:
            alts += _same_length(str(width_lo), str(width_hi))
    return alts


def range_regex(lo: int, hi: int) -> str:
    """A regex (no anchors, no groups) matching exactly the decimal integers lo..hi.

    Alternatives are disjoint; wrap it in ``(?:...)`` before concatenating.
    """
    return "|".join(range_alternatives(lo, hi))
