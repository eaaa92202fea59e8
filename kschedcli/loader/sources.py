"""Raw input: the bytes of a file or of stdin, and the one-line errors for what cannot be read."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import InputError


def open_error(path: str, e: OSError) -> InputError:
    if isinstance(e, FileNotFoundError):
        return InputError("no such file", source=path)
    if isinstance(e, IsADirectoryError):
        return InputError("is a directory, not a file", source=path)
    return InputError(f"cannot read: {e}", source=path)


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise open_error(path, e) from None
    except UnicodeDecodeError as e:
        raise InputError(f"cannot read: {e}", source=path) from None


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise open_error(path, e) from None


def decode_utf8(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"cannot read: {e}", source=path) from None



def file_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError as e:
        raise open_error(path, e) from None
