"""OutputText: the text a run's events release, whole characters only, cut at a stop string, and
taken back to a byte (a retracted program tail)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from copygram.decode.text import OutputText

BYTES = [bytes([b]) for b in range(256)]  # token i is byte i


def push_all(text: OutputText, data: bytes) -> list[str]:
    released = []
    for byte in data:
        if text.push(byte):
            released.append(text.take())
            break
        released.append(text.take())
    return released


@given(st.text(max_size=40))
def test_released_text_is_whole_characters_and_adds_up(value: str) -> None:
    text = OutputText(BYTES)
    released = push_all(text, value.encode())
    assert all("\ufffd" not in piece for piece in released)
    raw, final = text.finish()
    assert raw == final == value
    assert "".join(released) + text.take() == value


@given(st.text(max_size=40), st.lists(st.text(min_size=1, max_size=4), max_size=3))
def test_a_stop_string_cuts_the_text_and_is_never_released(value: str, stop: list[str]) -> None:
    text = OutputText(BYTES, stop)
    released = push_all(text, value.encode())
    _, final = text.finish()
    # The run stops at the first character after which the output holds a stop string, so a
    # stop string that would have ended later is never seen ("100" with stops "0" and "100"
    # stops at "10": "1").
    expected, hit = value, False
    for end in range(1, len(value) + 1):
        hits = [at for s in stop if (at := value[:end].find(s)) >= 0]
        if hits:
            expected, hit = value[: min(hits)], True
            break
    assert final == expected
    assert text.stopped == hit
    assert "".join(released) + text.take() == final


@given(st.text(max_size=30), st.text(max_size=10), st.integers(0, 200))
def test_rewind_takes_bytes_back_and_text_resumes_between_characters(
        kept: str, dropped: str, cut: int) -> None:
    data = (kept + dropped).encode()
    keep = cut % (len(data) + 1)
    text = OutputText(BYTES)
    released = "".join(push_all(text, data))
    resumes = text.rewind(keep)
    assert text.n_bytes == keep
    assert resumes <= keep and data[:resumes].decode("utf-8", errors="strict") is not None
    # What was released, cut back at the byte the text resumes from, then what comes after.
    joined = released.encode()[:resumes]
    more = "".join(push_all(text, data[keep:])) + text.take()
    _, final = text.finish()
    assert (joined + more.encode() + text.take().encode()).decode() == final == kept + dropped


@given(st.lists(st.sampled_from(["a\n", "b", "end\n", "x\r\n", "\n", "é"]), max_size=12))
def test_an_end_rule_ends_the_text_after_its_line(pieces: list[str]) -> None:
    value = "".join(pieces)
    seen: list[str] = []

    def ended(line: str) -> bool:
        seen.append(line)
        return line == "end\n"

    text = OutputText(BYTES, end=ended)
    released = push_all(text, value.encode())
    raw, final = text.finish()
    # Each complete line is asked about once, whole, in order, up to the one that ends it.
    lines = [line for line in value.splitlines(keepends=True) if line.endswith("\n")]
    last = lines.index("end\n") + 1 if "end\n" in lines else len(lines)
    assert seen == lines[:last]
    if "end\n" in lines:
        assert text.stopped and final == "".join(lines[:last])
    else:
        assert not text.stopped and final == value
    assert value.startswith(raw) and "".join(released) + text.take() == final
