"""Facts about the machine a run happens on, read once and cheaply (``/proc/cpuinfo``, no
subprocess but an optional ``git``).

Why a module of its own: the CPU decides both the Transformers backend's kernel routing (by
vendor) and every timing a benchmark reports. The same code measured 25, 61 and ~110 ms per
decode step on three kinds of 2-vCPU host, so a result file that does not name its CPU cannot be
compared with another.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
# The instruction-set flags that change which kernels llama.cpp and PyTorch's CPU wheels run.
KERNEL_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile")


@dataclass(frozen=True)
class CpuInfo:
    """The CPU as ``/proc/cpuinfo`` names it; empty strings where the platform does not say."""

    vendor: str
    model_name: str
    family: str
    model: str
    flags: tuple[str, ...]
    cpus: int

    def describe(self) -> str:
        """One line for a result file: ``AMD EPYC (AuthenticAMD family 26 model 2;
        avx2 avx512f ...), 2 CPUs, x86_64 Linux``."""
        ident = " ".join(part for part in (
            self.vendor, f"family {self.family}" if self.family else "",
            f"model {self.model}" if self.model else "") if part)
        details = "; ".join(part for part in (ident, " ".join(self.flags)) if part)
        name = self.model_name or platform.processor() or "unknown CPU"
        return (f"{name}{f' ({details})' if details else ''}, {self.cpus} CPUs, "
                f"{platform.machine()} {platform.system()}")

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "flags": list(self.flags), "description": self.describe()}


def parse_cpuinfo(text: str, cpus: int) -> CpuInfo:
    """The first processor's fields of a ``/proc/cpuinfo`` text (every core of a VM reports the
    same)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    present = set(fields.get("flags", "").split())
    return CpuInfo(vendor=fields.get("vendor_id", ""), model_name=fields.get("model name", ""),
                   family=fields.get("cpu family", ""), model=fields.get("model", ""),
                   flags=tuple(flag for flag in KERNEL_FLAGS if flag in present), cpus=cpus)


def cpu_info() -> CpuInfo:
    """This machine's :class:`CpuInfo`: fixed per machine, so what it decides (kernel routing)
    never varies between runs."""
    try:
        text = CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    info = parse_cpuinfo(text, os.cpu_count() or 1)
    if not info.vendor:  # not Linux: the platform's own word
        info = CpuInfo(platform.processor(), info.model_name, info.family, info.model,
                       info.flags, info.cpus)
    return info


def source_revision(start: Path | None = None) -> str | None:
    """The git commit of copygram's source tree, ``+dirty`` when it has uncommitted changes;
    ``None`` for an installed wheel or where git is missing (costs two ``git`` calls, ~10 ms)."""
    root = start or Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "."],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if status.strip() else head


def run_record(argv: list[str], config: Mapping[str, object]) -> dict[str, object]:
    """What a benchmark's result file records about its run: the command, the configuration, the
    CPU, the load average at the start, the source revision and the copygram version."""
    try:  # the installed distribution's; copygram's __init__ sits above this layer
        version: str | None = importlib.metadata.version("copygram")
    except importlib.metadata.PackageNotFoundError:
        version = None
    return {"argv": argv, "config": dict(config), "cpu": cpu_info().as_json(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "copygram": version, "revision": source_revision(),
            "python": platform.python_version()}
