# SPDX-License-Identifier: MIT
"""Time synchronisation across modules, measured by the hub.

The simulator gives every module a crystal within +/-20 ppm (drawn from the
seed) and a counter that starts anywhere (some near the 32-bit wrap). Module
0 sends a beacon to the timesync pid at 1 Hz or 0.1 Hz; the hub probes
every other module at random instants and compares its estimate of the
global clock with module 0's actual clock at that instant.

The bound asserted is derived, not tuned (docs/bus.md, test_timesync.c):
both stamps of a beacon are truncated to the stamp clock's grid q (30.52 us
at 32.768 kHz), so each offset sample is off by less than q; the kernel's
least-squares line over the last 8 samples, evaluated up to one beacon
period after the newest, multiplies that by at most sum |w_i| = 1.857;
integer arithmetic and the probe's own tick add at most 2 us. Hence
|error| <= 1.86 q + 2 us, whatever the rate, once 8 beacons have come.
With an offset-only fit (window 1) the drift between two beacons adds
|ppm_i - ppm_0| x period instead.
"""

import pytest

from device_run import DEVICES, run_device

Q_US = 1e6 / 32768
LS_BOUND_US = 1.86 * Q_US + 2.0
STARTS = {1: 4294000000, 2: 123456789, 3: 7, 4: 4294967000}


@pytest.fixture
def device(tmp_path):
    """five-module.toml with counters that start far apart (two near the
    wrap): without synchronisation the modules disagree by seconds."""
    text = (DEVICES / "five-module.toml").read_text()
    for mid, start in STARTS.items():
        old = (f'name = "sense{mid}"\ncpu_mhz = 6\nbus_cycles_per_frame = 300\n'
               f'bus_cycles_per_byte = 20\nclock = {{ hz = 32768 }}')
        assert old in text
        text = text.replace(old, old.replace("{ hz = 32768 }", f"{{ hz = 32768, start = {start} }}"))
    path = tmp_path / "five-start.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("app, until, warmup, period_s", [
    ("sync_1hz", 30, 10, 1.0),
    ("sync_0p1hz", 150, 90, 10.0),
])
def test_sync_error_within_the_derived_bound(build_dir, tmp_path, device, app, until, warmup,
                                             period_s):
    run = run_device(build_dir, tmp_path, device, "--until", until, "--probe", period_s / 10,
                     "--probe-warmup", warmup, extra=["--app", app])
    ts = run.report["timesync"]
    assert ts["reference"] == 0
    assert ts["count"] >= 4 * 50  # four modules, about ten probes per beacon period
    assert set(ts["per_module"]) == {"1", "2", "3", "4"}
    assert ts["max_abs_us"] <= LS_BOUND_US, ts
    beacons = run.report["bus"]["by_type"]["SYNC"]
    assert abs(beacons - until / period_s) <= 1
    assert [run.kernel(mod)["rx_bad"] for mod in range(5)] == [0] * 5  # beacons pass the checks


def test_offset_only_error_grows_with_the_drift(build_dir, tmp_path, device):
    """Window 1 keeps no drift: between beacons ten seconds apart the error
    may grow by the drift, |ppm_i - ppm_0| x 10 s, on top of one grid step."""
    run = run_device(build_dir, tmp_path, device, "--until", 60, "--probe", 1, "--probe-warmup",
                     20, extra=["--app", "sync_0p1hz", "--timesync-window", "1"])
    ts = run.report["timesync"]
    ppm0 = run.module(0)["ppm"]
    for mid, stats in ts["per_module"].items():
        drift_us = abs(run.module(int(mid))["ppm"] - ppm0) * 10.0
        assert stats["max_abs_us"] <= Q_US + drift_us + 2.0, (mid, stats, drift_us)
