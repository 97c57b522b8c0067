# SPDX-License-Identifier: MIT
"""Text files the tools read (descriptions, device files): UTF-8 only, and
a byte that is not is an error naming the file, the line and the column."""

from pathlib import Path


def utf8_text(data: bytes, path) -> str:
    """The bytes of a text file as text; ValueError naming the file and
    the line and column of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ValueError(f"{path}: line {line}, column {column}: byte 0x{data[e.start]:02x} is "
                         "not UTF-8 text") from None


def toml_text(path, kind: str) -> str:
    """The text of the TOML file at `path`; ValueError naming the file and
    why it cannot be read, or the line and column of its first byte that is
    not UTF-8 (TOML is UTF-8). `kind` says what the file is ("a device
    file")."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        return utf8_text(data, path)
    except ValueError as e:
        raise ValueError(f"{e}; {kind} is TOML, which is UTF-8") from None
