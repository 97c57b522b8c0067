# SPDX-License-Identifier: MIT
"""Devices of several instruction sets: a native module, an ATmega128
module (the AVR port's image in the simavr harness) and a Cortex-M3 module
(the Cortex-M port's image under QEMU -icount), each emulated one joined
to the hub in lock-step, exchanging messages over one bus
(devices/mixed-avr.toml, devices/mixed-three.toml, apps/pingpong;
docs/bus.md, "Emulated modules").
"""

import re
import subprocess

import pytest

from conftest import ROOT, RUN_TIMEOUT_S
from device_run import (DEVICES, PING, PONG, build_device_programs, env, motet_run_cmd,
                        run_device)

from motetlib import device as devmod  # noqa: E402 (device_run's path)

MIXED = DEVICES / "mixed-avr.toml"
THREE = DEVICES / "mixed-three.toml"
AVR = 1
CORTEX_M = 2
# The Cortex-M3 parks at the first instruction boundary inside a grant's
# tick (the plugin counts instructions, interrupts masked or not), or wakes
# at the tick itself: at one instruction a ns (shift 0) it ends no tick
# past a grant, and an event due at a tick reaches its interface there
# (module_kinds.py, CortexMKind.overshoot_ticks()).
CORTEX_M_OVERSHOOT = 0
# The longest ATmega128 instruction (CALL, RET, RETI) takes 4 cycles: an
# event due during one reaches the interface when it ends.
AVR_LONGEST_INSTRUCTION = 4
# A Cortex-M module's line is stamped with its kernel time, in ticks of
# 100 us (ports/cortex-m): the difference of two stamps is within a tick
# of the true one, whichever way the instants fall against the tick.
CORTEX_M_TICK_MS = 0.1
# The report's times are seconds in floating point: a sum of them may pass
# the end of the run by a rounding.
ROUNDING_S = 1e-12


@pytest.fixture(scope="module")
def mixed_built(build_dir):
    """The devices' programs: the native program, the harness and the QEMU
    plugin in the session's tree, the AVR and Cortex-M images in the trees
    of their ports beside it."""
    build_device_programs(build_dir, THREE)
    return build_dir


def contiguous(seqs):
    return seqs == list(range(1, len(seqs) + 1))


def test_native_and_avr_modules_exchange_messages(mixed_built, tmp_path):
    run = run_device(mixed_built, tmp_path, MIXED, "--until", 0.2)
    pongs = run.module_lines(PONG)
    pings = run.module_lines(PING)
    # A ping every 10 ms from about 18 ms on (the ATmega128 boots, then
    # creates its part of the application): 18 by 0.2 s, each answered.
    assert {mod for mod, _, _ in pongs} == {AVR} and {mod for mod, _, _ in pings} == {0}
    seqs = [int(m.group(1)) for _, _, m in pongs]
    assert len(seqs) >= 17 and contiguous(seqs), seqs
    assert {m.group(3) for _, _, m in pongs} == {"in order"}
    assert contiguous([int(m.group(1)) for _, _, m in pings]) and len(pings) >= len(seqs) - 1
    # The AVR's kernel took its time: each round trip is milliseconds of
    # its real cycles (the reply's console line at 500 kbaud), not zero.
    assert all(1000 < int(m.group(2)) < 9000 for _, _, m in pings), pings
    bus = run.report["bus"]
    assert bus["retransmissions"] == bus["rejected"] == bus["unreachable"] == 0, bus
    assert run.module(AVR)["kind"] == "avr" and run.module(0)["kind"] == "native"
    assert run.kernel(0)["rx_frames"] >= len(pings) and run.kernel(0)["rx_missed"] == 0


def test_mixed_runs_are_byte_identical(mixed_built, tmp_path):
    first = run_device(mixed_built, tmp_path, MIXED, "--until", 0.1, "--seed", 3)
    second = run_device(mixed_built, tmp_path, MIXED, "--until", 0.1, "--seed", 3)
    assert first.module_lines(PONG), first.stdout
    assert first.stdout == second.stdout
    assert first.report == second.report


def test_events_reach_the_avr_at_the_cycle_the_hub_granted(mixed_built, tmp_path):
    """Every event the hub gives the ATmega128 (a frame received, the end
    of a frame sent) is due at a cycle still in the core's future, and
    reaches the interface at that cycle, or at the end of the instruction
    running then: the lock-step never let the core run past an event."""
    run = run_device(mixed_built, tmp_path, MIXED, "--until", 0.1)
    m = run.module(AVR)
    events = m["bus_events"]
    # Every frame it received and every end of a frame it sent, but for the
    # last of each, which may still be on the way at the end.
    assert events["delivered"] >= m["frames_received"] + m["frames_sent"] - 2 > 10, m
    assert 0 <= events["max_late_ticks"] <= AVR_LONGEST_INSTRUCTION, events
    # Nor past a grant, asleep or awake: by an instruction at most (a core
    # going to sleep on the grant's cycle once skipped on to its next
    # timer, two seconds later: buslink.c's fence).
    assert events["max_past_grant_ticks"] <= AVR_LONGEST_INSTRUCTION, events


def test_avr_busy_and_asleep_are_its_own_cycles(mixed_built, tmp_path):
    """The summary's busy and asleep time of the ATmega128 are its core's
    cycles (slept from SLEEP to the wake-up, and the rest), so together they
    are the time it ran: the run's length, but for the last horizon."""
    run = run_device(mixed_built, tmp_path, MIXED, "--until", 0.1)
    m = run.module(AVR)
    ran = m["busy_s"] + m["sleep_s"]
    assert -ROUNDING_S <= run.report["end_s"] - ran < 50e-6, (ran, run.report["end_s"])
    assert m["busy_s"] > 0.01 and m["sleep_s"] > 0.01, m
    # mixed-avr.toml: 24 mW active, 0.03 mW asleep.
    assert m["energy_mj"] == pytest.approx(24.0 * m["busy_s"] + 0.03 * m["sleep_s"], rel=1e-6)


def test_an_idle_cortex_m_module_sleeps_and_costs_the_hub_nothing(mixed_built, tmp_path):
    """The Cortex-M3 answers a ping every 10 ms and sleeps in between: its
    busy and asleep time are its own clocks (WFI to the wake-up, measured by
    the port, and the rest), they add up to the run, and its energy is the
    device file's power figures times them. Asleep with nothing due it is
    not granted time: the hub grants it a few times around each event it
    handles, not a horizon after another."""
    run = run_device(mixed_built, tmp_path, THREE, "--until", 0.12)
    m = run.module(CORTEX_M)
    ran = m["busy_s"] + m["sleep_s"]
    assert -ROUNDING_S <= run.report["end_s"] - ran < 50e-6, (ran, run.report["end_s"])
    assert m["sleep_s"] > 0.95 * ran and m["busy_s"] > 0, m
    # mixed-three.toml: 40 mW active, 0.5 mW asleep.
    assert m["energy_mj"] == pytest.approx(40.0 * m["busy_s"] + 0.5 * m["sleep_s"], rel=1e-6)
    events = m["bus_events"]
    assert events["delivered"] >= 20 and events["grants"] < 4 * events["delivered"], events
    # Running, a core is granted at most a lookahead (a slot and the
    # smallest frame's wire time, tens of microseconds) at a time.
    assert events["grants"] < run.report["end_s"] / 100e-6 / 10, events


def pong_seqs(run, module=AVR):
    """The sequence numbers of the pongs the module's ponger sent."""
    return [int(m.group(1)) for mod, _, m in run.module_lines(PONG) if mod == module]


def check_powered_off_and_woken(run, module, pongs):
    """The module was powered off and a frame woke it; each ping was
    answered (the one that woke it too); its time off is neither busy nor
    asleep: the three add up to the run. Returns its report."""
    m = run.module(module)
    assert run.report["bus"]["wakeups"] >= 1 and m["off_s"] > 0, run.report["bus"]
    assert run.hub_notes(f"m{module} is powered off") and run.hub_notes(f"m{module} is powered on")
    seqs = pong_seqs(run, module)
    assert contiguous(seqs) and len(seqs) >= pongs, seqs
    ran = m["busy_s"] + m["sleep_s"] + m["off_s"]
    assert -ROUNDING_S <= run.report["end_s"] - ran < 50e-6, (ran, run.report["end_s"])
    return m


def test_corrupted_frames_to_the_avr_are_rejected_and_sent_again(mixed_built, tmp_path):
    run = run_device(mixed_built, tmp_path, MIXED, "--until", 0.12, "--fault", "corrupt:1@0.05:3")
    bus = run.report["bus"]
    # The ATmega128's kernel finds each bad CRC, the native sender repeats.
    assert bus["corrupted"] == bus["rejected"] == bus["retransmissions"] == 3, bus
    assert len(run.hub_notes("m1 rejected frame")) == 3
    seqs = pong_seqs(run)
    assert contiguous(seqs) and len(seqs) >= 9, seqs  # nothing lost
    assert run.kernel(0)["tx_given_up"] == 0


def test_a_delayed_frame_reaches_the_avr_at_its_later_cycle(mixed_built, tmp_path):
    run = run_device(mixed_built, tmp_path, MIXED, "--until", 0.12, "--fault", "delay:1@0.05:500")
    assert run.report["bus"]["delayed"] == 1
    assert contiguous(pong_seqs(run)) and len(pong_seqs(run)) >= 9
    assert run.module(AVR)["bus_events"]["max_late_ticks"] <= AVR_LONGEST_INSTRUCTION


def test_a_killed_avr_module_is_named_and_unreachable(mixed_built, tmp_path):
    run = run_device(mixed_built, tmp_path, MIXED, "--until", 0.12, "--fault", "kill:1@0.05")
    assert run.module(AVR)["state"] == "killed"
    assert run.module(AVR)["note"] == "killed by fault injection"
    assert run.hub_notes("m1 killed: frames to it fail as unreachable")
    assert all(t < 50.0 for _, t, _ in run.module_lines(PONG))
    assert run.kernel(0)["tx_unreachable"] >= 5  # a ping every 10 ms from 0.05 s on
    assert run.module(0)["state"] == "running"


def test_a_frozen_avr_module_becomes_unresponsive(mixed_built, tmp_path):
    run = run_device(mixed_built, tmp_path, MIXED, "--until", 0.12, "--fault", "freeze:1@0.05")
    assert run.module(AVR)["state"] == "frozen"
    assert run.hub_notes("m1 did not acknowledge frame")
    assert run.hub_notes("unresponsive (frozen)")
    assert run.kernel(0)["tx_unreachable"] >= 1


def test_an_avr_module_powered_off_is_woken_by_a_frame(mixed_built, tmp_path):
    run = run_device(mixed_built, tmp_path, MIXED, "--until", 0.12, "--fault", "off:1@0.05")
    check_powered_off_and_woken(run, AVR, 9)


def test_avr_modules_run_at_the_clock_their_image_is_built_for():
    text = MIXED.read_text().replace("cpu_mhz = 8\n", "cpu_mhz = 16\n")
    with pytest.raises(devmod.DeviceError, match="an avr module runs at 8 MHz"):
        devmod.parse(text, "mixed.toml")


def test_one_module_of_each_kind_exchange_messages(mixed_built, tmp_path):
    run = run_device(mixed_built, tmp_path, THREE, "--until", 0.12)
    assert [run.module(i)["kind"] for i in range(3)] == ["native", "avr", "cortex-m"]
    for module in (AVR, CORTEX_M):
        seqs = pong_seqs(run, module)
        assert len(seqs) >= 9 and contiguous(seqs), (module, seqs)
    assert {m.group(3) for _, _, m in run.module_lines(PONG)} == {"in order"}
    # The native module's pingers hear every answer back: two series.
    assert len(run.module_lines(PING)) >= 2 * 9 - 1
    bus = run.report["bus"]
    assert bus["retransmissions"] == bus["rejected"] == bus["unreachable"] == 0, bus


def test_three_kind_runs_are_byte_identical_and_events_on_time(mixed_built, tmp_path):
    first = run_device(mixed_built, tmp_path, THREE, "--until", 0.06, "--seed", 2)
    second = run_device(mixed_built, tmp_path, THREE, "--until", 0.06, "--seed", 2)
    assert first.stdout == second.stdout and first.report == second.report
    for module, bound in ((AVR, AVR_LONGEST_INSTRUCTION), (CORTEX_M, CORTEX_M_OVERSHOOT)):
        m = first.module(module)
        events = m["bus_events"]
        assert events["delivered"] >= m["frames_received"] + m["frames_sent"] - 2 > 4, m
        assert 0 <= events["max_late_ticks"] <= bound, (module, events)
    assert first.module(AVR)["bus_events"]["max_past_grant_ticks"] <= AVR_LONGEST_INSTRUCTION
    assert first.module(CORTEX_M)["bus_events"]["max_past_grant_ticks"] <= CORTEX_M_OVERSHOOT


def test_three_kind_cortex_m_runs_at_most_its_overshoot_past_a_grant(mixed_built, tmp_path):
    """The run whose Cortex-M3 went 3 timer clocks past a grant when the
    fence was a timer's interrupt: due at instruction 21,400, it waited for
    the end of migrate_start()'s clearing of its state with interrupts off,
    and the handler parked at 21,497. The plugin's count fence parks at
    the grant whatever runs (qemu_module.py, GuestTime.fence())."""
    run = run_device(mixed_built, tmp_path, THREE, "--until", 0.06, "--seed", 2)
    events = run.module(CORTEX_M)["bus_events"]
    assert events["max_past_grant_ticks"] <= CORTEX_M_OVERSHOOT, events


def test_three_kind_runs_with_faults_are_byte_identical(mixed_built, tmp_path):
    """Faults on both emulated modules (the AVR powered off, a frame to
    the Cortex-M delayed, one to it corrupted): the output, the report
    (the hub's notes included) and the native module's event log are the
    same byte for byte on a second run."""
    faults = ["--fault", "off:1@0.025", "--fault", "delay:2@0.03:300", "--fault",
              "corrupt:2@0.045"]
    runs = []
    for n in range(2):
        log_dir = tmp_path / f"logs{n}"
        runs.append((run_device(mixed_built, tmp_path, THREE, "--until", 0.07, "--seed", 5,
                                *faults, log_dir=log_dir), log_dir))
    (first, first_logs), (second, second_logs) = runs
    bus = first.report["bus"]
    assert bus["wakeups"] >= 1 and bus["delayed"] == 1 and bus["corrupted"] == 1, bus
    assert first.stdout == second.stdout
    assert first.report == second.report
    log = (first_logs / "m0.log").read_bytes()
    assert log and log == (second_logs / "m0.log").read_bytes()


def test_faults_on_the_cortex_m_module(mixed_built, tmp_path):
    """Corrupted frames to the Cortex-M are rejected by its kernel and sent
    again; killed, it is named and unreachable, and its QEMU goes with it."""
    run = run_device(mixed_built, tmp_path, THREE, "--until", 0.07, "--fault", "corrupt:2@0.03:2")
    bus = run.report["bus"]
    assert bus["corrupted"] == bus["rejected"] == bus["retransmissions"] == 2, bus
    assert len(run.hub_notes("m2 rejected frame")) == 2
    seqs = pong_seqs(run, CORTEX_M)
    assert contiguous(seqs) and len(seqs) >= 5, seqs
    run = run_device(mixed_built, tmp_path, THREE, "--until", 0.07, "--fault", "kill:2@0.03")
    assert run.module(CORTEX_M)["note"] == "killed by fault injection"
    assert all(t < 30.0 for mod, t, _ in run.module_lines(PONG) if mod == CORTEX_M)
    assert run.kernel(0)["tx_unreachable"] >= 3
    assert run.module(AVR)["state"] == "running"


def test_a_delayed_frame_reaches_the_cortex_m_at_its_later_tick(mixed_built, tmp_path):
    run = run_device(mixed_built, tmp_path, THREE, "--until", 0.07, "--fault", "delay:2@0.03:500")
    assert run.report["bus"]["delayed"] == 1
    assert run.hub_notes("delay m2")
    seqs = pong_seqs(run, CORTEX_M)
    assert contiguous(seqs) and len(seqs) >= 5, seqs
    # The first ping to m2 from 0.03 s on waits 500 us on the wire, and its
    # pong is that late; the pong after it is on time again. (Which ping
    # that is depends on when the modules finished booting.)
    times = {int(m.group(1)): t for mod, t, m in run.module_lines(PONG) if mod == CORTEX_M}
    late = min(seq for seq, t in times.items() if t >= 30.0)
    tick = CORTEX_M_TICK_MS + 1e-9
    assert times[late] - times[late - 1] == pytest.approx(10.0 + 0.5, abs=tick), times
    assert times[late + 1] - times[late] == pytest.approx(10.0 - 0.5, abs=tick), times
    assert run.module(CORTEX_M)["bus_events"]["max_late_ticks"] <= CORTEX_M_OVERSHOOT


def test_a_frozen_cortex_m_module_becomes_unresponsive(mixed_built, tmp_path):
    run = run_device(mixed_built, tmp_path, THREE, "--until", 0.07, "--fault", "freeze:2@0.03")
    assert run.module(CORTEX_M)["state"] == "frozen"
    assert run.hub_notes("m2 did not acknowledge frame")
    assert run.hub_notes("unresponsive (frozen)")
    assert all(t < 31.0 for mod, t, _ in run.module_lines(PONG) if mod == CORTEX_M)
    assert run.kernel(0)["tx_unreachable"] >= 1
    # The AVR module goes on answering, once the frame to m2 has timed out.
    seqs = pong_seqs(run, AVR)
    assert contiguous(seqs) and len(seqs) >= 5, seqs


def test_a_cortex_m_module_powered_off_is_woken_by_a_frame(mixed_built, tmp_path):
    """Powered off asleep, the Cortex-M3 executes nothing: its timers are
    held off while its clock runs on; a frame powers it on, and it answers."""
    run = run_device(mixed_built, tmp_path, THREE, "--until", 0.07, "--fault", "off:2@0.035")
    m = check_powered_off_and_woken(run, CORTEX_M, 5)
    # The wake-up (100 us in mixed-three.toml) delays the answer to the
    # ping that woke it, the third, and only that one. The pongs are
    # stamped in the Cortex-M3's 100 us kernel ticks, rounded down, and
    # where their phase lies at a tick boundary (a few instructions more
    # or less anywhere in the module's code move it) an undisturbed pong
    # reads on schedule or one tick late; what the core runs at power-on
    # before the woken pong (the expiry held off while it was off) can
    # carry its stamp over one more boundary. So the others lie within a
    # tick of each other, and the woken one 1 or 2 ticks behind the
    # earliest of them and behind every one, never on time.
    times = {int(g.group(1)): t for mod, t, g in run.module_lines(PONG) if mod == CORTEX_M}
    tick_ms = 0.1
    late = {k: round((t - times[1] - 10.0 * (k - 1)) / tick_ms) for k, t in times.items()}
    others = [ticks for k, ticks in late.items() if k != 3]
    assert max(others) - min(others) <= 1, times
    assert late[3] - min(others) in (1, 2) and late[3] > max(others), times
    assert m["energy_mj"] == pytest.approx(
        40.0 * m["busy_s"] + 0.5 * m["sleep_s"] + 0.002 * m["off_s"], rel=1e-6)


def test_frames_dropped_on_the_way_to_emulated_modules_are_sent_again(mixed_built, tmp_path):
    """Lost on the wire, a frame is neither seen nor acknowledged by the
    AVR or the Cortex-M; the native sender's ack timeout sends it again,
    and nothing is lost."""
    run = run_device(mixed_built, tmp_path, THREE, "--until", 0.14, "--fault", "drop:1@0.03",
                     "--fault", "drop:2@0.07")
    bus = run.report["bus"]
    assert bus["dropped"] == bus["retransmissions"] == 2 and bus["rejected"] == 0, bus
    assert len(run.hub_notes("dropped on its way to m1")) == 1
    assert len(run.hub_notes("dropped on its way to m2")) == 1
    for module in (AVR, CORTEX_M):
        seqs = pong_seqs(run, module)
        assert contiguous(seqs) and len(seqs) >= 10, (module, seqs)
    assert run.kernel(0)["tx_given_up"] == 0 and run.kernel(0)["tx_retransmits"] == 2


# pingpong3's pinger to the Cortex-M, and a pinger on the Cortex-M itself
# (its own timer, every 150 ticks of 100 us) to a ponger on the native m0.
PINGERS_BOTH_WAYS = """
[app]
name = "both_ways"

[programs]
pinger = 1
ponger = 2

[[task]]
name = "pinger"
program = "pinger"
priority = 2
module = 0
routes = ["ponger:0"]
init = [{ u32 = 10000 }, { u32 = 0 }]

[[task]]
name = "ponger"
program = "ponger"
priority = 3
module = 2
routes = ["pinger:0"]

[[task]]
name = "pinger2"
program = "pinger"
priority = 2
module = 2
routes = ["ponger2:0"]
init = [{ u32 = 150 }, { u32 = 0 }]

[[task]]
name = "ponger2"
program = "ponger"
priority = 3
module = 0
routes = ["pinger2:0"]
"""


def test_a_cortex_m_module_powered_off_takes_its_timer_at_power_on(mixed_built, tmp_path):
    """The Cortex-M's own pinger is due while it is off: it runs nothing
    then, and takes the expiry late, at once, when a frame powers it on;
    the timer keeps its period's phase."""
    app = tmp_path / "both_ways.toml"
    app.write_text(PINGERS_BOTH_WAYS)
    run = run_device(mixed_built, tmp_path, THREE, "--app", app, "--until", 0.07, "--fault",
                     "off:2@0.035")
    check_powered_off_and_woken(run, CORTEX_M, 5)

    def note_ms(text):
        (line,) = run.hub_notes(text)
        return float(line.split("[")[1].split(" s]")[0]) * 1e3

    off, on = note_ms("m2 is powered off"), note_ms("m2 is powered on")
    pings = {int(g.group(1)): t for mod, t, g in run.module_lines(PING) if mod == CORTEX_M}
    assert off < pings[1] + 15.0 < on, (off, on, pings)  # its second ping falls due while off
    assert not [t for mod, t, _ in run.module_lines(re.compile("")) if mod == CORTEX_M
                and off < t < on - 0.1], "the Cortex-M ran while off"
    # At once at power-on (its stamps are 100 us ticks), and the period's
    # phase kept.
    assert on - 0.1 <= pings[2] <= on + 0.1, (on, pings)
    assert pings[3] == pytest.approx(pings[1] + 30.0, abs=0.01), pings


def test_a_cortex_m_module_at_a_clock_qemu_cannot_give_is_refused():
    line = "cpu_mhz = 1000          # QEMU -icount shift=0: one instruction per ns\n"
    assert line in THREE.read_text()
    text = THREE.read_text().replace(line, "cpu_mhz = 50\n")
    with pytest.raises(devmod.DeviceError, match=r"cpu_mhz is 1000 / 2\^n .*: one of 1000, "
                       r"500, .*62\.5, 31\.25, .*; not 50"):
        devmod.parse(text, "three.toml")


def sensed_avr_device(tmp_path, sensor):
    """devices/mixed-avr.toml with the ATmega128's sensor `sensor` served
    by the SSL application's board program (pingpong's image never asks it
    for a sample: what matters is whether the module starts)."""
    text = re.sub(r'(?m)^args = \["--app", "pingpong"\].*\n', "", MIXED.read_text())
    text = text.replace('name = "compute"\n', 'name = "compute"\nargs = ["--app", "pingpong"]\n')
    scenario = ROOT / "apps" / "ssl" / "scenarios" / "demo.toml"
    text = text.replace('name = "sense"\nkind = "avr"\n',
                        f'name = "sense"\nkind = "avr"\nboard = "apps/ssl/ssl_board"\n'
                        f'args = ["--scenario", "{scenario}"]\nsensors = ["{sensor}"]\n')
    assert text.count("--app") == 1 and "ssl_board" in text
    path = tmp_path / f"sensed-{sensor.replace(':', '')}.toml"
    path.write_text(text)
    return path


def test_a_sensor_the_avr_modules_board_does_not_serve_is_refused(build_dir, tmp_path):
    """An avr module's sensors go to its board program, which refuses a name
    it does not serve; the harness went on without it, the module joined the
    bus with no sensors and `motet run` exited 0. The harness now waits for
    the board program's first, empty frame before the module joins: a board
    that ends first keeps it off the bus, and the run stops with status 2."""
    good = sensed_avr_device(tmp_path, "microphone:0")
    build_device_programs(build_dir, good)
    res = subprocess.run(motet_run_cmd(build_dir, sensed_avr_device(tmp_path, "microfone:0"),
                                       "--until", 0.1),
                         cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2, res.stdout[-3000:]
    assert "m1| ssl_board: unknown sensor: microfone:0\n" in res.stdout, res.stdout
    assert re.search(r"^m1\| motet-simavr: board program \S+/ssl_board ended with status 2 "
                     r"before it was ready: it refused its arguments", res.stdout, re.M)
    assert ("run: error: module 1 (sense) exited with status 123 before joining the bus: its "
            "board program refused the arguments it was given") in res.stdout, res.stdout
    # Served, the same module starts and answers.
    run = run_device(build_dir, tmp_path, good, "--until", 0.1)
    assert {mod for mod, _, _ in run.module_lines(PONG)} == {AVR}


def test_an_avr_image_built_without_the_bus_is_refused(build_dir, tmp_path):
    """A port's default kernel has no bus (apps/hello, and an application
    `motet new` made): on a device its image loaded the description alone,
    failed on the other module's tasks and halted, and the run stopped with
    'its emulator ended (status 1): ... it printed nothing'. It is refused
    before the run, saying why and what to build."""
    device = tmp_path / "hello-avr.toml"
    device.write_text(MIXED.read_text().replace('name = "sense"\nkind = "avr"\n',
                                                'name = "sense"\nkind = "avr"\n'
                                                'program = "apps/hello/hello"\n'))
    assert "apps/hello/hello" in device.read_text()
    build_device_programs(build_dir, device)
    res = subprocess.run(motet_run_cmd(build_dir, device, "--until", 0.1), cwd=ROOT, env=env(),
                         capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2, res.stdout[-3000:]
    assert re.search(r"^run: error: \S+hello-avr.toml: module 1 \(sense\) cannot join the device: "
                     r"its image \S+/apps/hello/hello\.elf has no bus: its kernel is built "
                     r"without MOTET_BUS", res.stdout, re.M), res.stdout[-3000:]
    assert "hub|" not in res.stdout  # refused before any module started


def start_board(build_dir, tmp_path, script, *options):
    """The simavr harness on the avr module's image of mixed-avr, with a
    board program that is the shell script `script` (None: a path where no
    program is); its status and stderr."""
    from motetlib import build
    build_device_programs(build_dir, MIXED)
    if script is None:
        board = tmp_path / "no-such-board"
    else:
        board = tmp_path / "board.sh"
        board.write_text("#!/bin/sh\n" + script)
        board.chmod(0o755)
    image = build.port_build_dir(build_dir, "avr") / "apps" / "pingpong" / "pingpong.elf"
    res = subprocess.run([str(build_dir / "tools/simavr-harness/motet-simavr"), "--quiet",
                          "--board", str(board), *options, str(image)],
                         capture_output=True, text=True, timeout=60)
    return res.returncode, res.stderr, board


def test_a_board_program_that_never_says_it_is_ready_stops_the_harness(build_dir, tmp_path):
    """The harness waited for the board program's first frame with a
    blocking read: a silent board hung it for ever (under motet run, 65 s,
    then 'modules did not connect'). It waits as long as --timeout (a few
    seconds without), then stops with the timeout's status."""
    status, err, board = start_board(build_dir, tmp_path, "exec sleep 60\n", "--timeout", "1")
    assert status == 124, err
    assert (f"motet-simavr: board program {board} did not say it was ready within 1 s (it "
            "sent no first frame; stopped)\n") in err, err


@pytest.mark.parametrize("script, status, said", [
    (None, 125, "cannot start board program {board}: No such file or directory\n"),
    ("kill -9 $$\n", 125, "board program {board} was killed by signal 9 (Killed) before it "
     "was ready\n"),
    ("printf 'abc'\nsleep 5\n", 125, "board program {board} sent a first frame of 25185 bytes, "
     "not the empty one that says it is ready (stopped)\n"),
    ("echo oops >&2\nexit 3\n", 125, "board program {board} ended with status 3 before it was "
     "ready (what it said, if anything, is above)\n"),
    ("echo 'board: unknown sensor' >&2\nexit 2\n", 123, "board program {board} ended with "
     "status 2 before it was ready: it refused its arguments (its message is above)\n"),
], ids=["exec-fails", "killed", "another-frame", "other-status", "refused"])
def test_each_early_end_of_a_board_program_is_told_as_it_is(build_dir, tmp_path, script,
                                                            status, said):
    """Any end of the board program before its ready frame was reported as
    'ended with status N before it was ready: it refused its arguments',
    status 123, which motet run turns into 'its board program refused the
    arguments it was given' (status 2): a board that does not exist, one
    killed by a signal, one that writes something else first or fails on
    its own. Only an exit with status 2, the refusal of every program of
    the project, is one now."""
    got, err, board = start_board(build_dir, tmp_path, script, "--timeout", "10")
    assert got == status, err
    assert "motet-simavr: " + said.format(board=board) in err, err
    assert ("refused" in err) == (status == 123), err


def test_a_native_module_that_cannot_reach_the_hub_did_not_refuse_its_arguments(build_dir,
                                                                                tmp_path):
    """A native module that cannot reach the hub exited with status 2, the
    status of a program that refuses its arguments, and the hub said so."""
    from motetlib import module_kinds
    build_device_programs(build_dir, MIXED)
    res = subprocess.run([str(build_dir / "apps/pingpong/pingpong"), "--sim", "--bus",
                          str(tmp_path / "no-hub.sock"), "--module", "0"],
                         capture_output=True, text=True, timeout=30)
    assert f"bus: module 0 cannot reach the hub at {tmp_path / 'no-hub.sock'}" in res.stderr
    assert res.returncode not in (0, module_kinds.EXIT_NATIVE_REFUSED), res.stderr
    native = module_kinds.KINDS["native"]
    assert native.refused_arguments(None, res.returncode) is None
