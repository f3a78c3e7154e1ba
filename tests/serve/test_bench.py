"""``copygram bench serve`` against a real uvicorn server (in a thread) around a scripted model:
its requests, its stream parsing and its summary, in a second."""

from __future__ import annotations

import pytest

from copygram.bench.data import EditRow
from copygram.bench.serve import (
    markdown,
    percentile,
    replica_counts,
    request_body,
    run_variant,
    send,
)
from tests.serve.conftest import DOCUMENT, EDITED

pytestmark = pytest.mark.serve

ROW = EditRow(dataset="toy", id="toy:1", before=DOCUMENT, after=EDITED, instruction="add 2")


@pytest.fixture
def url(live_server: str) -> str:
    return live_server


def test_the_program_variant_times_streamed_edits(url: str) -> None:
    summary = run_variant(url, None, "program", [ROW], clients=2, requests=4, max_tokens=32)
    assert summary.errors == 0 and summary.requests == 4
    assert 0 < summary.ttft_p50_s <= summary.latency_p50_s <= summary.latency_p95_s
    assert summary.tokens_per_s > 0
    assert "| program | 1 | 2 | 4 | 0 |" in markdown([summary])


def test_a_refused_request_is_an_error_sample(url: str) -> None:
    sample = send(url, None, "/v1/edits", {"document": "", "instruction": "x"})
    assert sample.error.startswith("HTTP 400:") and "empty" in sample.error


def test_request_bodies_and_percentiles() -> None:
    path, body = request_body("prediction", ROW, 64, "m")
    assert path == "/v1/chat/completions" and body["model"] == "m"
    assert body["prediction"] == {"type": "content", "content": DOCUMENT}
    assert request_body("plain", ROW, 64, "m")[1].get("prediction") is None
    assert request_body("program", ROW, 64, "m")[0] == "/v1/edits"
    assert percentile([1.0, 2.0, 3.0], 50) == 2.0


def testreplica_counts_are_a_comma_list_of_positive_counts() -> None:
    from copygram.errors import ConfigError

    assert replica_counts("1,2") == [1, 2]
    for bad in ("", "0", "1,x", "-1"):
        with pytest.raises(ConfigError, match="--replicas"):
            replica_counts(bad)
