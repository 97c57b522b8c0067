# SPDX-License-Identifier: MIT
"""The kinds of module a device file may name (`kind = ...` per module), and
what the hub and `motet run` need to know of each: which port builds its
program, how its process is started, how its clock counts, and whether it
can act between two grants.

- native: the native port's program as a process; its clock counts 1 us
  ticks of simulated time and moves only when the module asks (docs/bus.md).
- avr: the AVR port's image of the same program in the simavr harness
  (tools/simavr-harness, docs/simavr-harness.md "On a device"); its clock
  is the core's cycle counter, which runs on between grants: the hub grants
  it short horizons while it runs (Hub.catch_up) and leaves it alone while
  it sleeps until its next timer.
- cortex-m: the Cortex-M port's image under QEMU, driven by qemu_module.py
  with the plugin of tools/qemu-lockstep; its clock is the board's 25 MHz
  timer clock, which runs on between grants like the AVR's; the port shows
  the adapter its sleeps (ports/cortex-m/sleep.c), so that the hub leaves
  it alone while it sleeps until its next timer.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from . import build, device
from .elf_symbols import defined_symbols

NATIVE_TICK_HZ = 1_000_000  # the native port's simulated counter
HARNESS = Path("tools") / "simavr-harness" / "motet-simavr"  # in the native build
# The status of the harness and of qemu_module.py when the chip's watchdog
# reset it on a bus (tools/simavr-harness/harness.h, qemu_module.EXIT_WATCHDOG).
EXIT_WATCHDOG = 127
# A native module's program exits with this status when it refuses its
# arguments (module_main(), ports/native: an unknown sensor, application or
# option), and the harness when its board program refused its own, exiting
# with status 2 before it was ready (tools/simavr-harness/harness.h,
# EXIT_BOARD: a sensor it does not serve); any other early end has another
# status, and the harness's or the program's message says what it was.
EXIT_NATIVE_REFUSED = 2
EXIT_BOARD_REFUSED = 123
LOCKSTEP_PLUGIN = Path("tools") / "qemu-lockstep" / "motet-lockstep.so"  # in the native build
CORTEX_M_TICK_HZ = 25_000_000  # mps2-an385's timer and FPGA counter clock
AVR_NM = "avr-nm"
CM_NM = "arm-none-eabi-nm"
AVR_DATA = 0x800000  # where avr-gcc's ELF puts the data space


def image_symbols(nm, image, names) -> dict[str, tuple[int, int]]:
    """{name: (address, size)} of `names` in an image, by `nm -S`."""
    defined = defined_symbols(nm, image) or {}
    found = {n: defined[n] for n in names if n in defined}
    missing = [n for n in names if n not in found]
    if missing:
        raise device.DeviceError(f"{image}: no {', '.join(missing)} (built without the event "
                                 "log? MOTET_EVENT_LOG=1 is needed for --log-dir)")
    return found


@dataclasses.dataclass(frozen=True)
class Kind:
    """How one kind of module runs. `free_running`: its clock runs on after
    a grant while it computes (an emulated core), so it may act at any tick
    and must be granted no further than the bus's lookahead. `overshoot`:
    ticks a run may pass the tick granted (an instruction in progress)."""
    name: str
    port: str
    free_running: bool = False
    overshoot: int = 0
    emulator: str = ""  # what runs its image, for messages

    def overshoot_ticks(self, spec) -> int:
        """`overshoot` for the module `spec`, whose clock may set it."""
        return self.overshoot
    def tick_hz(self, spec) -> int:
        """Ticks per second of the module's clock (before its ppm)."""
        return NATIVE_TICK_HZ

    def program(self, bdir, spec) -> Path:
        """The module's program: as given if absolute, else in the build
        tree of the kind's port."""
        prog = Path(spec.program)
        return prog if prog.is_absolute() else build.port_build_dir(bdir, self.port) / prog

    def files(self, bdir, spec) -> list[Path]:
        """What must have been built for the module to run."""
        return [self.program(bdir, spec)]

    def build_targets(self, spec) -> dict[str, set[str]]:
        """CMake targets to build, by port."""
        prog = Path(spec.program)
        return {} if prog.is_absolute() else {self.port: {prog.name}}

    def argv(self, bdir, dev, spec, sock_path, seed, log_dir, extra) -> list[str]:
        raise NotImplementedError

    def reset_note(self, status) -> str | None:
        """What exit status `status` of the module's process says if it means
        that the chip reset itself (its watchdog), else None."""
        return None

    def lacks_the_bus(self, bdir, spec) -> str | None:
        """Why the module's built program cannot join a device's bus, or
        None if it can (or it cannot be told)."""
        return None

    def refused_arguments(self, spec, status) -> str | None:
        """Which of the module's programs refused what the device file or the
        options after `motet run ... --` gave it, if exit status `status` of
        the module's process before it joined the bus says so, else None."""
        return None

    def lacks_the_log(self, bdir, spec) -> str | None:
        """Why the module's built program writes no event log (its kernel
        built without MOTET_EVENT_LOG), or None if it writes one (or it
        cannot be told)."""
        return None

    def exit_meaning(self, status) -> str:
        """What exit status `status` of the module's process, ended by
        itself during a run, says (negative: killed by that signal)."""
        if status < 0:
            return f"killed by signal {-status}"
        return "its output above says why"


# What a native module program's exit status says when it ends by itself
# mid-run (port_halt()'s callers: kernel/src/task.c, thread_stack.c,
# debug_assert.c, ports/native); 0 is a stop it was asked for (--until).
NATIVE_EXITS = {
    1: "it could not go on (its message is above)",
    2: "its link to the hub or its log file failed, or a thread ended badly (its message "
       "is above)",
    3: "a thread overflowed its stack (the stack guard), or it lost the hub",
    4: "a debug assertion failed (its message is above)",
    5: "one of the kernel's own tasks (the application manager or the migrator) could not "
       "start, which halts the module: its console and event log say which and why",
}


class NativeKind(Kind):
    def refused_arguments(self, spec, status):
        return "its program" if status == EXIT_NATIVE_REFUSED else None

    def lacks_the_log(self, bdir, spec):
        program = self.program(bdir, spec)
        try:
            defined = defined_symbols("nm", program)
        except OSError:
            return None
        if defined is None or "log_ring" in defined:
            return None
        return f"its program {program} is built without the event log (MOTET_EVENT_LOG=0)"

    def exit_meaning(self, status):
        return NATIVE_EXITS.get(status) or super().exit_meaning(status)

    def argv(self, bdir, dev, spec, sock_path, seed, log_dir, extra):
        argv = [str(self.program(bdir, spec)), "--sim", "--seed", str(seed * 1000 + spec.id),
                "--bus", sock_path, "--module", str(spec.id), "--bus-frame-ns",
                str(spec.frame_ns), "--bus-byte-ns", str(spec.byte_ns), "--counter-start",
                str(spec.counter_start)]
        if log_dir:
            argv += ["--log", str(Path(log_dir) / f"m{spec.id}.log")]
        if spec.id == dev.loader:
            argv.append("--loader")
        for s in spec.sensors:
            argv += ["--sensor", s]
        if spec.handler_us or spec.task_us:  # programs with their own cost model take neither
            argv += ["--handler-us", str(round(spec.handler_us))]
            for name, us in spec.task_us:
                argv += ["--task-us", f"{name}={round(us)}"]
        return argv + list(spec.args) + list(extra)


class EmulatedKind(Kind):
    """A chip emulated by a host program of the native build (TOOL) that
    runs the image of the kind's port and joins it to the hub. The image
    has its program's descriptions built in, so the device's and the
    module's `args` (the native program's options) do not apply to it; an
    avr module's board program, if it has one, takes them."""

    TOOL: Path
    NM: str  # the kind's nm, which reads its images' symbols

    def lacks_the_bus(self, bdir, spec):
        # A kernel built without MOTET_BUS has no bus_active(): its
        # module_main() loads the description alone, and a description with
        # tasks on other modules fails there (MT_ERR_NO_MODULE) before the
        # image prints anything.
        # Unknown (no nm, an image nm cannot read) is no refusal: the run
        # says what is wrong with such an image itself.
        image = self.program(bdir, spec)
        try:
            defined = defined_symbols(self.NM, image)
        except OSError:
            return None
        if defined is None or "bus_active" in defined:
            return None
        return (f"its image {image} has no bus: its kernel is built without MOTET_BUS (a "
                f"port's default kernel), so the image can only run alone; build its "
                f"application's {self.port} kernel with MOTET_BUS=1 and link the image with it "
                "(docs/guide.md, \"As a module of a device\", shows the CMakeLists.txt)")

    def files(self, bdir, spec):
        return [build.build_dir(bdir) / self.TOOL, self.program(bdir, spec)]

    def build_targets(self, spec):
        targets = super().build_targets(spec)
        targets.setdefault(build.DEFAULT_PORT, set()).add(self.TOOL.name)
        return targets

    def launcher(self, bdir, spec) -> list[str]:
        """The command that runs the image, before the link options."""
        raise NotImplementedError

    def reset_note(self, status):
        # The launcher's EXIT_WATCHDOG: a rebooted module would have lost its
        # tasks and the bus has no way to give them back, so the harness and
        # qemu_module.py end there (docs/simavr-harness.md, docs/bus.md).
        if status == EXIT_WATCHDOG:
            return "was reset by its watchdog (a module does not rejoin the bus after a reset)"
        return None

    def argv(self, bdir, dev, spec, sock_path, seed, log_dir, extra):
        argv = self.launcher(bdir, spec) + ["--bus", sock_path, "--module", str(spec.id)]
        if spec.id == dev.loader:
            argv.append("--loader")
        if log_dir:
            argv += self.log_options(bdir, spec, Path(log_dir) / f"m{spec.id}.log")
        return argv + [str(self.program(bdir, spec))]

    def log_options(self, bdir, spec, path) -> list[str]:
        """The launcher's options that write the image's event log to `path`
        as the chip writes it, each record at its exact cycle."""
        raise NotImplementedError

    def lacks_the_log(self, bdir, spec):
        try:
            self.log_options(bdir, spec, Path("-"))
        except device.DeviceError as e:
            return str(e)
        except OSError as e:
            return f"{self.NM} cannot be run to find its log ({e.strerror})"
        return None


class AvrKind(EmulatedKind):
    """An ATmega128 image (NAME.elf) in the simavr harness; ticks are cycles."""

    TOOL = HARNESS
    NM = AVR_NM

    def tick_hz(self, spec):
        return round(spec.cpu_mhz * 1_000_000)

    def program(self, bdir, spec):
        prog = super().program(bdir, spec)
        return prog if prog.suffix == ".elf" else prog.with_name(prog.name + ".elf")

    def launcher(self, bdir, spec):
        return [str(build.build_dir(bdir) / HARNESS), "--quiet", "--freq", str(self.tick_hz(spec))]

    def log_options(self, bdir, spec, path):
        # the harness watches the ring's write offset (tools/simavr-harness/logtap.c)
        sym = image_symbols(self.NM, self.program(bdir, spec), ("log_ring", "log_write_offset"))
        (ring, ring_bytes), (offset, _) = sym["log_ring"], sym["log_write_offset"]
        return ["--log", str(path),
                f"--log-ring={ring - AVR_DATA:#x}:{ring_bytes}:{offset - AVR_DATA:#x}"]

    # The board program, which serves the module's sensors (its board
    # interface, ports/avr/avr_board_if.h), is a native program of the build.
    def board(self, bdir, spec):
        prog = Path(spec.board)
        return prog if prog.is_absolute() else build.build_dir(bdir) / prog

    def files(self, bdir, spec):
        return super().files(bdir, spec) + ([self.board(bdir, spec)] if spec.board else [])

    def refused_arguments(self, spec, status):
        # Only the board program is given what the device file says.
        return "its board program" if spec.board and status == EXIT_BOARD_REFUSED else None

    def build_targets(self, spec):
        targets = super().build_targets(spec)
        if spec.board and not Path(spec.board).is_absolute():
            targets.setdefault(build.DEFAULT_PORT, set()).add(Path(spec.board).name)
        return targets

    def argv(self, bdir, dev, spec, sock_path, seed, log_dir, extra):
        argv = super().argv(bdir, dev, spec, sock_path, seed, log_dir, extra)
        if not spec.board:
            return argv
        board = ["--board", str(self.board(bdir, spec))]
        for arg in [*spec.args, *(a for s in spec.sensors for a in ("--sensor", s)), *extra]:
            board.append(f"--board-arg={arg}")
        return argv[:-1] + board + argv[-1:]



class CortexMKind(EmulatedKind):
    """A Cortex-M3 image under QEMU, lock-stepped by qemu_module.py with
    the plugin of tools/qemu-lockstep; ticks of the board's 25 MHz timer
    clock."""

    TOOL = LOCKSTEP_PLUGIN
    NM = CM_NM

    def tick_hz(self, spec):
        return CORTEX_M_TICK_HZ

    def launcher(self, bdir, spec):
        return [sys.executable, str(Path(__file__).with_name("qemu_module.py")), "--plugin",
                str(build.build_dir(bdir) / LOCKSTEP_PLUGIN),
                "--icount-shift", str(device.icount_shift(spec.cpu_mhz))]

    def log_options(self, bdir, spec, path):
        # the plugin watches the ring's slots (qemu_module.LogTap)
        ring, ring_bytes = image_symbols(self.NM, self.program(bdir, spec),
                                         ("log_ring",))["log_ring"]
        return ["--log", str(path), f"--log-ring={ring:#x}:{ring_bytes}"]

    def overshoot_ticks(self, spec):
        # The fence parks at the first instruction boundary past the tick
        # before the grant's (qemu_module.GuestTime.fence()): an
        # instruction begun there ends in the grant's tick if it takes no
        # longer than a tick (40 ns, shift <= 5); a longer one (2^n ns at
        # shift n) may end as many ticks later as it spans, less one. A
        # core asleep past the grant wakes at its tick.
        insn_ns = 1 << device.icount_shift(spec.cpu_mhz)
        return -(-insn_ns // (1_000_000_000 // CORTEX_M_TICK_HZ)) - 1


KINDS = {
    "native": NativeKind("native", build.DEFAULT_PORT),
    # A fence parks within the grant's tick (CortexMKind.overshoot_ticks()).
    "cortex-m": CortexMKind("cortex-m", "cortex-m", free_running=True, emulator="QEMU"),
    # The longest ATmega128 instruction (CALL, RET, RETI) takes 4 cycles.
    "avr": AvrKind("avr", "avr", free_running=True, overshoot=4, emulator="simavr harness"),
}


def of(spec) -> Kind:
    """The kind of module `spec` (a device.Module); KeyError if it cannot run."""
    return KINDS[spec.kind]
