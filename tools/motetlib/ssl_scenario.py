# SPDX-License-Identifier: MIT
"""The host's reading of an SSL scenario file (format: apps/ssl/README.md,
"Scenario files"): `motet demo` and its device's host read the duration,
sources, fires and deadline changes from it.

The device's programs read the same file with their own reader
(apps/ssl/sim/scenario.c), which checks each key and value; that reader
takes any byte in a comment and a key given twice. Any TOML parser must
read a scenario too (the format says so), so a file that is not UTF-8 or
not TOML is refused here, naming the file and the line, before any module
starts, never as a Python traceback halfway through the demo.
"""

from __future__ import annotations

import tomllib
from typing import Any

from .textfile import toml_text


# Every key has a default, but a scenario is what a run hears: a file
# with no key and no table (empty, or only comments) is a wrong path or an
# unsaved file, not a wish for 10 s of silence. The modules' reader says
# the same (apps/ssl/sim/scenario.c).
NOTHING = ("no key and no table (an empty file, or only comments); every default "
           "would run 10 s with no source and no fire")


class ScenarioError(ValueError):
    """A scenario file the host cannot read; the message names it."""


def read(path) -> dict[str, Any]:
    """The scenario's TOML document; ScenarioError naming the file (and the
    line and column where one is at fault) if it is unreadable, not UTF-8,
    not TOML or defines nothing."""
    try:
        text = toml_text(path, "a scenario")
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise ScenarioError(f"{path}: not valid TOML: nested too deeply") from None
    if not doc:
        raise ScenarioError(f"scenario file {path} defines nothing: {NOTHING}")
    return doc
