"""``copygram.host``: the CPU named from ``/proc/cpuinfo`` text, the run record."""

from __future__ import annotations

from pathlib import Path

from copygram.host import KERNEL_FLAGS, cpu_info, parse_cpuinfo, run_record, source_revision

ZEN5 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC
flags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: another core, never read
"""


def test_the_first_processor_is_read_and_only_the_kernel_flags_kept() -> None:
    info = parse_cpuinfo(ZEN5, cpus=2)
    assert (info.vendor, info.model_name, info.family, info.model) == (
        "AuthenticAMD", "AMD EPYC", "26", "2")
    assert info.flags == ("avx2", "avx512f", "avx512_bf16", "avx512_vnni")
    assert set(info.flags) <= set(KERNEL_FLAGS)
    assert info.describe().startswith(
        "AMD EPYC (AuthenticAMD family 26 model 2; avx2 avx512f avx512_bf16 avx512_vnni), 2 CPUs")


def test_an_empty_cpuinfo_still_describes_a_machine() -> None:
    info = parse_cpuinfo("", cpus=4)
    assert info.vendor == "" and info.flags == ()
    assert ", 4 CPUs, " in info.describe()


def test_this_machine_and_the_record_of_a_run(tmp_path: Path) -> None:
    assert cpu_info() == cpu_info()  # fixed per machine: the kernel routing depends on it
    record = run_record(["copygram", "bench"], {"model": "m"})
    assert record["argv"] == ["copygram", "bench"] and record["config"] == {"model": "m"}
    assert isinstance(record["cpu"], dict) and record["cpu"]["description"]
    assert source_revision(tmp_path) is None  # not a git tree: no revision invented
