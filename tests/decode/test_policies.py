"""Token choice policies: the teacher writes a program as the tokenizer splits it."""

from __future__ import annotations

import numpy as np

from copygram import Copy, Gen, Program, render
from copygram.decode.policies import TeacherPolicy


def test_teacher_writes_the_program_as_the_tokenizer_splits_it_except_across_a_copy_close() -> None:
    # "><" is how the worked example tokenizes "</gen><copy"; '"/><' would put the next op's
    # "<" before the lines the copy splices, so the teacher never writes it.
    vocabulary = [*(bytes([i]) for i in range(256)), b"><", b'"/><']

    class Merging:
        def tokenize(self, text: str, special: bool = False) -> list[int]:
            data, out = text.encode("utf-8"), []
            while data:
                token = next((t for t in (257, 256) if data.startswith(vocabulary[t])), data[0])
                out.append(token)
                data = data[len(vocabulary[token]):]
            return out

    program = Program([Copy(1, 1), Gen("x\n"), Copy(3, 4), Gen("y\n")])
    teacher = TeacherPolicy(program, "lines", Merging(), frozenset({999}),  # type: ignore[arg-type]
                            vocabulary)
    allowed = np.ones(len(vocabulary), dtype=np.bool_)
    written: list[int] = []
    while len(b"".join(vocabulary[t] for t in written)) < len(render(program)):
        written.append(teacher.choose(np.zeros(len(vocabulary), dtype=np.float32), allowed))
        teacher.advance(written[-1])
    assert b"".join(vocabulary[t] for t in written) == render(program).encode()
    assert written.count(256) == 1 and 257 not in written

