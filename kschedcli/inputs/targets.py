"""Files ksched writes (`--report FILE.html`, `--save-snapshot FILE`), checked before anything is
read or asked: a file it can replace (its folder there and writable; not a directory, a device, a
FIFO or a socket) that is none of the command's inputs, so that ksched never writes over what it
reads. An input given as a directory stands for the files in it that a read of it takes (those
ending .json, .yaml or .yml, directly in it): writing one of them is writing an input too."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from ..errors import InputError
from .sources import SNAPSHOT_EXTENSIONS


def _same(a: str, b: str) -> bool:
    if os.path.abspath(a) == os.path.abspath(b) or os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _read_from(directory: str, path: str) -> bool:
    """Whether `path` is (or, written, would be) one of the files a read of `directory` takes."""
    if not path.endswith(SNAPSHOT_EXTENSIONS):
        return False
    folder = os.path.dirname(os.path.abspath(path)) or "."
    return _same(folder, directory)


def check_output_file(path: str, inputs: Iterable[str], field: str, what: str) -> None:
    """`path` (the value of option `field`, which writes `what` there) is a file ksched may replace
    and none of `inputs` (the command's other values as given: a file, @FILE, a directory, or
    anything else). Else one InputError line naming `field`."""
    if not path.strip():
        raise InputError("expected a file name, not an empty value", field=field)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"cannot write {what}: no such directory {folder}", source=path, field=field)
    if os.path.isdir(path):
        raise InputError("is a directory, not a file", source=path, field=field)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        st = None  # not there yet (or a dangling or looping link, which is replaced)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"is not a regular file (a device, a FIFO or a socket): {what} is written as a new file that replaces it",
            source=path,
            field=field,
        )
    for value in inputs:
        for candidate in {value, value[1:]} if value.startswith("@") else {value}:
            if not candidate or candidate == "-":
                continue
            if _same(candidate, path):
                raise InputError(f"is also an input of this command: {what} would replace it", source=path, field=field)
            if os.path.isdir(candidate) and _read_from(candidate, path):
                raise InputError(
                    f"is one of the files of {candidate}, an input of this command: {what} would replace it",
                    source=path,
                    field=field,
                )
    if not os.access(folder, os.W_OK):
        raise InputError(f"cannot write {what}: {folder}: permission denied", source=path, field=field)
