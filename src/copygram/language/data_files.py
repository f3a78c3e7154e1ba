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

import json
import re
import tomllib
from collections import Counter
from collections.abc import Iterator
from typing import Any

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
    if fmt == "yaml":
        yaml = _yaml()
        if yaml is None:
            return None
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
    raise ValueError(f"unknown data format {fmt!r}; one of {', '.join(DATA_FORMATS)}")


def repeated_keys(text: str, fmt: str) -> dict[KeyPlace, tuple[int, int | None]]:
    """Each key that ``text`` writes more than once in one JSON object or YAML mapping: its
    place (:data:`KeyPlace`) -> (how many times, the 1-based line of its second writing where
    the parser tells it, YAML's). Empty for TOML (a repeated key does not parse), for a text
    that does not parse, and for YAML without PyYAML."""
    if fmt == "json":
        try:
            value = json.loads(text, object_pairs_hook=_Object)
        except (json.JSONDecodeError, RecursionError):
            return {}
        return {place: (count, None) for place, count in _json_repeats(value, "")}
    if fmt == "yaml":
        yaml = _yaml()
        if yaml is None:
            return {}
        found: dict[KeyPlace, tuple[int, int | None]] = {}
        walked: set[int] = set()
        try:
            documents = list(yaml.compose_all(text, Loader=_loader(yaml)))
            for number, node in enumerate(documents):
                _yaml_repeats(yaml, node, f"[{number}]" if len(documents) > 1 else "", found,
                              walked)
        except (yaml.YAMLError, RecursionError):
            return {}
        return found
    return {}


def _key_paths(text: str, fmt: str) -> Counter[tuple[str, ...]]:
    """How many times each path of keys (list items left out of it) is written in ``text``;
    empty for a text that does not parse (and for YAML without PyYAML)."""
    paths: Counter[tuple[str, ...]] = Counter()
    if fmt == "json":
        try:
            _json_keys(json.loads(text, object_pairs_hook=_pairs), (), paths)
        except (json.JSONDecodeError, RecursionError):
            return Counter()
    elif fmt == "toml":
        try:
            _toml_keys(tomllib.loads(text), (), paths)
        except (tomllib.TOMLDecodeError, RecursionError):
            return Counter()
    elif fmt == "yaml":
        yaml = _yaml()
        if yaml is None:
            return paths
        walked: set[int] = set()
        try:
            for node in yaml.compose_all(text, Loader=_loader(yaml)):
                _yaml_keys(yaml, node, (), paths, walked)
        except (yaml.YAMLError, RecursionError):
            return Counter()
    return paths


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


class _Object(dict[str, Any]):
    """A JSON object that remembers the keys written in it more than once."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        counts = Counter(key for key, _ in pairs)
        self.repeated = {key: count for key, count in counts.items() if count > 1}


class _Members(list[tuple[str, Any]]):
    """A JSON object as the members it was written with, a repeated key each time."""


def _pairs(pairs: list[tuple[str, Any]]) -> _Members:
    return _Members(pairs)


def _json_keys(value: object, path: tuple[str, ...],
               paths: Counter[tuple[str, ...]]) -> None:
    if isinstance(value, _Members):
        for key, child in value:
            paths[(*path, key)] += 1
            _json_keys(child, (*path, key), paths)
    elif isinstance(value, list):
        for child in value:
            _json_keys(child, path, paths)


def _toml_keys(value: object, path: tuple[str, ...], paths: Counter[tuple[str, ...]]) -> None:
    if isinstance(value, dict):
        for key, child in value.items():
            paths[(*path, key)] += 1
            _toml_keys(child, (*path, key), paths)
    elif isinstance(value, list):
        for child in value:
            _toml_keys(child, path, paths)


def _yaml_keys(yaml: Any, node: Any, path: tuple[str, ...], paths: Counter[tuple[str, ...]],
               walked: set[int]) -> None:
    if id(node) in walked:
        return
    walked.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key, child in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
            paths[(*path, name)] += 1
            _yaml_keys(yaml, child, (*path, name), paths, walked)
    elif isinstance(node, yaml.SequenceNode):
        for child in node.value:
            _yaml_keys(yaml, child, path, paths, walked)


def _json_repeats(value: object, path: str) -> Iterator[tuple[KeyPlace, int]]:
    if isinstance(value, _Object):
        for key, count in value.repeated.items():
            yield (path, key), count
        for key, child in value.items():
            yield from _json_repeats(child, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _json_repeats(child, f"{path}[{index}]")


def _yaml_repeats(yaml: Any, node: Any, path: str,
                  found: dict[KeyPlace, tuple[int, int | None]], walked: set[int]) -> None:
    # An alias is the node it names (read once: a recursive anchor would never end).
    if id(node) in walked:
        return
    walked.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key, child in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            if name is not None and name != "<<":  # merge keys may repeat
                seen[name] = seen.get(name, 0) + 1
                if seen[name] == 2:
                    found[(path, name)] = (2, key.start_mark.line + 1)
                elif seen[name] > 2:
                    found[(path, name)] = (seen[name], found[(path, name)][1])
            where = name if name is not None else "?"
            _yaml_repeats(yaml, child, f"{path}.{where}" if path else where, found, walked)
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            _yaml_repeats(yaml, child, f"{path}[{index}]", found, walked)


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
