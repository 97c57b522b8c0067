# SPDX-License-Identifier: MIT
"""Scenario-test fixtures: the tree is built once per session through the
`motet` tool, and the built programs run in simulated time.

The build directory is $MOTET_BUILD_DIR (set by `motet test`) or build/ at
the repository root.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOTET = ROOT / "tools" / "motet"
# A guard against a hung program, not a timing check.
RUN_TIMEOUT_S = 120


def _build_dir():
    p = Path(os.environ.get("MOTET_BUILD_DIR", "build"))
    return p if p.is_absolute() else ROOT / p


@pytest.fixture(scope="session")
def build_dir():
    """The build directory, after `motet build` succeeded in it."""
    bdir = _build_dir()
    res = subprocess.run([sys.executable, str(MOTET), "build", "--build-dir", str(bdir)],
                         cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if res.returncode != 0:
        pytest.fail(f"`motet build` failed (status {res.returncode}):\n"
                    f"{res.stdout[-4000:]}{res.stderr[-4000:]}", pytrace=False)
    return bdir


@pytest.fixture(scope="session")
def run_program(build_dir):
    """run_program(relative_path, *args) -> CompletedProcess (bytes output).

    Fails the test with the program's output if it exits non-zero."""

    def run(rel, *args):
        exe = build_dir / rel
        assert exe.exists(), f"{exe} was not built"
        res = subprocess.run([str(exe), *map(str, args)], capture_output=True,
                             timeout=RUN_TIMEOUT_S)
        assert res.returncode == 0, (
            f"{rel} {' '.join(map(str, args))} exited with status {res.returncode}:\n"
            f"{res.stdout.decode(errors='replace')[-3000:]}"
            f"{res.stderr.decode(errors='replace')[-3000:]}")
        return res

    return run


# The fixtures of module (or class) scope run a device or a program once
# for several tests that assert different things about that run. pytest-xdist
# runs each such fixture once per worker that gets one of its tests, so
# `motet test` (--dist loadgroup) keeps every test of such a module on one
# worker: the run is made once. The other tests spread one by one.
SHARED_SCOPES = ("module", "class", "package")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info and any(defs[-1].scope in SHARED_SCOPES for defs in info.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
