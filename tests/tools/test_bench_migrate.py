# SPDX-License-Identifier: MIT
"""The migration benchmark's pieces that need no device run: the parsing of a run's lines and of a callgrind profile, the fit
(the event-log table of migration phases is checked against migrate.h in test_eventlog_header.py)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import bench_migrate  # noqa: E402


def test_latencies_pair_each_freeze_with_its_arrival():
    lines = ["m1| [    100.000 ms] mig 0x10 FROZEN m0 MT_OK live=0",
             "m0| [    101.500 ms] mig 0x10 ATTACHED m1 MT_OK live=0",
             "m0| [    102.000 ms] mig 0x10 LIVE m1 MT_OK live=1",
             "m1| [    102.100 ms] mig 0x10 LEFT m0 MT_OK live=0",
             "m0| [    200.000 ms] mig 0x10 FROZEN m1 MT_OK live=0",
             "m1| [    200.750 ms] mig 0x10 ATTACHED m0 MT_OK live=0",
             "m0| [    200.990 ms] mig 0x10 LEFT m1 MT_OK live=0",  # may come first
             "m1| [    201.000 ms] mig 0x10 LIVE m0 MT_OK live=1"]
    got = bench_migrate.latencies(lines)
    assert [tuple(round(x, 3) for x in run) for run in got] == [(1.5, 2.0, 2.1),
                                                               (0.75, 1.0, 0.99)]


def test_fit_recovers_a_line():
    b0, slope = bench_migrate.fit([(0, 3.5), (1000, 16.5), (2000, 29.5)])
    assert abs(b0 - 3.5) < 1e-9 and abs(slope - 0.013) < 1e-12


def test_callgrind_profile_counts_kernel_self_cost_not_calls(tmp_path):
    profile = tmp_path / "cg.out"
    profile.write_text("""events: Ir
fl=(1) /src/kernel/src/migrate.c
fn=(1) migrator
10 100
cfl=(2) /src/ports/native/bus_native.c
cfn=(2) port_bus_send
calls=1 5
12 900
fl=(2)
fn=(2)
5 900
fl=(3) /usr/lib/libc.so
fn=(3) __memcpy_avx_unaligned_erms
1 40
fn=(4) write
1 70
""")
    # migrator's own 100 and the block copy's 40; not the call's 900
    # (the port's own cost), nor the port, nor write().
    assert bench_migrate.callgrind_kernel_ir(profile) == 140
