"""``bench quality``'s lookup peer as an approach, the per-row speed comparisons of the report,
and the command with the peer and with a set whose rows carry no tests (``commits_py_repos``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from copygram.bench.data import EditRow
from copygram.bench.peers import GreedyRun
from copygram.bench.quality import (
    DATA_ENV,
    UNCHANGED,
    Approach,
    LookupPeer,
    RewriteBaseline,
    RowQuality,
    markdown_table,
    parse_approaches,
    pool,
    rewrite_budget,
    rewrite_decode,
    rewrite_mode_approach,
    rewrite_request,
    run_rows,
)
from copygram.errors import ConfigError
from copygram.session import EditSession
from copygram.testing import SplitPromptBackend
from tests.bench.rows import AFTER, BEFORE, quix_row

COMMIT = EditRow("commits_py_repos", "commit/x/y.py", BEFORE, AFTER,
                 instruction="Multiply in area.", lang="python", meta={"repo": "x"})


class ReplyPeer:
    """A fake peer that writes ``reply`` (cut at the budget) in forwards of ``per_forward``
    tokens, recording the prompts and budgets it was given."""

    def __init__(self, reply: str, per_forward: int = 4) -> None:
        self.reply, self.per_forward = list(reply.encode()), per_forward
        self.calls: list[tuple[list[int], int]] = []
        self.kept: list[int] = []  # keep_prefix's arguments, in order

    def keep_prefix(self, n_tokens: int) -> None:
        self.kept.append(n_tokens)

    def __call__(self, prompt: Sequence[int], max_new: int,
                 closes: Callable[[int], bool] | None = None) -> GreedyRun:
        self.calls.append((list(prompt), max_new))
        tokens = self.reply[:max_new]
        ended = next((at + 1 for at, token in enumerate(tokens) if closes and closes(token)),
                     None)
        stop = "eos" if len(tokens) == len(self.reply) else "budget"
        if ended is not None:
            tokens, stop = tokens[:ended], "stop"
        return GreedyRun(tokens, stop, 0.0, -(-len(tokens) // self.per_forward))


def test_lookup_peer_reads_the_baselines_prompt_and_budget() -> None:
    reply = f"```python\n{AFTER}```"
    backend = SplitPromptBackend(reply=reply)
    generate = ReplyPeer(reply)
    text, stats, error = LookupPeer(backend, generate)(COMMIT)
    baseline = rewrite_decode(backend, BEFORE, COMMIT.instruction)
    assert error is None and text == AFTER == baseline.text and stats["raw"] == baseline.raw
    prompt, budget = rewrite_request(backend, BEFORE, COMMIT.instruction)
    assert generate.calls == [(prompt, budget)] and budget == rewrite_budget(len(BEFORE))
    assert stats["decoded_tokens"] == len(reply) and stats["forwards"] == -(-len(reply) // 4)
    assert stats["stop"] == "eos" and stats["prompt_tokens"] == len(prompt)
    _, stats, _ = LookupPeer(backend, ReplyPeer(reply), max_new_tokens=5)(COMMIT)
    assert stats["stop"] == "budget" and stats["raw"] == reply[:5]
    tight = SplitPromptBackend(reply=reply, context_length=20)
    text, _, error = LookupPeer(tight, ReplyPeer(reply))(COMMIT)
    assert text is None and error is not None and error.startswith("DocumentError")


def test_run_rows_compares_the_lookup_peer_with_the_baseline() -> None:
    reply = f"```\n{AFTER}```"
    backend = SplitPromptBackend(reply=reply)
    runners: dict[str, Approach] = {"rewrite": RewriteBaseline(backend),
               "rewrite-mode": rewrite_mode_approach(EditSession(backend, mode="rewrite")),
               "lookup": LookupPeer(backend, ReplyPeer(reply)),
               "lookup-cut": LookupPeer(backend, ReplyPeer(reply), max_new_tokens=5)}
    results = run_rows([COMMIT], runners, progress=False)
    by_name = {q.approach: q for q in results}
    assert by_name["rewrite-mode"].same_as_rewrite and by_name["lookup"].same_as_rewrite
    assert by_name["rewrite"].passed is None and by_name[UNCHANGED].passed is None
    assert by_name["lookup"].exact and by_name["lookup"].forwards > 0
    assert by_name["lookup-cut"].same_as_rewrite is None  # only the named peer is compared
    entry = pool(results)["commits_py_repos"]
    assert entry["lookup"]["same_as_rewrite"] == 1 and entry["rewrite"]["pass"] is None


def test_repeated_rows_are_primed_alike_and_timed_by_their_fastest_run() -> None:
    from copygram.bench.quality.approaches import PrefixPrimer, prompt_prefix

    reply = f"```python\n{AFTER}```"
    backend = SplitPromptBackend(reply=reply)
    rewriting = EditSession(backend, mode="rewrite")
    peer = LookupPeer(backend, ReplyPeer(reply))
    order: list[str] = []

    def logged(name: str, approach: Approach) -> Approach:
        def run(row: EditRow) -> tuple[str | None, Mapping[str, object], str | None]:
            order.append(name)
            return approach(row)
        return run

    runners: dict[str, Approach] = {
        "rewrite": logged("rewrite", RewriteBaseline(backend)),
        "rewrite-mode": logged("rewrite-mode", rewrite_mode_approach(rewriting)),
        "lookup": logged("lookup", peer)}
    primed: list[str] = []

    def primer(name: str, prime: Callable[[EditRow], None]) -> Callable[[EditRow], None]:
        def run(row: EditRow) -> None:
            primed.append(name)
            prime(row)
        return run

    primers = {"rewrite": primer("rewrite", PrefixPrimer(backend, rewriting.prompt)),
               "rewrite-mode": primer("rewrite-mode", PrefixPrimer(backend, rewriting.prompt)),
               "lookup": primer("lookup", peer.prime)}
    results = run_rows([COMMIT], runners, progress=False, primers=primers, repeats=3)
    # Rounds of every approach, each run primed first.
    assert order == ["rewrite", "rewrite-mode", "lookup"] * 3 and primed == order
    prefix = len(prompt_prefix(backend, rewriting.prompt, COMMIT))
    assert 0 < prefix and peer.generate.kept == [prefix] * 3  # type: ignore[attr-defined]
    by_name = {q.approach: q for q in results}
    for name in runners:
        assert (by_name[name].repeats, by_name[name].reproduced) == (3, True)
    assert by_name["rewrite-mode"].same_as_rewrite
    entry = pool(results)["commits_py_repos"]
    assert (entry["rewrite-mode"]["repeats"], entry["rewrite-mode"]["reproduced"]) == (3, 1)
    assert entry[UNCHANGED]["reproduced"] is None
    table = markdown_table(pool(results))
    assert "| commits_py_repos | rewrite-mode | 3 | 1/1 |" in table
    assert "same output every run" not in markdown_table(
        pool(run_rows([COMMIT], runners, progress=False)))
    with pytest.raises(ConfigError, match="repeats"):
        run_rows([COMMIT], runners, progress=False, repeats=0)


def _row(approach: str, row_id: str, wall: float, crashed: bool = False,
         gen: float | None = None, dataset: str = "d") -> RowQuality:
    return RowQuality(dataset, row_id, approach, valid=not crashed, passed=None, exact=False,
                      unchanged=False, similarity=0.5, wall_s=wall, decoded_tokens=3,
                      crashed=crashed, gen_s=gen)


def test_speed_per_row_and_pooled() -> None:
    rows = [_row("rewrite", "a", 4.0), _row("rewrite-mode", "a", 1.0), _row("lookup", "a", 2.0),
            _row("rewrite", "b", 1.0), _row("rewrite-mode", "b", 2.0), _row("lookup", "b", 1.0),
            _row("rewrite", "c", 9.0), _row("rewrite-mode", "c", 0.5, crashed=True),
            _row("lookup", "c", 3.0), _row("rewrite-mode", "only-mode", 1.0)]
    pooled = json.loads(json.dumps(pool(rows)))["d"]
    mode = pooled["rewrite-mode"]
    # Rows a and b: c crashed in rewrite mode, only-mode has no baseline to compare with.
    assert (mode["faster_than_rewrite"], mode["compared_with_rewrite"]) == (1, 2)
    assert mode["speedup_vs_rewrite"] == pytest.approx((4.0 + 1.0) / (1.0 + 2.0))
    assert (mode["faster_than_lookup"], mode["compared_with_lookup"]) == (1, 2)
    assert mode["speedup_vs_lookup"] == pytest.approx((2.0 + 1.0) / (1.0 + 2.0))
    lookup = pooled["lookup"]
    assert (lookup["faster_than_rewrite"], lookup["compared_with_rewrite"]) == (2, 3)
    assert lookup["speedup_vs_rewrite"] == pytest.approx(14.0 / 6.0)
    assert "faster_than_rewrite" not in pooled["rewrite"]
    table = markdown_table(pool(rows))
    assert "| dataset | approach | vs | faster rows | speedup (summed wall) |" in table
    assert "| d | rewrite-mode | rewrite | 1/2 | 1.67x | - | - |" in table
    assert "| d | rewrite-mode | lookup | 1/2 | 1.00x | - | - |" in table
    assert "| d | lookup | rewrite | 2/3 | 2.33x | - | - |" in table
    assert "faster rows" not in markdown_table(pool([_row("rewrite", "a", 1.0)]))


def test_generation_time_speed_leaves_the_prompt_out() -> None:
    # The same prompt cost (3 s) in every call: generation time alone shows the drafting.
    rows = [_row("rewrite", "a", 7.0, gen=4.0), _row("rewrite-mode", "a", 5.0, gen=2.0),
            _row("rewrite", "b", 4.0, gen=1.0), _row("rewrite-mode", "b", 4.5, gen=1.5),
            _row("rewrite", "c", 5.0), _row("rewrite-mode", "c", 4.0, gen=1.0),  # no gen_s
            _row("rewrite", "a", 9.0, gen=6.0, dataset="e"),
            _row("rewrite-mode", "a", 6.0, gen=3.0, dataset="e")]
    pooled = json.loads(json.dumps(pool(rows)))
    mode = pooled["d"]["rewrite-mode"]
    assert mode["gen_s"] == pytest.approx(4.5) and pooled["d"]["rewrite"]["gen_s"] == 5.0
    assert (mode["faster_than_rewrite"], mode["compared_with_rewrite"]) == (2, 3)
    assert (mode["gen_faster_than_rewrite"], mode["gen_compared_with_rewrite"]) == (1, 2)
    assert mode["gen_speedup_vs_rewrite"] == pytest.approx(5.0 / 3.5)
    # Pooled over both sets, rows paired within their own set (row "a" is in both).
    every = pooled["all"]["rewrite-mode"]
    assert (every["gen_faster_than_rewrite"], every["gen_compared_with_rewrite"]) == (2, 3)
    assert every["gen_speedup_vs_rewrite"] == pytest.approx(11.0 / 6.5)
    assert every["speedup_vs_rewrite"] == pytest.approx(25.0 / 19.5)
    table = markdown_table(pool(rows))
    assert "| d | rewrite-mode | rewrite | 2/3 | 1.19x | 1/2 | 1.43x |" in table


def test_lookup_is_selectable_but_not_a_default() -> None:
    from copygram.bench.quality import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parse_approaches(parser.parse_args([]).approaches) == [
        "auto", "program", "rewrite", "rewrite-mode"]
    assert parse_approaches("program,rewrite,rewrite-mode,lookup")[-1] == "lookup"


def test_command_with_the_peer_on_a_set_without_tests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from copygram.bench import peers, quality

    data = tmp_path / "data"
    data.mkdir()
    for dataset, row in (("commits_py_repos", COMMIT), ("quixbugs_python", quix_row())):
        (data / f"{dataset}.dev.jsonl").write_text(json.dumps({
            "id": row.id, "source": "", "lang": row.lang, "before": row.before,
            "instruction": row.instruction, "after": row.after, "meta": row.meta}) + "\n")
    reply = f"```\n{AFTER}```"
    backend = SplitPromptBackend(reply=reply)
    monkeypatch.setattr(EditSession, "from_config", lambda config: EditSession(backend,
                                                                               mode="program"))
    loaded: list[object] = []

    def lookup_generator(backend: object, config: object, k: int = 10) -> ReplyPeer:
        loaded.append((config, k))
        return ReplyPeer(reply)

    monkeypatch.setattr(peers, "lookup_generator", lookup_generator)
    monkeypatch.setenv(DATA_ENV, str(data))
    out = tmp_path / "q.json"
    parser = argparse.ArgumentParser()
    quality.add_arguments(parser)
    args = parser.parse_args(["--datasets", "quixbugs_python,commits_py_repos",
                              "--approaches", "rewrite,rewrite-mode,lookup", "--json", str(out)])
    assert quality.run(args) == 0
    assert len(loaded) == 1 and loaded[0][1] == 10  # type: ignore[index]
    pooled = json.loads(out.read_text())["results"]
    commits = pooled["commits_py_repos"]
    assert set(commits) == {"rewrite", "rewrite-mode", "lookup", UNCHANGED}
    assert commits["rewrite"]["pass"] is None and commits["rewrite"]["exact"] == 1
    assert commits["lookup"]["same_as_rewrite"] == 1
    assert commits["rewrite-mode"]["compared_with_lookup"] == 1
    assert pooled["quixbugs_python"]["rewrite"]["pass"] == 0  # the reply is the wrong file
    captured = capsys.readouterr()
    assert "commits_py_repos carries no tests" in captured.err
    assert "| commits_py_repos | rewrite | - | 1/1 |" in captured.out
    assert "| commits_py_repos | rewrite-mode | lookup |" in captured.out
    # Twice per row: the peer reproduces its output and its entry says so.
    base = ["--datasets", "quixbugs_python,commits_py_repos",
            "--approaches", "rewrite,rewrite-mode,lookup", "--json", str(out)]
    assert quality.run(parser.parse_args([*base, "--repeats", "2"])) == 0
    commits = json.loads(out.read_text())["results"]["commits_py_repos"]
    assert (commits["lookup"]["repeats"], commits["lookup"]["reproduced"]) == (2, 1)
    assert commits["rewrite-mode"]["reproduced"] == 1
    with pytest.raises(ConfigError, match="--repeats must be >= 1"):
        quality.run(parser.parse_args([*base, "--repeats", "0"]))
