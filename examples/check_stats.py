"""The check of the demo edit: `python examples/check_stats.py FILE` exits 0 when FILE's helpers
are right (the unedited examples/stats.py fails it: its median of an even count is wrong)."""

import importlib.util
import sys


def load(path: str):  # noqa: ANN201 - a module object
    spec = importlib.util.spec_from_file_location("edited_stats", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(path: str) -> list[str]:
    stats = load(path)
    cases = [
        ("mean([1, 2, 3, 4])", stats.mean([1, 2, 3, 4]), 2.5),
        ("median([3, 1, 2])", stats.median([3, 1, 2]), 2),
        ("median([4, 1, 3, 2])", stats.median([4, 1, 3, 2]), 2.5),
        ("median([2, 4, 4, 4, 5, 5, 7, 9])", stats.median([2, 4, 4, 4, 5, 5, 7, 9]), 4.5),
        ("median([7])", stats.median([7]), 7),
        ("variance([2, 4, 4, 4, 5, 5, 7, 9])", stats.variance([2, 4, 4, 4, 5, 5, 7, 9]), 4.0),
        ("stdev([2, 4, 4, 4, 5, 5, 7, 9])", stats.stdev([2, 4, 4, 4, 5, 5, 7, 9]), 2.0),
    ]
    return [f"{call} = {got!r}, expected {want!r}" for call, got, want in cases
            if abs(got - want) > 1e-9]


if __name__ == "__main__":
    failures = check(sys.argv[1] if len(sys.argv) > 1 else "examples/stats.py")
    for failure in failures:
        print(f"check: FAIL {failure}")
    print("check: passed" if not failures else f"check: {len(failures)} failed")
    sys.exit(1 if failures else 0)
