"""Rewrite mode: the model rewrites the document as plain text, drafted from the document (or a
caller's prediction), and writes exactly what plain step-by-step greedy decoding writes, whatever
the prediction, the draft sizes and the batched rows' noise; the session's surface around it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import copygram.backends
from copygram import EditSession
from copygram.bench.quality import rewrite_decode
from copygram.bench.replay import replay_rewrite
from copygram.catalog import default_editor
from copygram.config import parse_config
from copygram.decode.events import DoneEvent, EditResult, SpanEvent, TokenEvent
from copygram.decode.prompt import DefaultPromptBuilder, RewritePromptBuilder
from copygram.decode.rewrite import closes_file, extract_document, file_end, rewrite_budget
from copygram.decode.sampling import Sampler, Sampling
from copygram.errors import ConfigError, DamagedEditError, DocumentError
from copygram.testing import EOS, ScriptedBackend, SplitPromptBackend
from tests.decode.stepwise import stepwise_text
from tests.strategies import related_documents, texts
from tests.test_edit_cli import run_cli, use_session

DOCUMENT = "def f(x):\n    return x + 1\n\n\nprint(f(2))\n"
EDITED = "def f(x):\n    return x + 2\n\n\nprint(f(2))\n"


class PatchyBatches(ScriptedBackend):
    """A scripted model whose multi-token forwards get every third position wrong: a wrong token
    0.5 above the right one (a near-tie), where a one-token step is exact. Drafts are accepted
    in part, re-decided in the middle, and a loop that read a batched row without re-deciding it
    writes something else."""

    def _patch(self, logits: npt.NDArray[np.float32], position: int) -> npt.NDArray[np.float32]:
        if position % 3 or not logits.any():
            return logits
        right = int(np.argmax(logits))
        noisy = logits.copy()
        noisy[(right + 1) % self.vocab_size] = logits[right] + 0.5
        return noisy

    def splice(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        base = self.n_tokens
        logits = super().splice(ids)
        return self._patch(logits, base + len(ids)) if len(ids) > 1 else logits

    def splice_all(self, ids: Sequence[int], *,
                   rows: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
        base = self.n_tokens
        out = super().splice_all(ids, rows=rows)
        if len(ids) > 1 and len(out):
            wanted = range(len(ids)) if rows is None else rows
            out = np.stack([self._patch(row, base + r + 1) for row, r in zip(out, wanted,
                                                                                strict=True)])
        return out


def rewrite(session: EditSession, document: str, prediction: str | None = None,
            instruction: str = "x") -> tuple[list[int], EditResult]:
    """The tokens a rewrite-mode edit wrote (from its events) and its result."""
    tokens: list[int] = []
    for event in session.stream(document, instruction, prediction):
        if isinstance(event, TokenEvent):
            tokens.append(event.token_id)
        elif isinstance(event, SpanEvent):
            tokens += event.token_ids
        elif isinstance(event, DoneEvent):
            return tokens, event.result
    raise AssertionError("no DoneEvent")


def plain_greedy(reply: str, document: str, instruction: str = "x") -> list[int]:
    backend = ScriptedBackend(reply=reply)
    prompt = backend.tokenize(RewritePromptBuilder().build(document, instruction, backend),
                              special=True)
    return stepwise_text(backend, prompt, max_tokens=rewrite_budget(len(document.encode())),
                         split_prompt=False, closes=closes_file(backend.token_bytes(), document))


DRAFTS: list[dict[str, object]] = [  # as options
    {"draft_tokens": 16}, {"draft_tokens": 0}, {"draft_tokens": 3, "draft_adaptive": False},
    {"draft_tokens": 40, "draft_ngram": 1}]


EXPLAINED = "```\n\nThe fix: `f` now returns 2.\n```python\nprint(f())\n```\n"


@settings(max_examples=60, deadline=None)
@given(related_documents(), st.sampled_from(["document", "empty", "unrelated", "reply"]),
       texts, st.sampled_from(range(len(DRAFTS))), st.booleans(),
       st.sampled_from(["bare", "fenced", "explained"]))
def test_rewrite_mode_writes_what_plain_greedy_decoding_writes(
        pair: tuple[str, str], kind: str, unrelated: str, draft: int, noisy: bool,
        fence: str) -> None:
    before, after = pair
    if fence == "explained" and not after.endswith("\n"):
        after += "\n"
    # An explanation after the closing fence: plain greedy decoding and rewrite mode both end
    # after the fence's line (when the document has no fence line of its own).
    reply = {"bare": after, "fenced": f"```\n{after}```",
             "explained": f"```python\n{after}{EXPLAINED}"}[fence]
    prediction = {"document": None, "empty": "", "unrelated": unrelated, "reply": reply}[kind]
    expected = plain_greedy(reply, before)
    runs = []
    for _ in range(2):
        backend = (PatchyBatches(reply=reply, step_tolerance=1.0) if noisy
                   else ScriptedBackend(reply=reply))
        session = EditSession(backend, on_damage="keep", mode="rewrite", **DRAFTS[draft])
        tokens, result = rewrite(session, before, prediction)
        assert tokens == expected
        assert result.raw == bytes(tokens).decode("utf-8", errors="replace")
        assert result.text == extract_document(result.raw, before)
        # What it did not decode would not have changed the file.
        assert result.stop_reason == "max_tokens" or (
            result.text == extract_document(reply, before))
        if (fence == "explained" and file_end(before) is not None
                and result.stop_reason != "max_tokens"):  # the budget may come first
            assert result.stop_reason == "stop" and not result.raw.endswith(EXPLAINED)
        runs.append((tokens, [(call.kind, call.ids) for call in backend.calls]))
        if kind == "reply" and DRAFTS[draft]["draft_tokens"] and len(expected) > 20 and not noisy:
            assert result.stats.drafted_tokens > 0  # the drafts were used, not just refused
    assert runs[0] == runs[1]  # same input, same forwards, same output


def test_near_ties_are_re_decided_and_matter() -> None:
    reply = EDITED * 3
    expected = plain_greedy(reply, DOCUMENT)
    session = EditSession(PatchyBatches(reply=reply, step_tolerance=1.0), on_damage="keep",
                          mode="rewrite")
    tokens, result = rewrite(session, DOCUMENT * 3)
    assert tokens == plain_greedy(reply, DOCUMENT * 3)
    assert result.stats.tie_steps > 0 and result.stats.drafted_tokens > 0
    off = EditSession(PatchyBatches(reply=reply), on_damage="keep",
                      mode="rewrite", tie_tolerance=0.0)
    assert rewrite(off, DOCUMENT * 3)[0] != tokens
    assert expected  # the reference itself is the reply


def test_a_document_that_is_mostly_kept_is_mostly_drafted() -> None:
    document = "".join(f"line {i} of the file\n" for i in range(40))
    reply = document.replace("line 20 of", "line twenty of")
    backend = ScriptedBackend(reply=reply)
    tokens, result = rewrite(EditSession(backend, on_damage="keep", mode="rewrite"), document)
    assert result.text == reply and tokens == list(reply.encode())
    stats = result.stats
    assert stats.drafted_tokens > len(tokens) * 0.8
    assert stats.forwards < len(tokens) / 3  # a forward per token without drafts
    assert stats.decoded_tokens + stats.drafted_tokens == len(tokens)
    plain = EditSession(ScriptedBackend(reply=reply), on_damage="keep", mode="rewrite",
                        draft_tokens=0)
    assert rewrite(plain, document)[1].stats.forwards == len(tokens)


def test_rewrite_mode_equals_the_quality_benchmark_baseline() -> None:
    reply = f"```python\n{EDITED}```"
    # The baseline decodes the prompt's last token alone (one token per forward, as plain greedy
    # on a real model): a backend that knows where a split prompt ends.
    baseline = rewrite_decode(SplitPromptBackend(reply=reply), DOCUMENT, "Fix f.")
    session = EditSession(ScriptedBackend(reply=reply), on_damage="keep", mode="rewrite")
    result = session.edit(DOCUMENT, "Fix f.")
    assert (result.raw, result.text) == (baseline.raw, baseline.text) == (reply, EDITED)
    assert result.program_text == reply and result.stats.decoded_tokens < baseline.decoded_tokens


def test_the_prompt_is_the_rewrite_prompt_and_reproduces_the_edit() -> None:
    backend = ScriptedBackend(reply=EDITED)
    session = EditSession(backend, on_damage="keep", mode="rewrite")
    prompt = session.prompt(DOCUMENT, "Fix f.")
    assert prompt == RewritePromptBuilder().build(DOCUMENT, "Fix f.", backend)
    session.edit(DOCUMENT, "Fix f.")
    assert backend.calls[0].ids == tuple(backend.tokenize(prompt, special=True))
    program = EditSession(backend, on_damage="keep", syntax="lines", mode="program")
    assert program.prompt(DOCUMENT, "x") == DefaultPromptBuilder().build(DOCUMENT, "x", backend)


def test_program_mode_is_the_default_and_refuses_a_prediction() -> None:
    session = EditSession(ScriptedBackend(reply=EDITED), mode="program")
    assert session.mode == "program"
    with pytest.raises(ConfigError, match='mode="rewrite"'):
        session.edit(DOCUMENT, "x", prediction=EDITED)
    with pytest.raises(ConfigError, match="'mode' = 'rewrte'.*did you mean 'rewrite'"):
        EditSession(ScriptedBackend(), on_damage="keep", mode="rewrte")


def test_a_document_that_does_not_fit_is_refused() -> None:
    backend = ScriptedBackend(reply=EDITED, context_length=300)
    with pytest.raises(DocumentError, match="does not fit"):
        EditSession(backend, on_damage="keep", mode="rewrite").edit(DOCUMENT * 10, "x")


def test_max_new_tokens_bounds_a_rewrite() -> None:
    session = EditSession(ScriptedBackend(reply=EDITED), on_damage="keep",
                          mode="rewrite", max_new_tokens=7)
    result = session.edit(DOCUMENT, "x")
    assert result.raw == EDITED[:7] and result.stats.output_tokens == 7
    # The file would be cut short: kept here, marked; refused by default.
    assert result.stop_reason == "max_tokens"
    assert result.damage[0].kind == "unfinished"
    with pytest.raises(DamagedEditError, match="token budget") as caught:
        session.derive(on_damage="error").edit(DOCUMENT, "x")
    assert isinstance(caught.value.result, EditResult)
    assert caught.value.result.stop_reason == "max_tokens"
    whole = session.derive(max_new_tokens=None).edit(DOCUMENT, "x")
    assert whole.stop_reason == "eos" and not whole.damage


def test_from_config_reads_the_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(copygram.backends, "load",
                        lambda config: ScriptedBackend(reply=EDITED))
    session = EditSession.from_config({"mode": "rewrite", "route": {"draft_tokens": 8}})
    assert session.mode == "rewrite" and isinstance(session.prompt_builder, RewritePromptBuilder)
    assert session.edit(DOCUMENT, "x").text == EDITED
    assert EditSession.from_config({}).mode == "auto"  # a program or a rewrite per edit


def test_the_command_edits_in_rewrite_mode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "f.py"
    path.write_text(DOCUMENT)
    configs = use_session(monkeypatch, lambda: EditSession(ScriptedBackend(reply=EDITED),
                                                           on_damage="keep",
                                                           mode="rewrite"))
    assert run_cli([str(path), "-i", "Fix f.", "--mode", "rewrite", "--in-place"]) == 0
    # The command parses the config once and hands the session the parsed one.
    assert path.read_text() == EDITED and configs == [
        parse_config({"mode": "rewrite", "model": default_editor()[0]})]
    err = capsys.readouterr().err
    assert "rewrite:" in err and "accepted prediction tokens" in err


def test_sampled_verification_keeps_the_model_s_distribution() -> None:
    logits = np.array([2.0, 1.0, 0.5, 0.0, -1.0], dtype=np.float32)
    allowed = np.ones(5, dtype=np.bool_)
    for sampling in (Sampling(temperature=1.0, seed=3), Sampling(temperature=0.7, top_p=0.8,
                                                                 seed=4)):
        sampler = Sampler(sampling)
        expected = sampler.probabilities(logits, allowed)
        for drafted in (0, 1, 4):
            draws = np.bincount([sampler.verify(logits, allowed, drafted)
                                 for _ in range(20000)], minlength=5) / 20000
            assert np.abs(draws - expected).max() < 0.015, (sampling, drafted)


def test_sampled_rewrites_are_reproducible_with_a_seed() -> None:
    def run(seed: int) -> str:
        session = EditSession(ScriptedBackend(reply=EDITED), on_damage="keep", mode="rewrite",
                              temperature=0.9, seed=seed)
        return session.edit(DOCUMENT, "x").raw

    assert run(5) == run(5)
    # The scripted model puts ~0.99 on each right byte: a sampled rewrite is nearly always it.
    assert sum(run(seed) == EDITED for seed in range(5)) >= 3


def test_scripted_eos_is_never_drafted() -> None:
    backend = ScriptedBackend(reply="ab")
    tokens, result = rewrite(EditSession(backend, on_damage="keep", mode="rewrite"), "ab\n" * 20)
    assert tokens == [ord("a"), ord("b")] and EOS not in tokens
    assert result.stats.rejected_tokens >= 0


@settings(max_examples=40, deadline=None)
@given(related_documents(), st.sampled_from(range(len(DRAFTS))), st.booleans())
def test_a_teacher_forced_rewrite_runs_the_loop_the_model_runs(
        pair: tuple[str, str], draft: int, fenced: bool) -> None:
    # The model writes ``reply``; teacher-forcing ``reply`` on a model that writes something
    # else must take the same forwards: replay_rewrite measures rewrite mode's own loop.
    before, after = pair
    reply = f"```\n{after}```" if fenced else after
    # Where the budget cuts the model short, the teacher writes on: it writes all it is given.
    assume(len(reply.encode()) < rewrite_budget(len(before.encode())))
    model = ScriptedBackend(reply=reply)
    _, result = rewrite(EditSession(model, on_damage="keep",
                                    mode="rewrite", **DRAFTS[draft]), before)
    other = ScriptedBackend(reply="something else entirely\n")
    done = replay_rewrite(EditSession(other, on_damage="keep", mode="rewrite", **DRAFTS[draft]),
                          before, reply, instruction="x")
    assert done.raw == result.raw == reply
    assert [(c.kind, c.ids) for c in other.calls] == [(c.kind, c.ids) for c in model.calls]
    stats = done.stats
    assert stats.decoded_tokens + stats.drafted_tokens == len(done.token_ids)
    assert (stats.forwards, stats.drafted_tokens, stats.rejected_tokens) == (
        result.stats.forwards, result.stats.drafted_tokens, result.stats.rejected_tokens)


def test_a_closing_fence_never_opened_does_not_reach_the_file() -> None:
    # Issue 40: a rewrite that ended with ``` and no line break after it kept the fence, a
    # SyntaxError reported as success.
    document = "def f():\n    return 1\n"
    fixed = "def f():\n    return 2\n"
    assert extract_document("def f():\n    return 2\n```", document) == fixed
    assert extract_document("def f():\n    return 2\n```\n\nThat fixes it.\n", document) == fixed
    assert extract_document("```python\ndef f():\n    return 2```", document) == fixed
    assert extract_document("def f():\n    return 2~~~", document) == fixed
    # A Markdown file keeps its own fences; only one beyond its count goes, at the end.
    readme = "# T\n\n```sh\nmake\n```\n"
    assert extract_document(readme + "```\n", readme) == readme
    assert extract_document(readme.replace("make", "make test"), readme) == (
        readme.replace("make", "make test"))
    # A document whose lines end with a fence marker keeps such an ending.
    quoted = "s = '''\n```'''\n"
    assert extract_document(quoted, quoted) == quoted


LINES = ["def f():\n", "    return 1\n", "    return 2\n", "\n", "}\n", "```\n", "```python\n",
         "~~~\n", "````\n", "``` \n", "```js\n", "Here is the fix:\n", "That fixes it.\n",
         "x = 2```\n", "```\r\n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*LINES[:5], "```\n", "x = 2```\n", "That fixes it.\n"]),
                max_size=6),
       st.lists(st.sampled_from(LINES), max_size=12), st.booleans())
def test_what_follows_the_line_a_rewrite_ends_on_never_changes_the_file(
        document: list[str], output: list[str], glued: bool) -> None:
    # The rewrite ends after the line file_end ends it on: whatever the model would have written
    # after it, the file extract_document takes is the same.
    before, reply = "".join(document), "".join(output) + ("```" if glued else "")
    ends = file_end(before)
    assert (ends is None) == any(line.strip() in ("```", "~~~", "````") for line in document)
    if ends is None:
        return
    rule, at = ends(), None
    for number, line in enumerate(output):
        if rule(line):
            at = number + 1
            break
    if at is not None:
        assert extract_document("".join(output[:at]), before) == extract_document(reply, before)
        assert output[at - 1].strip() in ("```", "~~~", "````")


def test_a_rewrite_ends_at_the_fence_that_closes_the_file() -> None:
    document = "def f():\n    return 1\n"
    rule = file_end(document)
    assert rule is not None
    opened = rule()
    assert [opened(line) for line in ("Here is the fix:\n", "```\n", "def f():\n", "```\n")] == [
        False, False, False, True]
    bare = rule()  # the file written bare, then closed
    assert [bare(line) for line in ("def f():\n", "```python\n", "```\n")] == [False, False, True]
    assert file_end("# Title\n\n```\nmake\n```\n") is None  # a Markdown file's own fences
    # The model's explanation after the fence is not decoded: the reply ends there.
    reply = "```python\ndef f():\n    return 2\n```\n\nThe fix returns 2.\n" + "More. " * 200
    session = EditSession(ScriptedBackend(reply=reply), mode="rewrite")
    result = session.edit(document, instruction="Return 2.")
    assert result.text == "def f():\n    return 2\n" and result.stop_reason == "stop"
    assert result.raw == "```python\ndef f():\n    return 2\n```\n"
