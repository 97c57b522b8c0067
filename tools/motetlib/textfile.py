# SPDX-License-Identifier: MIT
"""Text files the tools read (descriptions, device files): UTF-8 only, and
a byte that is not is an error naming the file, the line and the column."""


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
