"""Data files: JSON, TOML and YAML, read by their own parsers.

A configuration file is edited as often as code (``package.json``, ``pyproject.toml``, a CI
workflow), and a small model breaks one as easily: asked to remove a JSON object's last member,
Qwen2.5-Coder-1.5B's head block took the line out and left the comma before it, and the file,
no longer JSON, was written as a success. These formats have strict parsers at hand (:mod:`json`
and :mod:`tomllib` from the standard library, PyYAML), so the damage check
(:mod:`copygram.language.damage`) reads them as it reads code:

* :func:`data_error`: where a text fails to parse in its format; a file that parsed and no
  longer does is damage of kind ``parse``.
* :func:`repeated_keys`: the keys written more than once in one JSON object or YAML mapping
  (their parsers keep the last one silently; TOML's refuses a repeated key, a parse error), so a
  key written twice where the file had it once is damage of kind ``duplicate``.
* :func:`kept_removals`: the keys an instruction asks to remove ("Remove the docs job.") that
  the edit kept, as many times as the file had them: the model wrote the file back as it was,
  and the session reads that as a miss, as it reads a definition asked removed and kept in code.
* :func:`lost_keys`: the keys an edit took out that its instruction does not account for, as
  :mod:`copygram.language.lost` reads definitions: asked to "Remove the billing_label
  message.", the default model took out every section's ``*_label`` message, a file that
  parsed, written as a success.

The format comes from the file's suffix (:data:`SUFFIXES`) or, for JSON alone, from the text
(:func:`looks_like_json`: a strict format that prose never parses as; TOML and YAML are not
guessed, since prose and Markdown lists can parse as YAML, and a file of Python assignments as
TOML). A file that did not parse before (JSON with comments, YAML with a template's
placeholders) gets the marker check alone, as prose does.

Cost: one parse of each text: :mod:`json` ~50 MB/s, :mod:`tomllib` ~2 MB/s, PyYAML's composer
(libyaml's where built) ~1-5 MB/s. YAML needs PyYAML (a dependency of copygram); without it a
YAML file is read as prose.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import tomllib
from collections import Counter
from collections.abc import Iterator
from typing import Any, NamedTuple

from copygram.language.asks import asks_to_add, removed_names
from copygram.language.lost import RESTRUCTURE

DATA_FORMATS = ("json", "toml", "yaml")
"""The data formats the damage check parses, as ``language`` values."""

SUFFIXES = {".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}
"""File suffixes of :data:`DATA_FORMATS` (``copygram edit`` names a file's format by them)."""

_TOML_AT = re.compile(r"\(at line (\d+)")
_WORD = re.compile(r"[A-Za-z0-9_$-]+")
KeyPlace = tuple[str, str]
"""A key's place: the path of the object or mapping that holds it (``scripts``,
``jobs.build.steps[2]``; ``""`` for the top level) and the key."""


def data_error(text: str, fmt: str) -> tuple[int | None, str] | None:
    """Where ``text`` fails to parse as ``fmt`` (one of :data:`DATA_FORMATS`): the 1-based line
    (``None`` where the parser names none) and what; ``None`` if it parses, or for YAML where
    PyYAML is not installed."""
    if fmt not in DATA_FORMATS:
        raise ValueError(f"unknown data format {fmt!r}; one of {', '.join(DATA_FORMATS)}")
    if _keys(text, fmt) is not None or (fmt == "yaml" and _yaml() is None):
        return None  # parsed (and cached for the key checks): no second parse
    if fmt == "json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            return exc.lineno, exc.msg
        except RecursionError:  # nested deeper than Python's stack: not a file's damage
            return None
        return None
    if fmt == "toml":
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            at = _TOML_AT.search(message)
            return (int(at.group(1)) if at else None), message.split(" (at ")[0]
        return None
    yaml = _yaml()
    try:
        for _ in yaml.compose_all(text, Loader=_loader(yaml)):
            pass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return (mark.line + 1 if mark is not None else None), str(what)
    except RecursionError:
        return None
    return None


def repeated_keys(text: str, fmt: str) -> dict[KeyPlace, tuple[int, int | None]]:
    """Each key that ``text`` writes more than once in one JSON object or YAML mapping: its
    place (:data:`KeyPlace`) -> (how many times, the 1-based line of its second writing where
    the parser tells it, YAML's). Empty for TOML (a repeated key does not parse), for a text
    that does not parse, and for YAML without PyYAML."""
    if fmt == "toml":
        return {}
    found: dict[KeyPlace, tuple[int, int | None]] = {}
    seen: Counter[tuple[int, str]] = Counter()
    for key in _keys(text, fmt) or ():
        name = key.path[-1]
        if key.holder < 0 or (fmt == "yaml" and name == "<<"):  # merge keys may repeat
            continue
        seen[(key.holder, name)] += 1
        count = seen[(key.holder, name)]
        if count > 1:
            second = key.line if count == 2 else found[(key.place, name)][1]
            found[(key.place, name)] = (count, second)
    return found


def _key_paths(text: str, fmt: str) -> Counter[tuple[str, ...]]:
    """How many times each path of keys (list items left out of it) is written in ``text``;
    empty for a text that does not parse (and for YAML without PyYAML)."""
    return Counter(key.path for key in _keys(text, fmt) or ())


def key_counts(text: str, fmt: str) -> Counter[str]:
    """How many times each key is written in ``text``, at any depth: a JSON object's members, a
    YAML mapping's scalar keys, a TOML table's keys and the tables' own names. Empty for a text
    that does not parse (and for YAML without PyYAML)."""
    counts: Counter[str] = Counter()
    for path, count in _key_paths(text, fmt).items():
        counts[path[-1]] += count
    return counts


def kept_removals(before: str, after: str, instruction: str, fmt: str) -> list[str]:
    """The keys of ``before`` that ``instruction`` asks to remove
    (:func:`~copygram.language.asks.removed_names`: "Remove the license field", "Delete the
    docs job") and ``after`` still writes as often as ``before`` did; empty where either text
    does not parse. Cost: a parse of each text."""
    names = removed_names(instruction)
    if not names:
        return []
    had = key_counts(before, fmt)
    if not any(had[name] for name in names):
        return []
    now = key_counts(after, fmt)
    if not now and after.strip():
        return []  # it does not parse: the parse check says so
    return [name for name in dict.fromkeys(names) if had[name] and now[name] >= had[name]]


def lost_keys(before: str, after: str, instruction: str, fmt: str) -> list[str]:
    """The keys of ``before`` that ``after`` writes fewer times in their place (the path of keys
    that leads to them), where ``instruction`` names a key of ``before`` (a word of it, case
    and ``-``/``_`` aside) or asks to add something, does not mention them or a key that holds
    them (a removed job takes its steps along; "runs on" mentions ``runs-on``), and has no word
    of restructuring ("Merge the two sections", "Move the cache settings":
    :data:`~copygram.language.lost.RESTRUCTURE`). Each as its dotted path, in ``before``'s
    order; empty where either text does not parse. Cost: a parse of each text."""
    had = _key_paths(before, fmt)
    if not had or RESTRUCTURE.search(instruction):
        return []
    words = {_plain(word) for word in _WORD.findall(instruction)}
    if not (words & {_plain(path[-1]) for path in had} or asks_to_add(instruction)):
        return []
    now = _key_paths(after, fmt)
    if not now and after.strip():
        return []  # it does not parse: the parse check says so
    said = _plain(instruction)

    def mentioned(key: str) -> bool:
        plain = _plain(key)
        return plain in words or (len(plain) >= 3 and plain in said)

    lost = [path for path, count in had.items()
            if now[path] < count and not any(mentioned(key) for key in path)]
    # A key lost with the key that held it is said once, by its holder.
    return [".".join(path) for path in lost
            if not any(path[:size] in lost for size in range(1, len(path)))]


def _plain(text: str) -> str:
    """``text`` lowercased without what is not a letter or digit (``Runs-On``: ``runson``)."""
    return re.sub(r"[\W_]+", "", text.lower())


def looks_like_json(text: str) -> bool:
    """Whether ``text`` is a JSON object or array (the format a text is read in where no file
    suffix names one). Cost: one :func:`json.loads`."""
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


class _Key(NamedTuple):
    """One writing of a key: the place of the object or mapping that holds it (its path, list
    items by index: :data:`KeyPlace`), which one that is (an index, one per object), the path
    of keys that leads to it (list items left out), and its 1-based line where the parser
    tells it (YAML's)."""

    place: str
    holder: int
    path: tuple[str, ...]
    line: int | None


@functools.lru_cache(maxsize=16)
def _keys(text: str, fmt: str) -> tuple[_Key, ...] | None:
    """Every key ``text`` writes, in order, each writing of a repeated key too (a JSON object
    read as its members, a YAML mapping as its nodes; TOML's tables and keys); ``None`` where
    it does not parse or PyYAML is missing. Cached: the damage check, the miss and the lost
    keys read the same two texts of an edit."""
    found: list[_Key] = []
    holders = itertools.count()
    errors: tuple[type[Exception], ...] = (json.JSONDecodeError, tomllib.TOMLDecodeError,
                                           RecursionError)
    yaml = _yaml() if fmt == "yaml" else None
    if fmt == "yaml" and yaml is None:
        return None
    try:
        if fmt == "json":
            _json_keys(json.loads(text, object_pairs_hook=_Members), "", (), found, holders)
        elif fmt == "toml":
            _toml_keys(tomllib.loads(text), "", (), found, holders)
        elif yaml is not None:
            errors += (yaml.YAMLError,)
            walked: set[int] = set()
            documents = list(yaml.compose_all(text, Loader=_loader(yaml)))
            for number, node in enumerate(documents):
                _yaml_keys(yaml, node, f"[{number}]" if len(documents) > 1 else "", (), found,
                           holders, walked)
    except errors:
        return None
    return tuple(found)


class _Members(list[tuple[str, Any]]):
    """A JSON object as the members it was written with, a repeated key each time."""


def _below(place: str, key: str) -> str:
    return f"{place}.{key}" if place else key


def _json_keys(value: object, place: str, path: tuple[str, ...], found: list[_Key],
               holders: Iterator[int]) -> None:
    if isinstance(value, _Members):
        holder = next(holders)
        for key, child in value:
            found.append(_Key(place, holder, (*path, key), None))
            _json_keys(child, _below(place, key), (*path, key), found, holders)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            _json_keys(child, f"{place}[{index}]", path, found, holders)


def _toml_keys(value: object, place: str, path: tuple[str, ...], found: list[_Key],
               holders: Iterator[int]) -> None:
    if isinstance(value, dict):
        holder = next(holders)
        for key, child in value.items():
            found.append(_Key(place, holder, (*path, key), None))
            _toml_keys(child, _below(place, key), (*path, key), found, holders)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            _toml_keys(child, f"{place}[{index}]", path, found, holders)


def _yaml_keys(yaml: Any, node: Any, place: str, path: tuple[str, ...], found: list[_Key],
               holders: Iterator[int], walked: set[int]) -> None:
    # An alias is the node it names (read once: a recursive anchor would never end).
    if id(node) in walked:
        return
    walked.add(id(node))
    if isinstance(node, yaml.MappingNode):
        holder = next(holders)
        for key, child in node.value:
            scalar = isinstance(key, yaml.ScalarNode)
            name = str(key.value) if scalar else "?"
            # A key that is a mapping or a list is no name that can repeat (holder -1).
            found.append(_Key(place, holder if scalar else -1, (*path, name),
                              key.start_mark.line + 1))
            _yaml_keys(yaml, child, _below(place, name), (*path, name), found, holders, walked)
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            _yaml_keys(yaml, child, f"{place}[{index}]", path, found, holders, walked)


def _yaml() -> Any:
    """PyYAML, or ``None`` where it is not installed."""
    try:
        import yaml
    except ImportError:
        return None
    return yaml


def _loader(yaml: Any) -> Any:
    # Composing reads the syntax without building Python objects, so a tag the safe loader does
    # not know (CloudFormation's `!Ref`) is no parse error.
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


__all__ = ["DATA_FORMATS", "SUFFIXES", "KeyPlace", "data_error", "kept_removals", "key_counts",
           "looks_like_json", "lost_keys", "repeated_keys"]
