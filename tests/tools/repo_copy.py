# SPDX-License-Identifier: MIT
"""A copy of the repository as a fresh clone of this tree has it, for the
tests that run the `motet` command line as a new user would (they change
the copy, never this tree)."""

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def clone(dest):
    """The repository's files (tracked and new, not ignored; no build
    directory) copied to dest."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def user_env():
    """The environment a user's shell has: no build directory imposed."""
    return {k: v for k, v in os.environ.items() if k != "MOTET_BUILD_DIR"}
