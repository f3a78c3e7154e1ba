"""A forward cost curve measured on the user's machine, in place of the built-in one.

The draft sizer prices each forward on the backend's :class:`~copygram.backends.base.BatchProfile`
(what a forward appending ``n`` tokens costs, in decode steps). The built-in curves were measured
on a few CPUs, and CPUs differ more than one curve per backend can say: on 2 vCPUs running
SmolLM2-135M on Transformers, 16 tokens cost 1.2 decode steps on one AMD EPYC, 1.7 on an Intel
Xeon and ~1.9 on a first-generation EPYC (Zen 1), and 32 tokens 1.9, 2.5 and ~3.7. A sizer that
believes the flat curve on the steep machine drafts long guesses that cost more than they save.

``copygram bench kernel --backend B --model M --out DIR`` times ``n`` one-token steps against one
forward of ``n`` tokens and writes ``DIR/kernel.json``; the config key ``cost_curve`` names that
file, and the backend then prices forwards on it (``cost(n) = forward(n) / (decode(n) / n)``,
made non-decreasing). The forward is the verify forward where the file has it (``verify_s``:
every row's logits, as a draft's verification keeps them), else the splice (files written before
it was measured): drafts are what the curve sizes, and where the LM head is dear a verify forward
costs more than a splice (SmolLM2-135M on Transformers, 2 vCPUs of a Zen 5 EPYC: 16 tokens ~2.5
decode steps against ~2.2, 64 tokens ~6.0 against ~4.9). The curve is read once, at load: batch
shapes then depend on the file and the tokens, never on a timing taken during the run, so the same
input still gives the same output on every run. The near-tie tolerance stays the backend's.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path

from copygram.backends.base import BatchProfile
from copygram.config import BackendConfig
from copygram.errors import ConfigError

__all__ = ["KernelPoint", "config_costs", "read_cost_curve", "read_kernel_points", "with_costs"]

_HOW = ("write one with `copygram bench kernel --backend {backend} --model MODEL --n "
        "2,4,8,16,32,64,128 --out DIR` on this machine and pass DIR/kernel.json")


@dataclass(frozen=True)
class KernelPoint:
    """One row of ``copygram bench kernel``'s measurement (seconds, medians): ``n`` one-token
    steps (``decode_s``), one forward of the same ``n`` tokens (``splice_s``) and, where the
    file has it, one that keeps every row's logits (``verify_s``)."""

    n: int
    decode_s: float
    splice_s: float
    verify_s: float | None = None


def read_kernel_points(path: str | Path, backend: str,
                       model: str | None = None) -> tuple[KernelPoint, ...]:
    """``backend``'s rows in a ``kernel.json`` that ``copygram bench kernel`` wrote (or a
    directory holding one), checked: the one reader of that file's curve (the cost curve below
    and the bench's ``s(N)`` read it). ``model``: the file name of the model being loaded; a
    curve measured on another model is refused (a forward's cost depends on the model's size).
    Raises :class:`ConfigError` saying how to write a good file. Cost: one small file read."""
    file = Path(path).expanduser()
    if file.is_dir():
        file = file / "kernel.json"
    how = _HOW.format(backend=backend)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"cost_curve {file}: no such file; {how}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"cost_curve {file} cannot be read as JSON ({exc}); {how}") from None
    entry = data.get(backend) if isinstance(data, dict) else None
    if not isinstance(entry, dict):
        measured_backends = ", ".join(data) if isinstance(data, dict) else ""
        raise ConfigError(f"cost_curve {file} holds no measurement for backend {backend!r} "
                          f"(it has: {measured_backends or 'none'}); {how}")
    measured = entry.get("model")
    if model is not None and isinstance(measured, str) and measured != model:
        raise ConfigError(f"cost_curve {file} was measured with {measured}, not {model}; a "
                          f"forward's cost depends on the model: {how}")
    points: list[KernelPoint] = []
    try:
        for row in entry["rows"]:
            verify = row.get("verify_s")
            point = KernelPoint(int(row["n"]), float(row["decode_s"]), float(row["splice_s"]),
                                None if verify is None else float(verify))
            times = (point.decode_s, point.splice_s, *(() if verify is None else (verify,)))
            if point.n < 1 or not all(math.isfinite(v) and v > 0 for v in times):
                raise ValueError(f"row n={point.n}: need n >= 1 and positive finite times")
            if point.n > 1:  # a one-token forward is the unit: 1.0 by definition
                points.append(point)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"cost_curve {file}: {backend}'s rows are not bench kernel rows "
                          f"({exc}); {how}") from None
    if not points:
        raise ConfigError(f"cost_curve {file}: {backend} has no rows of 2 tokens or more; {how}")
    return tuple(points)


def read_cost_curve(path: str | Path, backend: str,
                    model: str | None = None) -> tuple[tuple[int, float], ...]:
    """The ``(n_tokens, cost)`` points of ``backend``'s entry in a ``kernel.json``
    (:func:`read_kernel_points`), starting at ``(1, 1.0)``: ``cost(n) = forward(n) /
    (decode(n) / n)``, the forward the verify forward where measured, made non-decreasing."""
    points = {p.n: (p.splice_s if p.verify_s is None else p.verify_s) / (p.decode_s / p.n)
              for p in read_kernel_points(path, backend, model)}
    costs = [(1, 1.0)]
    for n in sorted(points):
        # A forward of more tokens never costs less: a dip is the machine's noise.
        costs.append((n, max(points[n], costs[-1][1])))
    return tuple(costs)


def with_costs(profile: BatchProfile,
               costs: tuple[tuple[int, float], ...] | None) -> BatchProfile:
    """``profile`` priced on ``costs`` (``None``: unchanged), its near-tie tolerance kept; its
    long-context model (``BatchProfile.context``, measured for the built-in curve's model) is
    dropped: a measured curve is priced as measured, at any context."""
    return (profile if costs is None
            else dataclasses.replace(profile, costs=costs, context=None))


def config_costs(config: BackendConfig, backend: str,
                 model: str | Path) -> tuple[tuple[int, float], ...] | None:
    """The measured curve ``config.cost_curve`` names for ``backend`` loading ``model`` (a path:
    its file name is checked against the file's; a hub name as given), or ``None``."""
    if config.cost_curve is None:
        return None
    return read_cost_curve(config.cost_curve, backend, Path(model).name)
