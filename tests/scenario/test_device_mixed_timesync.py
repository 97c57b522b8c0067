# SPDX-License-Identifier: MIT
"""Time synchronisation on emulated modules (docs/bus.md, "Emulated
modules"): the native module 0 of devices/mixed-three.toml sends a beacon
every second (apps/pingpong/sync_1hz.toml); the ATmega128 and the
Cortex-M3 fit the global clock, in microseconds, from their own kernel
ticks (32 us and 100 us), and answer the hub's probes through their bus
interfaces.

The bound asserted is derived as in test_device_timesync.py, with the
receiver's tick q_r beside the stamp grid q (30.52 us at 32.768 kHz): a
beacon's global stamp is truncated to q and its local capture to q_r, so
each offset sample is off by less than q + q_r; the least-squares line
over 8 beacons, evaluated up to a period after the newest, multiplies that
by at most 1.857; the probe's own kernel time is truncated to q_r; the
interrupt latency and the integer arithmetic add at most 2 us. Hence
|error| <= 1.86 (q + q_r) + q_r + 2 us once 8 beacons have come.
"""

import pytest

from device_run import DEVICES, build_device_programs, run_device

from conftest import ROOT

THREE = DEVICES / "mixed-three.toml"
SYNC_1HZ = ROOT / "apps" / "pingpong" / "sync_1hz.toml"
Q_US = 1e6 / 32768
TICK_US = {"1": 1e6 / 31250, "2": 1e6 / 10000}  # the AVR at 8 MHz / 256, the Cortex-M port


@pytest.fixture(scope="module")
def built(build_dir):
    build_device_programs(build_dir, THREE)
    return build_dir


def test_emulated_modules_follow_a_native_reference(built, tmp_path):
    run = run_device(built, tmp_path, THREE, "--app", SYNC_1HZ, "--until", 12, "--probe", 0.1,
                     "--probe-warmup", 9)
    ts = run.report["timesync"]
    assert ts["reference"] == 0
    assert set(ts["per_module"]) == {"1", "2"}
    for mid, tick_us in TICK_US.items():
        per = ts["per_module"][mid]
        assert per["count"] >= 25, ts  # ten probes a second for three seconds
        assert per["max_abs_us"] <= 1.86 * (Q_US + tick_us) + tick_us + 2.0, (mid, ts)
    assert run.report["bus"]["by_type"]["SYNC"] >= 11
    assert [run.kernel(0)["rx_bad"]] == [0]


def test_a_beacon_from_an_emulated_module_is_refused(built, tmp_path):
    """The bus stamps a beacon with its sender's time; the hub knows a
    native module's counter, not an emulated core's kernel time, so such a
    beacon reaches nobody, with an error, rather than a wrong clock."""
    app = tmp_path / "sync_cm.toml"
    # The clock task on the Cortex-M, once a second of its 100 us ticks.
    app.write_text(SYNC_1HZ.read_text().replace("module = 0", "module = 2")
                   .replace("u32 = 1000000", "u32 = 10000"))
    run = run_device(built, tmp_path, THREE, "--app", app, "--until", 2.5, "--probe", 0.1)
    notes = run.hub_notes("error: m2 (cortex-m) sent a time-sync beacon")
    assert len(notes) == 1, run.stdout[-3000:]
    assert run.report["bus"]["unstamped_beacons"] == 2
    assert run.report["timesync"] is None  # no reference: nothing measured
