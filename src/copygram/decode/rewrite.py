"""Rewrite mode: the model writes the whole edited document as plain text, and the document (or a
caller's ``prediction``) is the speculative draft, verified in the forward that appends it.

The prompt is :class:`~copygram.decode.prompt.RewritePromptBuilder`'s (the session's prompt
builder), the loop is :func:`copygram.decode.plain_text.generate` with a
:class:`~copygram.decode.drafting.prediction.PredictionDrafter` over the draft text, and the edited
document is :func:`extract_document` of the model's raw output. Under greedy decoding the output
is token-identical to a plain step-by-step greedy decode of the same prompt (docs/rewrite.md)
that ends where it does: an end-of-generation token, the line closing the file's fence
(:func:`file_end`), or the output budget, :func:`rewrite_budget` of the document unless the
session sets ``max_new_tokens``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from copygram.decode.document import EditDocument
from copygram.decode.events import DoneEvent, EditResult, Event
from copygram.decode.loop import check_fits, prompt_ids
from copygram.decode.plain_text import generate, prediction_source
from copygram.decode.policies import Policy
from copygram.decode.setup import EditSetup
from copygram.decode.text import LineEnd, OutputText
from copygram.language.ops import Gen, Program

_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})[^\n`]*\n")


def extract_document(output: str, document: str | None = None) -> str:
    """The file in a rewrite's raw model output, deterministically.

    If the output (after any blank lines that lead it) opens with a code fence line (three or
    more backticks or tildes, then an optional language tag: ```` ```python ````), the file is
    what follows that line up to the *last* line holding just the same fence marker (trailing
    spaces allowed); the newline before the closing line belongs to the file's last line, and
    whatever follows the closing line (a model's explanation) is dropped. A fence never closed
    (the budget ran out) loses only its opening line. Any other output is the file as it
    stands. Fences inside the file stay: only one surrounding fence goes.

    With ``document`` (the file being edited), two more rules:

    * A lead-in before the fence goes with it (``Here is the fixed code:`` then a fenced file):
      where the output's first fence line comes after non-blank lines none of which is a line of
      ``document`` (stripped), the output is read from that fence line on. A line that the
      document has (a Markdown file's heading, say) makes the text before the fence part of the
      file, so a rewritten Markdown file keeps its own fences.
    * A closing fence the output never opened goes, with whatever follows it (a model that
      writes the file bare and closes it with ```` ``` ````, then perhaps an explanation): the
      first line holding just a fence marker, where the document has no such line; where it has
      some (a Markdown file), only a last such line beyond the document's count of them. A
      fence marker glued to the end of the file's last line (``return x```````) goes too,
      unless the document has a line ending so.
    * Where the document ends with a line break and the extracted file is not empty and does
      not, the document's line break is appended (a model often stops right after the last
      character; an edit does not silently drop the final newline).
    """
    text = _unfenced(output if document is None else _without_lead_in(output, document))
    if document is not None:
        text = _without_stray_fence(text, document)
    if document and text and not text.endswith(("\n", "\r")):
        for ending in ("\r\n", "\n", "\r"):
            if document.endswith(ending):
                return text + ending
    return text


def _without_lead_in(output: str, document: str) -> str:
    """``output`` from its first fence line on where every non-blank line before it is prose
    (not a line of ``document``); else ``output``."""
    own = _own_lines(document.splitlines())
    start, lead_in = 0, False
    for line in output.splitlines(keepends=True):
        if _FENCE_OPEN.fullmatch(line):
            return output[start:] if lead_in else output
        if line.strip():
            if line.strip() in own:
                return output
            lead_in = True
        start += len(line)
    return output


def _own_lines(lines: list[str]) -> frozenset[str]:
    """The document's non-blank lines, stripped: what marks an output's line as the file's
    (a lead-in has none of them)."""
    return frozenset(stripped for line in lines if (stripped := line.strip()))


def _unfenced(output: str) -> str:
    start = 0
    while True:
        end = output.find("\n", start)
        if end < 0 or output[start:end].strip():
            break
        start = end + 1
    opening = _FENCE_OPEN.match(output, start)
    if opening is None:
        return output
    marker = opening.group(1)
    body = output[opening.end():]
    closing = None
    offset = 0
    for line in body.splitlines(keepends=True):
        if line.rstrip() == marker:
            closing = offset
        offset += len(line)
    return body if closing is None else body[:closing]


_BARE_FENCE = re.compile(r"(`{3,}|~{3,})[ \t]*")


def _without_stray_fence(text: str, document: str) -> str:
    """``text`` without a closing fence that no opening fence matched (:func:`extract_document`,
    the third rule)."""
    own = [line for line in document.splitlines() if _BARE_FENCE.fullmatch(line)]
    lines = text.splitlines(keepends=True)
    bare = [at for at, line in enumerate(lines) if _BARE_FENCE.fullmatch(line.rstrip("\r\n"))]
    if bare and not own:
        text = "".join(lines[:bare[0]])
    elif len(bare) > len(own) and not "".join(lines[bare[-1] + 1:]).strip():
        text = "".join(lines[:bare[-1]])
    body = text.rstrip()
    glued = re.search(r"(`{3,}|~{3,})\Z", body)
    if glued and body[:glued.start()].strip() and not any(
            line.rstrip().endswith(glued.group()) for line in document.splitlines()):
        text = body[:glued.start()].rstrip(" \t") + text[len(body):]
    return text


def file_end(document: str) -> Callable[[], LineEnd] | None:
    """The end rule of a rewrite of ``document`` (one per run, :data:`LineEnd`): the output
    ends after the line that closes the file, the first line holding just a fence marker
    (```` ``` ````, ``~~~``) that does not open it. Nothing the output could write after that
    line changes :func:`extract_document`'s file, which ends before it, so the model's
    explanation after its closing fence is never decoded (nor its budget spent on one, which
    would leave the rewrite unfinished). A fence line opens the file where it is the output's
    first fence line and no line before it is a line of ``document``; a fence line with a tag
    after that (```` ```python ````) is part of the file. ``None`` where ``document`` has a
    line holding just a fence marker (a Markdown file's code block): there the closing fence
    is the last one past the document's count, which only the whole output tells."""
    lines = document.splitlines()
    if any(_BARE_FENCE.fullmatch(line) for line in lines):
        return None
    own = _own_lines(lines)

    def rule() -> LineEnd:
        opened = False  # a fence line seen, or a line of the document: a bare fence closes

        def ended(line: str) -> bool:
            nonlocal opened
            if _BARE_FENCE.fullmatch(line.rstrip("\r\n")):
                if opened:
                    return True
                opened = True
            elif _FENCE_OPEN.fullmatch(line) or line.strip() in own:
                opened = True
            return False

        return ended

    return rule


def closes_file(token_bytes: Sequence[bytes], document: str) -> Callable[[int], bool] | None:
    """:func:`file_end` for a decode that goes token by token outside the loop (the plain
    greedy baseline, a peer): a fresh function of each output token, in order, that says
    whether the output ends after it; ``None`` where the rewrite has no such end."""
    ends = file_end(document)
    return None if ends is None else OutputText(token_bytes, end=ends()).push


def rewrite_budget(document_tokens: int) -> int:
    """A rewrite's output budget: 1.5x the document's tokens plus 64 (a bug fix barely changes a
    file's length; the slack covers fences and a few new lines)."""
    return document_tokens + document_tokens // 2 + 64


def edit_budget(setup: EditSetup, document_tokens: int) -> int:
    """A rewrite-mode edit's output budget: the session's ``max_new_tokens``, else
    :func:`rewrite_budget` of the document's tokens."""
    limit = setup.options.max_new_tokens
    return limit if limit is not None else rewrite_budget(document_tokens)


def stream_rewrite(setup: EditSetup, document: EditDocument, instruction: str,
                   policy: Policy, prediction: str | None = None,
                   budget_tokens: int | None = None) -> Iterator[Event]:
    """One rewrite-mode edit: the prompt, the room check (the prompt and about the document's
    tokens again must fit), then :func:`~copygram.decode.plain_text.generate` drafting from
    ``prediction`` (default: the document). Yields its token and span events, then a
    :class:`DoneEvent` whose :class:`EditResult` has the extracted document as ``text``, the
    model's output as ``raw`` (and ``program_text``) and the run's ``stop_reason``;
    ``program`` is one gen op of the text. ``budget_tokens``: the document length the output
    budget is sized for (:func:`edit_budget`; default the document's own: an excerpt's
    rewrite gets the whole file's, as a new unit makes it longer than the excerpt)."""
    prompt = prompt_ids(setup, document.text, instruction)
    check_fits(setup.backend, prompt, document)
    budget = edit_budget(setup, len(document.tokens) if budget_tokens is None else budget_tokens)
    source = prediction_source(setup, document.text if prediction is None else prediction, prompt)
    for event in generate(setup, prompt, policy, max_tokens=budget, source=source,
                          ends=file_end(document.text)):
        if not isinstance(event, DoneEvent):
            yield event
            continue
        completion = event.result
        text = extract_document(completion.raw, document.text)
        yield DoneEvent(EditResult(text=text, program=Program([Gen(text)] if text else []),
                                   program_text=completion.raw, stats=completion.stats,
                                   raw=completion.raw, mode="rewrite",
                                   stop_reason=completion.stop_reason), event.text)


__all__ = ["closes_file", "edit_budget", "extract_document", "file_end", "rewrite_budget",
           "stream_rewrite"]
