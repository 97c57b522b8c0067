# SPDX-License-Identifier: MIT
"""The verdict deadline of an application load (docs/bus.md, "Lost
frames"), whole-device: on the five-module device (devices/five-module.toml,
apps/mcast) m4 is stalled (`stall:`) as m2's outcome of the load (its
CREATED broadcast) reaches it, so that broadcast ends at m2 without m4's
acknowledgement and m4 never gets it (m2 cannot know: the bus keeps no
list of who missed what). Without the deadline m4 would wait for it for
ever, its part created but never initialised. With it, m4 asks m2 again
MOTET_BUS_VERDICT_TIMEOUT_MS (200 ms) after it took part, m2 sends its
outcome again, and the load ends committed on every module; m4's log says
why it ended late (the gap in m2's broadcasts, then its ASK frame).
"""

import pytest

from device_run import DEVICES, events, run_device

FIVE = DEVICES / "five-module.toml"
STALLED = 4
MISSED_FROM = 2  # m2's CREATED reaches m4 at about 1.35 ms
APPMGR = 0xF3
VERDICT_TIMEOUT_US = 200_000  # config.h, MOTET_BUS_VERDICT_TIMEOUT_MS
ASK_FRAME_BYTES = 12 + 6  # header and CRC, BUS_APP_ASK_SIZE


@pytest.fixture(scope="module")
def stalled(build_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("load-deadline")
    logs = tmp / "logs"
    run = run_device(build_dir, tmp, FIVE, "--until", 0.3, "--exact-clocks", "--fault",
                     f"stall:{STALLED}@0.00125:30", log_dir=logs)
    return run, logs


def inits(evs):
    """Times of the INITs (START on port 0) of application tasks."""
    return [e.time_us for e in evs if e.type == "START" and e.arg == 0 and 0x10 <= e.pid <= 0xEF]


def test_the_stalled_module_misses_an_outcome(stalled):
    run, _ = stalled
    assert run.hub_notes(f"m{STALLED} did not acknowledge frame")
    assert [n for n in run.hub_notes(f"m{STALLED} did not acknowledge frame")
            if f"CREATED m{MISSED_FROM}->all" in n]
    assert run.kernel(STALLED)["rx_missed"] == 1
    assert all(run.kernel(m)["rx_missed"] == 0 for m in range(5) if m != STALLED)


def test_the_load_ends_committed_on_every_module(stalled):
    run, logs = stalled
    assert run.report["bus"]["by_type"]["ASK"] == 1  # m4's, once
    assert run.report["bus"]["by_type"]["CREATED"] == 6  # one per module, m2's twice
    for mod in range(5):
        evs = events(logs, mod)
        assert inits(evs), f"module {mod} never initialised its part"
        assert not [e for e in evs if e.type == "ERROR"], mod
    assert "MT_ERR" not in run.stdout


def test_the_stalled_modules_log_says_why_it_ended_late(stalled):
    _, logs = stalled
    evs = events(logs, STALLED)
    first_init = min(inits(evs))
    asks = [e.time_us for e in evs
            if e.type == "BUS" and e.pid == APPMGR and e.arg == ASK_FRAME_BYTES]
    gaps = [e.time_us for e in evs if e.type == "BUS_GAP" and e.arg >> 8 == MISSED_FROM]
    assert len(asks) == 1 and asks[0] >= VERDICT_TIMEOUT_US, asks
    assert len(gaps) == 1 and asks[0] < gaps[0] <= first_init, (asks, gaps, first_init)
    # Every other module had every outcome long before.
    for mod in range(5):
        if mod != STALLED:
            assert min(inits(events(logs, mod))) < VERDICT_TIMEOUT_US, mod
