"""What a benchmark or a doc renderer writes: never a file it reads, nor one file twice."""

from __future__ import annotations

import os
from collections.abc import Iterable

from selfreflect.errors import InputError


def refuse_overwriting_inputs(
    outputs: Iterable[str | os.PathLike], inputs: Iterable[str | os.PathLike]
) -> None:
    """One line naming the output if one of ``outputs`` is (by any path to it) one of the
    command's ``inputs`` or another of its outputs; call it before anything is written."""
    read = {os.path.realpath(path): path for path in inputs}
    written: dict[str, str | os.PathLike] = {}
    for out in outputs:
        real = os.path.realpath(out)
        if real in read:
            raise InputError(f"{out}: is an input of this command ({read[real]}); write elsewhere")
        if real in written:
            raise InputError(f"{out}: written twice (also as {written[real]}); name two files")
        written[real] = out
