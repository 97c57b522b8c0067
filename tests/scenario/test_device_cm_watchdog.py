# SPDX-License-Identifier: MIT
"""The mps2-an385's own watchdog on a Cortex-M3 module (docs/guide.md, "The
Cortex-M watchdog"; docs/bus.md, "Emulated modules"): apps/stuck's Cortex-M
image arms it at 100 ms (PORT_CM_WATCHDOG_MS=100) and its task "spin" loops
for ever 5000 ticks after it starts (0.5 s of the port's 100 us tick). On a
device qemu_module.py sees the core reset, reads the port's marker word,
ends the module, and the hub stops the run naming it.

Every figure asserted comes from the board: 0.5 s to the spin after the
task starts, then 100 ms of the 25 MHz watchdog clock to the reset; the
subprocess timeout only guards a hang.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT_S
from device_run import build_device_programs, run_until_chip_reset

from motetlib import build  # noqa: E402 (device_run's path)

DEVICE = Path(__file__).with_name("stuck-cm-device.toml")
TICK_HZ = 25_000_000  # the adapter's ticks: the board's timer clock
WATCHDOG_S = 0.100  # PORT_CM_WATCHDOG_MS (apps/stuck/CMakeLists.txt)
SPIN_AFTER_S = 5000 * 100e-6  # the task's timer: 5000 ticks of 100 us


@pytest.fixture(scope="module")
def stuck_built(build_dir):
    """The native stuck program, the hub's tools and the QEMU plugin in the
    session's tree, the Cortex-M image in the Cortex-M port's tree."""
    build_device_programs(build_dir, DEVICE)
    return build_dir


def test_alone_the_machine_resets_and_reports_it_at_boot(stuck_built):
    """Under QEMU alone (no adapter: the image loads its own "stuck" app),
    each round boots, sleeps 0.5 s (five timeouts: a sleeping core is not
    reset), spins, is reset, and the next boot says why."""
    image = build.port_build_dir(stuck_built, "cortex-m") / "apps" / "stuck" / "stuck"
    # timeout(1) guards a hang only (a round takes well under a second):
    # a machine that never prints must not block readline() for ever.
    qemu = subprocess.Popen(
        ["timeout", str(RUN_TIMEOUT_S), shutil.which("qemu-system-arm") or "qemu-system-arm", "-M", "mps2-an385", "-display",
         "none", "-monitor", "none", "-serial", "stdio", "-semihosting-config",
         "enable=on,target=native", "-icount", "shift=0,align=off,sleep=off", "-kernel",
         str(image)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = []
    try:
        while lines.count("cortex-m: reset by the watchdog") < 2:
            line = qemu.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
    finally:
        qemu.terminate()  # timeout(1) passes SIGTERM on to QEMU
        qemu.wait()
    assert lines[:4] == ["[    500.000 ms] spin 0x10: looping", "cortex-m: reset by the watchdog"] * 2, \
        lines[-20:]


def test_on_a_device_the_hub_names_the_reset_module(stuck_built, tmp_path):
    out = run_until_chip_reset(stuck_built, DEVICE, 3, tmp_path)
    # The spin began on the task's timer, and the reset came a watchdog
    # timeout later: the adapter last saw the module's time (its last fence,
    # at most a grant before the reset) no sooner than that, and within a
    # millisecond of it. The module's stamps count from port_init(), a few
    # microseconds into the counter's time: the spin's stamp is a lower bound.
    spin = [line for line in out.splitlines() if "m1| [" in line and "spin 0x10: looping" in line]
    spin_s = float(spin[0].split("[")[1].split("ms]")[0]) / 1000
    assert spin_s >= SPIN_AFTER_S, spin[0]
    at = [line for line in out.splitlines() if "the watchdog reset the machine after tick" in line]
    assert len(at) == 1, out[-3000:]
    reset_s = int(at[0].split("after tick ")[1].split()[0]) / TICK_HZ
    assert spin_s + WATCHDOG_S <= reset_s < spin_s + WATCHDOG_S + 0.001, (spin[0], at[0])
