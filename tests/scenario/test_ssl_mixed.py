# SPDX-License-Identifier: MIT
"""SSL + FBD on the mixed device (devices/ssl-mixed.toml): the compute
module a Cortex-M3 under QEMU, the four sensing modules ATmega128s in the
simavr harness, the tasks placed by the same apps/ssl/ssl_device.toml as on
the native five-module device. Time is the chips' (no cost model); each
ATmega128's sensors are served on the host by apps/ssl/ssl_board from the
same scenario as the native modules' (docs/bus.md, "Sensors of emulated
modules").

One short run of each device on one scenario (a talker, then a fire while
the talker is still being located), kept short because an emulated device
runs far slower than a native one (docs/benchmarks.md, section "mixed").
"""

import os
import select
import struct
import subprocess
import time

import pytest

from conftest import ROOT, RUN_TIMEOUT_S
from device_run import DEVICES, build_device_programs, env, motet_run_cmd, run_device
from test_ssl import ALERT_DEADLINE_US, TOLERANCE_DEG, angle_error, write_scenario

from motetlib import ssl_demo  # noqa: E402 (device_run put tools/ on the path)

MIXED = DEVICES / "ssl-mixed.toml"
NATIVE = DEVICES / "ssl-device.toml"
COMPUTE, RADIO_MODULE, TEMP_MODULE = 1, 2, 3
BLOCK_S = 0.25
TALKER = (75.0, 1.25, 1.75, "speech")  # angle, start, length, kind
FIRE_S = 1.5
DURATION_S = 3.0
LAST_SECOND_S = DURATION_S - 1.0  # where the Cortex-M3 must still take frames
# A guard against a hung run: an emulated device runs some 5 to 50 times
# slower than real time, depending on the machine's load.
MIXED_TIMEOUT_S = 900
VERDICT_FRAME_B = 16  # 12 of overhead, ssl_verdict_t
READING_FRAME_B = 28  # ssl_reading_t


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    path = tmp_path_factory.mktemp("ssl-mixed") / "short.toml"
    return write_scenario(path, seed=6, duration=DURATION_S, sources=[TALKER],
                          fires=[(FIRE_S, 20.0, 3.0)])


@pytest.fixture(scope="module")
def runs(build_dir, tmp_path_factory, scenario):
    """The mixed and the native device on the scenario: (mixed run, native
    run), each with its detections and alerts."""
    build_device_programs(build_dir, MIXED)
    build_device_programs(build_dir, NATIVE)
    tmp = tmp_path_factory.mktemp("runs")
    out = []
    until = ["--until", DURATION_S + ssl_demo.LAST_REPORT_S]  # the Cortex-M3 never idles
    for device, more in ((MIXED, ["--trace", *until]), (NATIVE, [])):
        run = run_device(build_dir, tmp, device, *more, extra=["--scenario", scenario],
                         timeout=MIXED_TIMEOUT_S,
                         log_dir=tmp / "logs" if device == MIXED else None)
        run.log_dir = tmp / "logs" if device == MIXED else None
        found, alerts = ssl_demo.parse_radio(run.lines)
        out.append((run, found, alerts))
    return out


def test_directions_on_the_mixed_device_equal_the_native_devices(runs):
    (mixed, found, _), (_, native_found, _) = runs
    report = "\n".join(f"block {d['block']} angle {d['angle']} true {d['truth']}" for d in found)
    # The talker's full blocks after the SC's training: located, each within
    # the tolerance of the truth, and no detection without a source.
    assert len(found) >= 5, mixed.stdout[-3000:]
    assert all(d["truth"] is not None for d in found), report
    assert all(angle_error(d["angle"], d["truth"]) <= TOLERANCE_DEG for d in found), report
    # The same blocks as the native device, each direction within the
    # tolerance of the native one (the same fixed-point chain on other
    # instruction sets).
    assert [d["block"] for d in found] == [d["block"] for d in native_found], report
    for d, n in zip(found, native_found):
        assert angle_error(d["angle"], n["angle"]) <= TOLERANCE_DEG, (d, n)
    # The bands crossed the bus from the ATmega128s to the Cortex-M3: four
    # per located block, 672 bytes each.
    assert mixed.module(COMPUTE)["frames_received"] >= 4 * len(found)
    assert {mixed.module(m)["kind"] for m in (2, 3, 4, 5)} == {"avr"}
    assert mixed.module(COMPUTE)["kind"] == "cortex-m"
    bus = mixed.report["bus"]
    assert bus["retransmissions"] == bus["rejected"] == bus["unreachable"] == 0, bus


def test_the_cortex_m3_takes_frames_to_the_end_of_the_run(runs):
    """In the scenario's last second the Cortex-M3 still receives the
    ATmega128s' bands and answers each located block with its verdict, and
    no module is marked unresponsive. A core the adapter reported asleep
    with a frame's interrupt pending or being taken was granted nothing
    more: the verdict never came and the hub marked it unresponsive (0.44
    s into a longer run of this scenario, with the count fence alone). The
    windows where a fence lands for that are the adapter's unit tests'
    (tests/tools/test_qemu_clock.py): a run does not reach each of them."""
    (mixed, found, _), (_, native_found, _) = runs
    assert not mixed.hub_notes("unresponsive"), mixed.hub_notes("unresponsive")
    late = [d["block"] for d in found if d["t"] > LAST_SECOND_S]
    assert late and late == [d["block"] for d in native_found if d["t"] > LAST_SECOND_S], found
    for sender in (2, 3, 4, 5):
        assert any(t > LAST_SECOND_S and dst == COMPUTE
                   for t, dst, _ in frames_from(mixed, sender))
    verdicts = [t for t, dst, _ in frames_from(mixed, COMPUTE) if t > LAST_SECOND_S]
    assert len(verdicts) >= len(late), verdicts


def frames_from(run, module):
    """[(t_s, destination, bytes)] of the frames `module` handed to the
    bus, in order, from the hub's trace: each at its own time, or later if
    the hub was already past it when the core reported it (never sooner)."""
    out = []
    for line in run.lines:
        if f"m{module} hands frame" not in line or "DATA" not in line:
            continue
        t = float(line.split("[", 1)[1].split("s]", 1)[0])
        name = line.split("(", 1)[1].split(")", 1)[0]  # DATA m3->m2, 28 B
        dst = int(name.split("->m", 1)[1].split(",", 1)[0])
        out.append((t, dst, int(name.rsplit(" ", 2)[1])))
    return out


def test_fire_alert_preempts_the_fft_on_the_avr_module(runs):
    """Module 3 samples the temperature 10 ms into each block, when its
    microphone task has just begun its FFT (130 ms of the ATmega128's
    cycles). The alert must reach the radio on module 2 within 10 ms, and
    leave module 3 before that block's verdict does: the FBD chain ran
    while the FFT was still running, which only preemption allows (mic and
    sc run at priority 1, temp, ewma and alert at 2, on one core). The
    native device raises the same alert."""
    (mixed, _, alerts), (_, _, native_alerts) = runs
    assert len(alerts) == 1, alerts
    a = alerts[0]
    assert a["latency"] * 1e6 < ALERT_DEADLINE_US, a
    assert [x["t"] for x in alerts] == [x["t"] for x in native_alerts]
    frames = frames_from(mixed, TEMP_MODULE)
    capture = int(a["t"] / BLOCK_S) * BLOCK_S
    alert_frames = [t for t, dst, n in frames if dst == RADIO_MODULE and n == READING_FRAME_B]
    verdicts = [t for t, dst, n in frames
                if dst == COMPUTE and n == VERDICT_FRAME_B and t > capture]
    assert alert_frames and verdicts, frames
    sent = next(t for t in alert_frames if t >= a["t"])
    assert sent < verdicts[0], (f"the alert left m3 at {sent} s, after the verdict of the block "
                                f"captured at {capture} s ({verdicts[0]} s)")
    # The FFT outlasted the whole FBD chain by far.
    assert verdicts[0] - capture > 0.1, verdicts[0]


def test_modules_report_their_own_cycles(runs):
    """Busy and asleep from the chips' own cycles: a sensing ATmega128 is
    busy with its FFT for a good part of each block and asleep the rest."""
    (mixed, _, _), _ = runs
    end = mixed.report["end_s"]
    for m in (2, 3, 4, 5):
        mod = mixed.module(m)
        counted = mod["busy_s"] + mod["sleep_s"]
        assert 0.3 < mod["busy_s"] / counted < 0.8, mod
        # All of its time up to its last wake-up: the sleep the run's end
        # cut short (after the scenario, with no timer left) is not counted.
        assert DURATION_S - BLOCK_S < counted <= end, mod
        assert mod["energy_mj"] > 0


def test_emulated_modules_log_their_handlers_in_their_own_cycles(runs):
    """--log-dir on the mixed device: every module's event log, taken by the
    simavr harness or QEMU's plug-in as the chip wrote it, each record at
    its cycle. `motet profile` reads it as a native module's: each task's
    cycles on the kind of chip it ran on, and no other; a module's handlers
    take no more than the time it was awake, and on the sensing modules,
    whose FFT is most of their work, most of it."""
    from motetlib import appplace, device, eventlog, profile
    (mixed, _, _), _ = runs
    app = appplace.load(ROOT / "apps" / "ssl" / "ssl_device.toml")
    dev = device.load(MIXED)
    logs = {m.id: eventlog.read(mixed.log_dir / f"m{m.id}.log") for m in dev.modules}
    for mid, recs in logs.items():
        events = [r for r in recs if isinstance(r, eventlog.Event)]
        assert not [r for r in recs if isinstance(r, eventlog.Lost)], mid
        assert [r.time_us for r in events] == sorted(r.time_us for r in events), mid
        ends = [r for r in events if r.type == "END"]
        assert len(ends) > 20 and all(r.arg != eventlog.PORT_UNKNOWN for r in ends), mid
    # the ATmega128s' times are whole cycles of 125 ns
    assert all((r.time_us * 8).is_integer() for m in (2, 3, 4, 5) for r in logs[m]
               if isinstance(r, eventlog.Event))
    given = {t.name: t.module for t in app.tasks}
    prof = profile.from_logs(app, dev, [(given, logs)], 250.0, 0.0, DURATION_S,
                             profile.measured_text(dev, [given]))
    kind = {m.id: m.processor.name for m in dev.modules}
    for t in app.tasks:
        assert set(prof.tasks[t.name].cycles) == {kind[t.module]}, t.name
    periods = DURATION_S * 1e3 / 250.0
    for m in dev.modules:
        handlers_s = sum(c.messages * c.cycles[kind[m.id]] for c in prof.tasks.values()
                         if given[c.name] == m.id) * periods / (m.processor.mhz * 1e6)
        busy = mixed.module(m.id)["busy_s"]
        assert handlers_s <= busy, (m.id, handlers_s, busy)
        if m.id != COMPUTE:
            assert handlers_s > 0.5 * busy, (m.id, handlers_s, busy)


# How long the board program may take to answer (it reads a scenario first).
BOARD_ANSWER_S = 30


def read_within(proc, n):
    """n bytes of the board program's output, or the test fails (the
    program killed) if they do not come within BOARD_ANSWER_S."""
    deadline = time.monotonic() + BOARD_ANSWER_S
    data = b""
    while len(data) < n:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([proc.stdout], [], [], max(left, 0))
        if not ready:
            proc.kill()
            pytest.fail(f"ssl_board sent {len(data)} of {n} bytes in {BOARD_ANSWER_S} s: "
                        + proc.stderr.read().decode())
        chunk = os.read(proc.stdout.fileno(), n - len(data))
        if not chunk:
            pytest.fail(f"ssl_board ended after {len(data)} of {n} bytes: "
                        + proc.stderr.read().decode())
        data += chunk
    return data


def board(build_dir, *args):
    """ssl_board started with `args`, after its first frame: empty, it says
    that the program took its arguments (the harness waits for it)."""
    proc = subprocess.Popen([str(build_dir / "apps/ssl/ssl_board"), *map(str, args)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT, bufsize=0)
    assert read_within(proc, 2) == b"\0\0"
    return proc


def call(proc, request):
    proc.stdin.write(struct.pack("<H", len(request)) + request)
    proc.stdin.flush()
    n = struct.unpack("<H", read_within(proc, 2))[0]
    return read_within(proc, n)


def test_board_program_serves_a_modules_sensors(build_dir, scenario):
    """ssl_board answers the firmware's requests (apps/ssl/board_host.h):
    the module's sensors, a block of ADC codes, the temperature, nothing
    once the scenario is over; a malformed request ends it with a message."""
    build_device_programs(build_dir, MIXED)
    proc = board(build_dir, "--scenario", scenario, "--sensor", "microphone:2", "--sensor",
                 "temperature")
    assert call(proc, b"S") == bytes([0x04 | 0x10])
    block = call(proc, b"M" + struct.pack("<BIH", 2, 2_000_000, 512))
    assert len(block) == 1024
    codes = struct.unpack("<512h", block)
    assert all(-2048 <= c <= 2047 for c in codes) and len(set(codes)) > 100
    assert call(proc, b"M" + struct.pack("<BIH", 1, 2_000_000, 512)) == b""  # not its microphone
    assert len(call(proc, b"T" + struct.pack("<I", 1_000_000))) == 2
    assert call(proc, b"T" + struct.pack("<I", 9_000_000)) == b""  # after the scenario
    proc.stdin.write(struct.pack("<H", 3) + b"X??")
    proc.stdin.close()
    assert proc.wait(timeout=10) == 3
    assert "unknown request 'X' of 3 bytes" in proc.stderr.read().decode()


def test_board_program_refuses_another_array(build_dir, tmp_path):
    """The array is the emulated boards' hardware: a scenario with another
    one is refused, naming both (and `motet demo` says so before starting
    any module)."""
    build_device_programs(build_dir, MIXED)
    path = write_scenario(tmp_path / "wide.toml", seed=1, duration=2.0)
    path.write_text(path.read_text().replace("side = 0.2", "side = 0.3"))
    res = subprocess.run([str(build_dir / "apps/ssl/ssl_board"), "--scenario", str(path),
                          "--check"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2
    assert "microphone array is its hardware (side 0.20 m, 16000 Hz, 343 m/s)" in res.stderr
    assert "side 0.3 m" in res.stderr


def test_an_option_no_board_program_takes_is_refused_by_them(build_dir):
    """The options after `--` go to the board programs, as the device file's
    args do (`-- --scenario FILE`); ssl-mixed has no native module, so an
    option of the native programs reaches only ssl_board, which refuses it,
    and the run stops before the bus starts (README, motet run's row)."""
    build_device_programs(build_dir, MIXED)
    res = subprocess.run(motet_run_cmd(build_dir, MIXED, "--until", 0.2,
                                       extra=["--timesync-window", "4"]),
                         cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-3000:]
    assert "| ssl_board: unknown argument: --timesync-window\n" in res.stdout, res.stdout
    assert ("exited with status 123 before joining the bus: its board program refused the "
            "arguments it was given") in res.stdout + res.stderr
