"""The Transformers backend on a CUDA GPU (issue 44), float32 and bfloat16, on a model of a real
architecture with seeded random weights (``copygram.bench.device``: the weights of a real model
cannot travel to the GPU machine): the cache is used, a splice's rows choose what one-token
steps choose but at near ties, a cut cache decodes the same again, and rewrite mode writes plain
greedy's tokens. Skipped without a GPU; on one, ``scripts/gpu_check.sh`` runs them with
``COPYGRAM_DEVICE_FOLDER`` naming ``make gpu-prepare``'s folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from copygram.backends.transformers import TransformersBackend

pytestmark = [pytest.mark.transformers, pytest.mark.cuda]

DTYPES = ["float32", "bfloat16"]


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from copygram.bench.device import build_model

    folder = os.environ.get("COPYGRAM_DEVICE_FOLDER")
    if not folder:
        pytest.skip("set COPYGRAM_DEVICE_FOLDER to a folder of `make gpu-prepare`")
    return build_model(Path(folder), tmp_path_factory.mktemp("model"), device="cuda")


@pytest.fixture(scope="module", params=DTYPES)
def backend(request: pytest.FixtureRequest, model_folder: Path) -> Iterator[object]:
    from copygram.backends.transformers import TransformersBackend

    yield TransformersBackend(model_folder, device="cuda", dtype=request.param, n_ctx=4096)


def _loaded(backend: object) -> TransformersBackend:
    from copygram.backends.transformers import TransformersBackend

    assert isinstance(backend, TransformersBackend)
    return backend


def test_the_cache_is_used(backend: object) -> None:
    from copygram.bench.device import cache_kept

    assert cache_kept(_loaded(backend))["kept"]


def test_a_splice_chooses_what_steps_choose_but_at_near_ties(backend: object) -> None:
    from copygram.bench.device import splice_vs_steps

    backend = _loaded(backend)
    got = splice_vs_steps(backend)
    margin = got["smallest_margin_where_they_differ"]
    # A row that chooses otherwise than its step must be a near tie that the loop re-decides.
    assert margin is None or float(str(margin)) <= backend.batch_profile.step_tolerance, got


def test_a_cut_cache_decodes_the_same_again(backend: object) -> None:
    from copygram.bench.device import crop_and_redecode

    got = crop_and_redecode(_loaded(backend))
    assert got["tries_that_differ"] == 0, got


def test_rewrite_mode_writes_plain_greedys_tokens(backend: object) -> None:
    from copygram.bench.device import rewrite_equals_greedy

    got = rewrite_equals_greedy(_loaded(backend))
    assert got["same"] == got["documents"], got
