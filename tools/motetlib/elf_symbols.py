# SPDX-License-Identifier: MIT
"""The symbols an image defines, as a toolchain's nm lists them: the one
reader of `nm` output for the tools that look symbols up in an image (the
device runs, the emulator adapters, the RAM and energy benchmarks).
Standard library only, so that the scripts run beside it import it too."""

from __future__ import annotations

import subprocess


def defined_symbols(nm, image) -> dict[str, tuple[int, int]] | None:
    """{name: (address, size)} of every symbol an image defines, by `nm -S`
    (size 0 where nm gives none), or None if nm cannot read the image (an
    nm that cannot be run raises OSError)."""
    res = subprocess.run([nm, "--defined-only", "-S", str(image)], capture_output=True,
                         text=True)
    if res.returncode != 0:
        return None
    found = {}
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4:
            found[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
        elif len(parts) == 3:
            found[parts[2]] = (int(parts[0], 16), 0)
    return found
