# SPDX-License-Identifier: MIT
"""An emulated module whose emulator ends under the device (docs/bus.md,
"Emulated modules"): apps/stuck's task "halt" stops the chip 500 ticks
after it starts (port_halt(3)): the simavr harness exits with the
firmware's status; QEMU exits with it through semihosting, and
qemu_module.py, which never expects QEMU to end, says so and ends with
status 125. Either way the hub stops the run naming the module with its
last output, and stops the native module cleanly.
"""

import os
import subprocess
from pathlib import Path

import pytest

from device_run import build_device_programs, run_device

from motetlib import build, module_kinds, qemu_module  # noqa: E402 (device_run's path)

HERE = Path(__file__).parent
DEVICES = {"avr": HERE / "stuck-avr-device.toml", "cortex-m": HERE / "stuck-cm-device.toml"}
# The module's last words: its port's, then its emulator's.
LAST = {"avr": "halt 0x10: stopping the chip",
        "cortex-m": "qemu_module: error: QEMU exited with status 3 after tick"}
STATUS = {"avr": 3, "cortex-m": 125}  # the harness's: port_halt()'s; the adapter's


@pytest.fixture(scope="module")
def built(build_dir):
    for device in DEVICES.values():
        build_device_programs(build_dir, device)
    return build_dir


def halting(device, tmp_path):
    """The device with the description whose task stops module 1's chip."""
    text = device.read_text().replace('"stuck_spin"', '"stuck_halt"')
    assert "stuck_halt" in text
    path = tmp_path / device.name
    path.write_text(text)
    return path


@pytest.mark.parametrize("kind", sorted(DEVICES))
def test_the_run_stops_naming_the_module_with_its_last_output(built, tmp_path, kind):
    run = run_device(built, tmp_path, halting(DEVICES[kind], tmp_path), "--until", 1, status=1)
    said = [line for line in run.lines if line.startswith("m1| ") and "halt 0x10" in line]
    assert len(said) == 1, run.stdout[-3000:]
    notes = run.hub_notes("m1 (sense): its emulator")
    assert len(notes) == 1 and "the run stops; its last output:" in notes[0], run.stdout[-3000:]
    assert LAST[kind] in notes[0], notes
    assert "stopped: module ended" in run.stdout
    ended = run.report["module_ended"]
    assert (ended["module"], ended["name"], ended["status"]) == (1, "sense", STATUS[kind]), ended
    assert LAST[kind] in ended["last_output"][-1]
    assert run.report["reason"] == "module ended"
    assert run.module(1)["state"] == "exited" and run.module(1)["note"].startswith(
        "its emulator (")
    # The run ended where the module did, well before its limit, and the
    # native module was stopped cleanly: it printed its counters.
    assert run.report["end_s"] < 0.2
    assert run.module(0)["state"] == "running" and run.kernel(0) is not None
    assert "m0| bus: module 0 sent" in run.stdout
    # Device time is consistent at the stop: no module's time (busy,
    # asleep, off: its own cycles for the emulated one) passes the stop
    # time the hub reports, and the native one ran to it.
    for mid in ("0", "1"):
        m = run.report["modules"][mid]
        assert m["busy_s"] + m["sleep_s"] + m["off_s"] <= run.report["end_s"] + 1e-9, (mid, m)
    native = run.module(0)
    assert native["busy_s"] + native["sleep_s"] == pytest.approx(run.report["end_s"], abs=1e-9)


def plugin_after_resume(built, tmp_path, resume):
    """QEMU with the lock-step plugin, parked before the first instruction,
    given `resume` and then the resume pipe's end: (status, stderr)."""
    image = build.port_build_dir(built, "cortex-m") / "apps" / "stuck" / "stuck"
    entry = qemu_module.symbols(image, ("Reset_Handler",))["Reset_Handler"]
    park, fifo = tmp_path / "park", tmp_path / "resume"
    os.mkfifo(park)
    os.mkfifo(fifo)
    plugin = built / module_kinds.LOCKSTEP_PLUGIN
    qemu = subprocess.Popen(
        [qemu_module.QEMU, "-M", "mps2-an385", "-display", "none", "-monitor", "none",
         "-serial", "null", "-icount", "shift=0,align=off,sleep=off", "-accel", "tcg",
         "-plugin", f"{plugin},pcs={entry:#x},park={park},resume={fifo}", "-kernel", str(image)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with open(park, "rb") as parked:
            with open(fifo, "wb", buffering=0) as go:
                assert parked.readline() == b"PS 0\n"  # parked before the first instruction
                go.write(resume)
            _, err = qemu.communicate(timeout=30)
    finally:
        qemu.kill()
        qemu.wait()
    return qemu.returncode, err


def test_qemu_ends_on_a_resume_out_of_step_with_the_plugin(built, tmp_path):
    """The lock-step plugin reads each resume whole, "g" and the fence's
    count (tools/qemu-lockstep/lockstep_plugin.c); one that does not start
    with "g" means the adapter and the plugin are out of step, and a fence
    read from it could park the core anywhere or nowhere: QEMU ends with
    status 2 and says why, before the first instruction runs."""
    status, err = plugin_after_resume(built, tmp_path, b"G" + bytes(8))
    assert status == 2, err
    assert b"motet-lockstep: resume message does not start with 'g'" in err


def test_qemu_ends_on_a_resume_cut_short(built, tmp_path):
    """A resume that ends before its fence's eight bytes is no fence
    either: status 2 and why (it once read as the adapter gone, status 0).
    The adapter gone between two resumes ends QEMU with status 0."""
    status, err = plugin_after_resume(built, tmp_path, b"g" + bytes(3))
    assert status == 2, err
    assert b"motet-lockstep: resume message cut short" in err
    gone = tmp_path / "gone"
    gone.mkdir()
    status, err = plugin_after_resume(built, gone, b"")
    assert status == 0, err
