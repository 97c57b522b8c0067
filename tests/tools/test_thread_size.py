# SPDX-License-Identifier: MIT
"""The threads part of the footprint check (tools/motetlib/thread_size.py):
with MOTET_THREADS=0 the thread objects are empty and nothing names a
thread symbol; on a real build when one exists."""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import build, thread_size  # noqa: E402

ON = {"sched.c.o": (9000, 100, 1900), "thread.c.o": (2400, 0, 190), "timer.c.o": (3200, 0, 40)}
OFF = {"sched.c.o": (9000, 100, 1900), "thread.c.o": (0, 0, 0), "timer.c.o": (3200, 0, 40)}


def test_empty_thread_objects_and_no_thread_symbols_pass():
    lines, failures = thread_size.report(ON, OFF, {"sched.c.o": {"sched_init", "queue_init"}})
    assert failures == []
    assert lines[-1].split()[:3] == ["total", "16830", "14240"]


def test_thread_code_left_in_the_no_thread_kernel_fails():
    off = dict(OFF, **{"thread.c.o": (12, 0, 0)})
    _, failures = thread_size.report(ON, off, {})
    assert any("thread.c.o has 12 B" in f for f in failures)


def test_a_hook_that_did_not_fold_away_fails():
    _, failures = thread_size.report(ON, OFF, {"sched.c.o": {"sched_init", "thread_k_yield"}})
    assert failures == ["sched.c.o still names thread_k_yield without threads"]


def test_real_build_has_no_thread_code_without_threads(capsys):
    kdir = build.build_dir(os.environ.get("MOTET_BUILD_DIR")) / "kernel"
    if not all((kdir / lib).exists() for lib in thread_size.LIBS):
        pytest.skip(f"no kernels with and without threads in {kdir}")
    assert thread_size.check(os.environ.get("MOTET_BUILD_DIR")) == 0, capsys.readouterr().err
