"""``copygram bench rpc`` and its counting relay: the relay forwards every byte and counts a
round trip each time the client speaks after the server answered; the command measures a real
model over loopback servers (SmolLM2-135M) and writes every figure."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram.bench.relay import Relay, Traffic
from copygram.bench.rpc import Edit, Forward, markdown, predicted_s
from copygram.cli import main


@pytest.fixture(scope="module")
def echo() -> Iterator[tuple[str, int]]:
    """A server that answers each message with its bytes reversed."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(1 << 16):
                conn.sendall(data[::-1])

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()
    listener.close()


def _receive(sock: socket.socket, n: int) -> bytes:
    got = b""
    while len(got) < n:
        got += sock.recv(n - len(got))
    return got


@settings(max_examples=25, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=3000), min_size=1, max_size=6))
def test_the_relay_forwards_every_byte_and_counts_each_request_answered(
        echo: tuple[str, int], messages: list[bytes]) -> None:
    relay = Relay(echo)
    try:
        host, port = relay.endpoint.split(":")
        with socket.create_connection((host, int(port))) as sock:
            for message in messages:
                sock.sendall(message)
                assert _receive(sock, len(message)) == message[::-1]
        assert relay.traffic() == Traffic(len(messages), 2 * sum(map(len, messages)))
    finally:
        relay.close()


def test_traffic_adds_and_subtracts() -> None:
    assert Traffic(3, 100) + Traffic(1, 5) - Traffic(2, 50) == Traffic(2, 55)


def test_a_loopback_figure_moves_to_a_network_by_round_trips_and_bytes() -> None:
    assert predicted_s(1.0, 10, 0, 2.0, 1.0) == pytest.approx(1.02)
    assert predicted_s(1.0, 0, 125_000_000, 0.0, 1.0) == pytest.approx(2.0)  # 1 Gbit
    table = markdown([Forward(8, "all", 10.0, 12.0, 2, 1e6)],
                     [Edit("d/1", "program", 3.0, 4.0, 20, 100, 2_000_000, True)], [1.0], 1.0)
    assert "| 8 tokens, logits of all | 10.0 | 12.0 | 2 | 1,000,000 | 22.0 |" in table
    assert "| program | 1 | 3.0 | 4.0 | 20 | 100 | 2.0 | 1/1 | 4.1 |" in table


@pytest.mark.llamacpp
def test_the_command_measures_the_model_over_loopback_servers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import llama_cpp

    if not llama_cpp.llama_supports_rpc():
        pytest.skip("this llama-cpp-python build has no RPC backend (make bootstrap builds one)")
    out = tmp_path / "rpc.json"
    assert main(["bench", "rpc", "--model", "smollm2-135m", "--n", "1,4", "--repeats", "1",
                 "--prompt-tokens", "64", "--n-ctx", "1024", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["backends"]["rpc"]["rpc_servers"] and figures["backends"]["rpc"][
        "batch_invariant"]
    assert [(f["tokens"], f["rows"]) for f in figures["forwards"]] == [
        (1, "last"), (1, "all"), (4, "last"), (4, "all")]
    assert all(f["trips"] >= 1 and f["bytes"] > 0 for f in figures["forwards"])
    # logits come back whole: a row of SmolLM2's 49,152 floats for each row asked
    row = 49_152 * 4
    last, every = figures["forwards"][2:]
    assert last["bytes"] >= row and every["bytes"] >= 4 * row
    assert "| 4 tokens, logits of all |" in capsys.readouterr().out
