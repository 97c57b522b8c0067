# SPDX-License-Identifier: MIT
"""The ATmega128's own watchdog (docs/guide.md, "The AVR watchdog";
docs/simavr-harness.md, "The watchdog"): apps/stuck's AVR image arms it at
0.5 s (PORT_AVR_WATCHDOG=WDTO_500MS) and its task "spin" loops for ever
5000 ticks after it starts (160 ms of Timer1 at 8 MHz / 256). Alone in the harness the chip resets, reports the
reset at its next boot and hangs again; on a device the harness ends the
module at the reset and the hub stops the run naming it.

Every figure asserted comes from the chip: 160 ms to the spin after the
task starts, 2048 << 5 cycles of simavr's 128 kHz watchdog clock (0.512 s)
to the reset; the subprocess timeouts only guard a hang.
"""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT_S
from device_run import build_device_programs, run_until_chip_reset

from motetlib import build, module_kinds  # noqa: E402 (device_run's path)

DEVICE = Path(__file__).with_name("stuck-avr-device.toml")
F_CPU = 8_000_000
WATCHDOG_S = (2048 << 5) / 128_000  # WDTO_500MS as simavr 1.6 times it
SPIN_AFTER_S = 5000 * 256 / F_CPU  # the task's timer: 5000 ticks of Timer1


@pytest.fixture(scope="module")
def stuck_built(build_dir):
    """The native stuck program and the harness in the session's tree, the
    AVR image in the AVR port's tree beside it."""
    build_device_programs(build_dir, DEVICE)
    return build_dir


def test_alone_the_chip_resets_and_reports_it_at_boot(stuck_built, tmp_path):
    """Two rounds of boot, spin and reset, and the third boot: the chip
    says why it booted after each reset; the third spin is not reached."""
    image = build.port_build_dir(stuck_built, "avr") / "apps" / "stuck" / "stuck.elf"
    harness = build.build_dir(stuck_built) / module_kinds.HARNESS
    summary = tmp_path / "summary.json"
    cycles = round((2 * (SPIN_AFTER_S + WATCHDOG_S) + 0.1) * F_CPU)
    res = subprocess.run([str(harness), "--freq", str(F_CPU), "--max-cycles", str(cycles),
                          "--json", str(summary), str(image)],
                         capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    out = res.stdout + res.stderr
    assert res.returncode == 124, out[-3000:]  # still running at the cycle limit
    report = json.loads(summary.read_text())
    assert report["watchdog_resets"] == 2, out[-3000:]
    assert res.stdout.count("spin 0x10: looping") == 2, out[-3000:]
    assert res.stdout.count("avr: reset by the watchdog") == 2, out[-3000:]
    resets = [line for line in res.stderr.splitlines() if "the watchdog reset the core" in line]
    assert len(resets) == 2, out[-3000:]
    assert "| 2 watchdog resets, the last at cycle" in res.stderr


def test_on_a_device_the_hub_names_the_reset_module(stuck_built, tmp_path):
    out = run_until_chip_reset(stuck_built, DEVICE, 2, tmp_path)
    # No sooner than a watchdog period after the spin began, by the chip's
    # own cycles (the task started after the boot).
    at = [line for line in out.splitlines() if "the watchdog reset the core at cycle" in line]
    assert len(at) == 1, out[-3000:]
    cycle = int(at[0].split("at cycle ")[1].split()[0])
    assert cycle / F_CPU > SPIN_AFTER_S + WATCHDOG_S, at[0]

