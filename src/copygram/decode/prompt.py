"""The prompt builder: instruction + numbered document + the language, in the chat template.

Replaceable: :class:`~copygram.session.EditSession` takes any :class:`PromptBuilder`. The worked example shows the
assistant's program *as the model will see it in its own context*: each copy tag is followed by
the lines it copied, because the decode loop splices those lines into the KV cache right after the
tag.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from copygram.config import LINE_VIEWS, PROMPT_ORDERS, SEARCH_SCOPES, check_choice
from copygram.language.block_render import render as render_blocks
from copygram.language.indent_style import TAB, indent_unit, relaid_text
from copygram.language.lines import split_lines
from copygram.language.ops import Copy, Gen, Program
from copygram.language.resolve import resolve
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    PLAN_PREFIX,
)
from copygram.language.syntaxes import DEFAULT_TAGS, get_syntax
from copygram.language.units import closes_with_brackets


class ChatModel(Protocol):
    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str: ...


class PromptBuilder(Protocol):
    def build(self, document: str, instruction: str, model: ChatModel) -> str:
        """The full prompt text, ending where the assistant's program begins."""
        ...


SYSTEM = """You edit documents by writing an edit program instead of rewriting the document.
An edit program is a sequence of two operations, written one after another:
{ops}
Copy every unchanged run of lines, generate only what changes, and keep the original order.
After each copy you will see the lines it copied."""


def number_lines(document: str, view: str = "pipe") -> str:
    """The document with a line number before every line, as the model reads it (``view``:
    one of :data:`~copygram.config.LINE_VIEWS`)."""
    check_choice("line_view", view, LINE_VIEWS)
    lines = split_lines(document)
    width = len(str(len(lines)))
    prefix = "{i:>{width}}| " if view == "pipe" else "{i:>{width}}\t"
    return "".join(prefix.format(i=i, width=width) + line for i, line in enumerate(lines, 1)) + (
        "" if not lines or lines[-1].endswith(("\n", "\r")) else "\n"
    )


def program_in_context(program: Program, document: str, syntax: str = DEFAULT_TAGS) -> str:
    """The program text as the decode loop leaves it in the model's context: each copy tag
    followed by the lines it copied."""
    lines = split_lines(document)
    render_op = get_syntax(syntax).render_op
    parts = []
    for op in program:
        parts.append(render_op(op))
        if isinstance(op, Copy):
            parts.append(resolve(Program([op]), lines))
    return "".join(parts)


def task_message(document: str, instruction: str, order: str = "instruction_first") -> str:
    """The user's turn: the instruction and the document as the model reads it, in ``order``
    (one of :data:`~copygram.config.PROMPT_ORDERS`). With the document first, the prompts of two
    instructions on one document share every token up to the instruction, which a cache keeps."""
    if order == "document_first":
        end = "" if not document or document.endswith("\n") else "\n"
        return f"Document:\n{document}{end}\nInstruction: {instruction.strip()}"
    return f"Instruction: {instruction.strip()}\n\nDocument:\n{document}"


def user_message(document: str, instruction: str, view: str = "pipe",
                 order: str = "instruction_first") -> str:
    """:func:`task_message` with the document's lines numbered (``view``)."""
    return task_message(number_lines(document, view), instruction, order)


_EXAMPLE_DOCUMENT = (
    "def area(width, height):\n"
    '    """Area of a rectangle."""\n'
    "    return width + height\n"
    "\n"
    "\n"
    "def perimeter(width, height):\n"
    "    return 2 * (width + height)\n"
)
_EXAMPLE_INSTRUCTION = "Fix the bug in area."


def _example_program() -> Program:
    return Program([Copy(1, 2), Gen("    return width * height\n"), Copy(4, 7)])


@dataclass(frozen=True)
class DefaultPromptBuilder:
    """System message with the language, one worked example, then the task."""

    syntax: str = DEFAULT_TAGS
    system: str = SYSTEM
    with_example: bool = True
    line_view: str = "pipe"  # LINE_VIEWS
    order: str = "instruction_first"  # PROMPT_ORDERS

    def __post_init__(self) -> None:
        number_lines("", self.line_view)  # checks the view once, here
        check_choice("prompt_order", self.order, PROMPT_ORDERS)

    def messages(self, document: str, instruction: str) -> list[dict[str, str]]:
        ops = get_syntax(self.syntax).describe()
        messages = [{"role": "system", "content": self.system.format(ops=ops)}]
        if self.with_example:
            example = program_in_context(_example_program(), _EXAMPLE_DOCUMENT, self.syntax)
            messages += [
                {"role": "user",
                 "content": user_message(_EXAMPLE_DOCUMENT, _EXAMPLE_INSTRUCTION, self.line_view,
                                         self.order)},
                {"role": "assistant", "content": example},
            ]
        messages.append({"role": "user", "content": user_message(document, instruction,
                                                                 self.line_view, self.order)})
        return messages

    def build(self, document: str, instruction: str, model: ChatModel) -> str:
        return model.chat_prompt(self.messages(document, instruction))


SEARCH_REPLACE_SYSTEM = f"""You edit documents by writing search/replace blocks instead of rewriting the document.
A block replaces a run of lines of the document:
{BLOCK_OPEN}the lines to change, exactly as they are in the document
{DIVIDER}the new lines that replace them
{BLOCK_CLOSE}Write one block for each place that changes, in document order, and nothing else.
Every line outside the blocks stays as it is."""

HEAD_SYSTEM = f"""You edit documents by writing search/replace blocks instead of rewriting the document.
A block replaces a whole function or paragraph of the document:
{BLOCK_OPEN}its first line, exactly as it is in the document
{DIVIDER}the whole function or paragraph again, changed
{BLOCK_CLOSE}Write one block for each function or paragraph that changes, in document order, and nothing else.
Every line outside the blocks stays as it is."""

ADDITION_ADVICE = ("Write the new code in a block for the function or line it goes after: that "
                   "function or line again, unchanged, then the new code.")
"""Put after the instruction of an edit that adds a unit, with head blocks
(:func:`~copygram.language.additions.addition_places`): told nothing, the default model headed
the right function, wrote it again and closed the block, or went on with ``=======`` as if it
had written a search part (each of the four large edit-kinds rows of the dev split traced so:
three that add a function, one a constant; docs/quality.md)."""

OUTLINE_NOTE = ("The file's top-level definitions, in order (their bodies are not in the part "
                "shown above):")
"""Put after the instruction of a scoped rewrite whose excerpt leaves out definitions the
instruction speaks of every one of ("an __all__ list that names every top-level function"),
before their first lines (:attr:`~copygram.language.focus.View.outline`)."""

_PLAN_ADVICE = (f"\nBefore the blocks, write one line that starts with `{PLAN_PREFIX}` and says "
                "what is wrong or what must change, and where.")
# The worked example's plan line: what the example's edit fixes, in the words asked for.
_EXAMPLE_PLAN = f"{PLAN_PREFIX} area adds width and height; it must multiply them.\n"

_UNIT_ADVICE = ("\nPut the whole function or paragraph that holds a change in the search part, "
                "and write all of it again, changed, in the replacement.")
_SCOPE_SYSTEM = {"lines": SEARCH_REPLACE_SYSTEM, "unit": SEARCH_REPLACE_SYSTEM + _UNIT_ADVICE,
                 "head": HEAD_SYSTEM}


@dataclass(frozen=True)
class _Example:
    """A worked example: the user's turn (document, instruction) and the assistant's answer,
    with the plan line that ``search_plan`` puts before it."""

    document: str
    instruction: str
    answer: str
    plan: str


def _example(scope: str, document: str) -> _Example:
    """The worked example for ``scope``, laid out as ``document`` is: its bodies closed by
    brackets or not, and indented by tabs or by fewer spaces where ``document`` is (shown four
    spaces, the model wrote a tab- or two-space-indented Python file's function in four:
    copygram.language.indent_style)."""
    example = _example_for(scope, document)
    unit = indent_unit(split_lines(document))
    own = indent_unit(split_lines(example.document))
    if unit is None or own is None or unit == own or (unit != TAB and len(unit) > len(own)):
        return example
    return dataclasses.replace(example, document=relaid_text(example.document, own, unit),
                               answer=relaid_text(example.answer, own, unit))


def _example_for(scope: str, document: str) -> _Example:
    if scope == "head":
        braced = closes_with_brackets(split_lines(document))
        return _BRACED_HEAD_EXAMPLE if braced else _HEAD_EXAMPLE
    if scope == "lines":
        answer = render_blocks(_example_program(), _EXAMPLE_DOCUMENT)
    else:  # the example's change is in area, lines 1-3 (the unit its first line opens)
        searched = split_lines(_EXAMPLE_DOCUMENT)[:3]
        fixed = split_lines(resolve(_example_program(), _EXAMPLE_DOCUMENT))[:3]
        answer = BLOCK_OPEN + "".join(searched) + DIVIDER + "".join(fixed) + BLOCK_CLOSE
    return _Example(_EXAMPLE_DOCUMENT, _EXAMPLE_INSTRUCTION, answer, _EXAMPLE_PLAN)


# Head blocks have an example of their own, whose changed function is not on the document's first
# line: shown the shared one (the change in line 1's function), the model wrote its block for
# line 1 of the document at hand, whatever that held (an import). The function written again
# keeps a line it does not change (its docstring): shown one without, the model wrote its
# functions again without their docstrings (docs/quality.md, issue 18).
_HEAD_EXAMPLE = _Example(
    document=("import math\n"
              "\n"
              "\n"
              "def area(radius):\n"
              "    return math.pi * radius ** 2\n"
              "\n"
              "\n"
              "def perimeter(radius):\n"
              '    """Perimeter of a circle."""\n'
              "    return math.pi * radius\n"),
    instruction="Fix the bug in perimeter.",
    answer=(BLOCK_OPEN + "def perimeter(radius):\n" + DIVIDER + "def perimeter(radius):\n"
            + '    """Perimeter of a circle."""\n    return 2 * math.pi * radius\n'
            + BLOCK_CLOSE),
    plan=f"{PLAN_PREFIX} perimeter forgets the factor 2; it must be 2 * pi * radius.\n",
)
# The same example in a layout whose bodies close with a bracket line, for documents laid out so
# (units.closes_with_brackets): the block's replacement ends with the function's "}".
_BRACED_HEAD_EXAMPLE = _Example(
    document=("const PI = Math.PI;\n"
              "\n"
              "const area = (radius) => {\n"
              "  return PI * radius ** 2;\n"
              "}\n"
              "\n"
              "const perimeter = (radius) => {\n"
              "  // Perimeter of a circle.\n"
              "  return PI * radius;\n"
              "}\n"),
    instruction=_HEAD_EXAMPLE.instruction,
    answer=(BLOCK_OPEN + "const perimeter = (radius) => {\n" + DIVIDER
            + "const perimeter = (radius) => {\n  // Perimeter of a circle.\n"
            + "  return 2 * PI * radius;\n}\n" + BLOCK_CLOSE),
    plan=_HEAD_EXAMPLE.plan,
)


@dataclass(frozen=True)
class SearchReplacePromptBuilder:
    """The prompt of ``syntax = "search_replace"``: the blocks explained, one worked example
    (the tag syntaxes' example document and edit, as a block of ``scope``: one of
    :data:`SEARCH_SCOPES`; head blocks have their own, a change in a document's second function,
    laid out as the document is), the document without line numbers (a block names its lines by
    their content). ``scope`` must be the session's ``search_scope`` (its default, ``"head"``, is
    program mode's): the prompt teaches the blocks the constraint admits."""

    system: str | None = None  # None: the scope's own (SEARCH_REPLACE_SYSTEM, HEAD_SYSTEM)
    with_example: bool = True
    scope: str = "head"
    plan: bool = False  # ask for a "Plan:" line before the blocks (``search_plan``)
    order: str = "instruction_first"  # PROMPT_ORDERS

    def __post_init__(self) -> None:
        check_choice("search_scope", self.scope, SEARCH_SCOPES)
        check_choice("prompt_order", self.order, PROMPT_ORDERS)

    def messages(self, document: str, instruction: str) -> list[dict[str, str]]:
        system = ((_SCOPE_SYSTEM[self.scope] if self.system is None else self.system)
                  + (_PLAN_ADVICE if self.plan else ""))
        messages = [{"role": "system", "content": system}]
        if self.with_example:
            example = _example(self.scope, document)
            messages += [
                {"role": "user", "content": task_message(example.document,
                                                         example.instruction, self.order)},
                {"role": "assistant", "content": (example.plan if self.plan else "")
                 + example.answer},
            ]
        messages.append({"role": "user",
                         "content": task_message(document, instruction, self.order)})
        return messages

    def build(self, document: str, instruction: str, model: ChatModel) -> str:
        return model.chat_prompt(self.messages(document, instruction))


REWRITE_SYSTEM = (
    "You edit documents. Apply the instruction to the document and reply with the whole edited "
    "document, and nothing else."
)


@dataclass(frozen=True)
class RewritePromptBuilder:
    """The plain-rewrite prompt: the answer is the whole edited document, written token by token
    (what full regeneration and prompt-lookup decoding answer)."""

    system: str = REWRITE_SYSTEM
    order: str = "instruction_first"  # PROMPT_ORDERS

    def __post_init__(self) -> None:
        check_choice("prompt_order", self.order, PROMPT_ORDERS)

    def messages(self, document: str, instruction: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": task_message(document, instruction, self.order)},
        ]

    def build(self, document: str, instruction: str, model: ChatModel) -> str:
        return model.chat_prompt(self.messages(document, instruction))
