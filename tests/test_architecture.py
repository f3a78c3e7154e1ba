"""The layers of docs/architecture.md, checked on the source: no import goes up a layer, no cycles.

Every module of ``src/copygram`` is read with :mod:`ast` (nothing is imported), every ``import``
and ``from ... import`` of a copygram module is an edge - at module level, inside functions and
under ``TYPE_CHECKING`` alike, since a lazy upward import is still an upward dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Lowest first. A module may import its own layer and the layers below it, never above.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("copygram.errors", "copygram.io", "copygram.interrupts", "copygram.host")),
    ("language", ("copygram.language",)),
    ("constraints", ("copygram.constraints",)),
    ("config", ("copygram.config", "copygram.catalog")),
    ("backends", ("copygram.backends", "copygram.testing")),
    ("decode", ("copygram.decode",)),
    ("session", ("copygram.session",)),
    ("cli/bench/serve", ("copygram.cli", "copygram.edit_cli", "copygram.models_cli",
                         "copygram.rpc_cli",
                         "copygram.ceiling", "copygram.bench", "copygram.serve",
                         "copygram.__main__", "copygram")),
)


def layer_of(module: str) -> int:
    """The layer of ``module``: the longest matching prefix wins (``copygram`` itself is the
    package facade, the top)."""
    best, best_len = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            # ``copygram`` names the package's own __init__ only, not everything under it.
            inside = module.startswith(prefix + ".") and prefix != "copygram"
            if (module == prefix or inside) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((SRC / "copygram").rglob("*.py"))}


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The copygram modules ``path`` imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "copygram")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "copygram":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    modules = all_modules()
    names = set(modules)
    return {name: imports_of(path, names) for name, path in modules.items()}


def test_every_module_has_a_layer() -> None:
    orphans = [m for m in all_modules() if layer_of(m) < 0]
    assert not orphans, f"assign these modules a layer in docs/architecture.md and LAYERS: {orphans}"


def test_no_import_goes_up_a_layer() -> None:
    upward = []
    for module, targets in graph().items():
        for target in targets:
            if layer_of(target) > layer_of(module):
                upward.append(f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} "
                              f"({LAYERS[layer_of(target)][0]})")
    assert not upward, "imports that go up a layer:\n" + "\n".join(sorted(upward))


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the list of modules around it, or ``None``."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def test_no_import_cycles() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_checks_can_fail() -> None:
    # The checker itself: a two-module loop is found, an upward edge has a higher layer.
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert layer_of("copygram.session") > layer_of("copygram.decode.loop")
    assert layer_of("copygram.language.ops") < layer_of("copygram.constraints.base")


@pytest.mark.parametrize("module", ["copygram", "copygram.language", "copygram.constraints"])
def test_importing_the_library_never_imports_an_inference_stack(module: str) -> None:
    import subprocess
    import sys

    code = (f"import sys, {module}; "
            "bad = [m for m in ('torch', 'llama_cpp', 'transformers') if m in sys.modules]; "
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# -- the shape a newcomer would guess (issue 41) ---------------------------------------------

MAX_LINES = 400


def test_no_module_is_over_400_lines() -> None:
    long = {name: n for name, path in all_modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these modules by job (at most {MAX_LINES} lines): {long}"


# A branch on the syntax's name: the formats decide the family once (copygram.language.formats).
SYNTAX_BRANCH = ("syntax ==", "syntax !=", "== SEARCH_REPLACE", "!= SEARCH_REPLACE",
                 "reader is None")
FORMATS = ("copygram.language.formats",)


def syntax_branches(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines()
            if any(branch in line for branch in SYNTAX_BRANCH)]


def test_no_module_but_the_formats_branches_on_the_syntax() -> None:
    found = {name: branches for name, path in all_modules().items()
             if name not in FORMATS and (branches := syntax_branches(path.read_text("utf-8")))}
    assert not found, f"ask the format (copygram.language.formats) instead: {found}"


def option_lists(source: str, names: set[str], least: int) -> list[int]:
    """The lines where one expression or class names ``least`` or more of ``names`` (as keyword
    arguments, string constants, attributes or fields): a list of the options written out."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            named = {n.target.id for n in node.body
                     if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
            named |= {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.Call | ast.Dict | ast.Tuple | ast.List | ast.Set):
            named = {k.arg for k in getattr(node, "keywords", ()) if k.arg}
            named |= {c.value for c in ast.walk(node)
                      if isinstance(c, ast.Constant) and isinstance(c.value, str)}
            named |= {a.attr for a in ast.walk(node) if isinstance(a, ast.Attribute)}
        else:
            continue
        if len(named & names) >= least:
            found.append(node.lineno)
    return found


def test_the_option_names_are_listed_once() -> None:
    # SessionConfig's fields are the one list: a new option touches one place. Elsewhere a class
    # or expression may name a few options (a format checks the ones it refuses), not half.
    from copygram.config import SESSION_KEYS

    names, least = set(SESSION_KEYS), len(SESSION_KEYS) // 2
    found = {name: lines for name, path in all_modules().items()
             if (lines := option_lists(path.read_text("utf-8"), names, least))}
    assert found == {"copygram.config.options": found.get("copygram.config.options")}, found
    assert len(found["copygram.config.options"]) >= 1  # SessionConfig itself: the check sees it
    assert option_lists("f(" + ", ".join(f"{n}=1" for n in SESSION_KEYS) + ")", names, least)
