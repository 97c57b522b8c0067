# SPDX-License-Identifier: MIT
"""A Cortex-M3 module of a device: the Cortex-M port's image under QEMU
(mps2-an385, `-icount`), lock-stepped with the hub (docs/bus.md,
"Emulated modules"). `motet run` starts this for each module of
`kind = "cortex-m"`; it speaks the native modules' link protocol to the
hub, with ticks of the board's 25 MHz timer clock (40 ns), and drives QEMU
through qtest and the TCG plugin tools/qemu-lockstep (motet-lockstep.so):

- Time: the guest's virtual time at each park, exact in instructions
  (GuestTime): the plugin's count of the instructions executed times
  2^shift ns, plus the time slept, read where the plugin parks right
  after each WFI; in ticks of the board's 25 MHz timers (40 ns). Not
  QEMU's clock as qtest reads it elsewhere: that lags the park by what
  ran since QEMU last brought it up to date (up to 17 us at a doorbell),
  and frames stamped with it went out early.
- Fence: the hub's grant becomes the plugin's fence, a count of guest
  instructions: it parks the CPU before the first instruction that would
  begin past the grant's tick (GuestTime.fence()), masked interrupts or
  not. A core that sleeps past the grant runs no instructions: before its
  WFI (at each resume from port_cm_lockstep_idle() to the WFI's park: a
  fence may park it in between) the adapter arms a one-shot of the dual
  timer's second counter at the grant, from QEMU's clock (the one the
  timer counts on), which wakes it there; the plugin parks right after
  the WFI, at the tick, and the timer is stopped before its interrupt is
  taken. Parked, virtual time stands still while qtest reads and writes
  the guest. An event the hub gives (a frame received, the end of the
  frame sent) is due at a tick: the adapter fences there first, then
  presents it.
- Bus interface: the mailbox port_cm_bus_if and the doorbell
  port_cm_bus_doorbell() of ports/cortex-m/bus.c (keep the layout below in
  step with it); events on spare line 16, one at a time.

- Reset: the plugin also parks at Reset_Handler. The first time is the
  boot; a second means the machine reset, which a module on a bus does not
  survive (its tasks are gone and the bus cannot give them back). The
  adapter reads the port's marker word (ports/cortex-m/watchdog.c) to tell
  a watchdog reset, says so on stderr and ends with EXIT_WATCHDOG, which the
  hub maps (module_kinds.EmulatedKind.reset_note()).
- End: QEMU never ends by itself on a device. If it does (it crashed, was
  killed, or the guest stopped it, port_halt()'s semihosting exit), the
  adapter says how on stderr and ends with EXIT_QEMU_ENDED; the hub stops
  the run naming the module with that last line (Hub.emulator_ended()).

- Sleep: before each WFI the port writes when it sleeps and when its next
  timer interrupts into port_cm_idle and calls port_cm_lockstep_idle(),
  where the plugin parks too (ports/cortex-m/sleep.c). A core asleep past
  its grant, no interrupt pending, is reported asleep with that wake-up as
  its want, so the hub leaves it alone until then or an event for it (one
  pending ends its WFI at once: it is awake); woken before the fence
  (an interrupt), it is awake from there on, wherever a fence parks it
  next. Each request for time carries the clocks it has slept, the
  port's own measure (a sleep that ended at the grant's fence, right
  after its WFI, the port counts only as it runs on: until then, its
  ticks from the park before the WFI).
- Power off: a grant past the wake-up a sleeping core asked for means the
  hub powered it off meanwhile. Its timers' interrupt lines are masked for
  that grant, so QEMU's WFI jumps straight to the grant's fence without
  running anything; unmasked at the fence, what fell due meanwhile is taken
  late, at once (docs/bus.md, "The bus model").

- Event log (`--log FILE`): the plugin's log tap announces each slot of
  the kernel's event-log ring as the kernel begins it, with the guest
  instructions executed by then; parked, the adapter reads the slot's
  fields and writes them to FILE as `SLOT` lines (eventlog.py) timed as
  the parks are (LogTap). The chip runs exactly what it runs without it.

    qemu_module.py --bus SOCKET --module N [--loader] --plugin SO [--icount-shift N]
                   [--log FILE --log-ring ADDR:BYTES] IMAGE
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

try:
    from .elf_symbols import defined_symbols
except ImportError:  # run as a script beside it (module_kinds.py starts it so)
    from elf_symbols import defined_symbols  # type: ignore[no-redef]

LINK_VERSION = 3
KERNEL_RETRIES = 8  # MOTET_BUS_RETRIES of the kernels this runs (config.h)
QEMU = "qemu-system-arm"
NM = "arm-none-eabi-nm"
FPGA_COUNTER = 0x40028018  # mps2 FPGA I/O: 25 MHz up-counter
TICK_HZ = 25_000_000
DUAL2 = 0x40002020  # the dual timer's second counter: load, value, ctrl, intclr
DUAL_ONESHOT_IE_EN = 0xA3  # ctrl: one-shot, 32-bit, interrupt on, enabled
DUAL_MAX_LOAD = 0xFFFFFFFF  # the counter is 32-bit: 171.8 s of 40 ns ticks
BUS_IRQ = 16  # PORT_CM_BUS_IRQ
EV_RX, EV_TX_DONE, EV_PROBE = 1, 2, 3
CMD_NONE, CMD_SEND, CMD_RX_DONE, CMD_EVENT_DONE, CMD_READY, CMD_JOIN, CMD_PROBE = range(7)
FLAG_LINKED, FLAG_LOADER = 1, 2
# cm_bus_if_t: u32 module, modules, flags, event, result, rx_len, cmd, arg,
# tx_addr, tx_len, local, global, then the receive frame.
OFF = {name: 4 * i for i, name in enumerate(
    ("module", "modules", "flags", "event", "result", "rx_len", "cmd", "arg", "tx_addr",
     "tx_len", "local", "global", "rx_frame"))}
PARK_DOORBELL, PARK_RESET, PARK_IDLE = "0", "1", "2"  # pcs= on the plugin's line
PARK_WOKE = "W"  # right after a WFI
PARK_FENCE = "F"  # at the fence's count
NO_FENCE = (1 << 64) - 1
PARKS = ("port_cm_bus_doorbell", "Reset_Handler", "port_cm_lockstep_idle")
# cm_idle_t (ports/cortex-m/sleep.c): u64 slept, now, wake, in the port's clocks.
IDLE_SLEPT, IDLE_SIZE = 0, 24
NVIC_ISER, NVIC_ICER, NVIC_ISPR, NVIC_ICPR = 0xE000E100, 0xE000E180, 0xE000E200, 0xE000E280
TIMER_LINES = 1 << 8 | 1 << 9  # TIMER0 (the compare), TIMER1 (the epoch)
DUAL_LINE = 1 << 10  # the dual timer's: the port's alarm (its first counter) and the fence's
DUAL1_CTRL = 0x40002008  # the alarm's counter
DUAL1_MIS = 0x40002014
DUAL_IE = 1 << 5
WATCHDOG_ARMED = 0x57444F47  # CM_WATCHDOG_ARMED (ports/cortex-m/port_cm_internal.h)
EXIT_WATCHDOG = 127  # module_kinds.EXIT_WATCHDOG
EXIT_RESET = 126  # the machine reset for another reason
EXIT_QEMU_ENDED = 125  # QEMU ended before the hub said QUIT
# Where the core is in its sleep (Module.sleep). On its way to a WFI it
# gets the fence's timer at each resume (go()); on its way or woken at the
# fence by that timer it is asleep while no interrupt is pending (asleep()).
AWAKE = "awake"  # it runs, or runs on at the next resume
TO_WFI = "to its WFI"  # from port_cm_lockstep_idle() to the park right after its WFI
WOKEN_AT_FENCE = "woken at the fence"  # right after its WFI, by the fence's timer


class Qtest:
    """QEMU's qtest socket: one command, one answer."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        # Answers are read buffered: unbuffered, readline() takes a
        # system call a byte.
        self.answers = self.sock.makefile("rb")

    def cmd(self, line):
        try:
            self.sock.sendall(line.encode() + b"\n")
            return self._answer(line)
        except OSError as e:  # the socket reset under a write or a read
            raise EmulatorEnded() from e

    def _answer(self, line):
        while True:
            answer = self.answers.readline().decode().strip()
            if not answer:
                raise EmulatorEnded()
            if not answer.startswith("IRQ"):
                if not answer.startswith("OK"):
                    raise RuntimeError(f"qtest {line!r}: {answer}")
                return answer

    def readl(self, addr):
        return int(self.cmd(f"readl {addr:#x}").split()[1], 16)

    def writel(self, addr, value):
        self.cmd(f"writel {addr:#x} {value:#x}")

    def read(self, addr, n):
        if n == 0:
            return b""
        return bytes.fromhex(self.cmd(f"read {addr:#x} {n:#x}").split()[1][2:])

    def write(self, addr, data):
        if data:
            self.cmd(f"write {addr:#x} {len(data):#x} 0x{data.hex()}")

    def pulse_irq(self, line):
        for level in (1, 0):
            self.cmd(f"set_irq_in /machine/armv7m unnamed-gpio-in {line} {level}")


class Hub:
    """The link to the hub (docs/bus.md, "Time-grant protocol")."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)

    def send(self, mtype, tick, body=b""):
        self.sock.sendall(struct.pack("<IBQ", 9 + len(body), ord(mtype), tick) + body)

    def _exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError("the hub went away")
            data += chunk
        return data

    def recv(self):
        length, mtype = struct.unpack("<IB", self._exact(5))
        return chr(mtype), self._exact(length - 1)


def die_with_parent():
    """In QEMU's process before it starts: it dies with the adapter, however
    the adapter ends (the hub's kill fault sends SIGKILL), rather than wait
    for ever on the plugin's pipes."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def symbols(elf, names):
    """{name: address} of `names` in the image `elf`; exits naming those
    it lacks."""
    defined = defined_symbols(NM, elf)
    if defined is None:
        raise SystemExit(f"qemu_module: {NM} cannot read {elf}")
    missing = [n for n in names if n not in defined]
    if missing:
        raise SystemExit(f"qemu_module: {elf} lacks {', '.join(missing)} (not a bus image?)")
    return {n: defined[n][0] for n in names}


SLOT_BYTES = 8  # the port's log slot: a 32-bit stamp, type, pid, 16-bit argument
FPGA_TICK_NS = 1_000_000_000 // TICK_HZ


class GuestTime:
    """The guest's virtual time at a park, exact in instructions: under
    -icount, the instructions executed (the plugin's count) times 2^shift
    ns, plus the time the guest slept (a WFI, where virtual time jumps to
    the next timer event) before them.

    The sleeps are read where the plugin parks right after each WFI:
    QEMU's clock (the 25 MHz counter, 40 ns) less the instructions' time
    is the time slept so far. Only there: QEMU brings its clock up to the
    instructions run when the core halts, or when the guest itself reads a
    clock; elsewhere (a fence, a doorbell) it may lag the park by what ran
    since, up to microseconds. The sleeps' total only grows (a WFI that did
    not sleep reads no more than before): time is exact in instructions
    between two sleeps, each sleep's end to the counter's 40 ns."""

    def __init__(self, shift):
        self.insn_ns = 1 << shift
        self.count = 0  # the instructions executed before the last park
        self.slept_ns = 0  # the sleeps before them

    def ns(self, count):
        """Virtual time after `count` instructions, since the last sleep."""
        return count * self.insn_ns + self.slept_ns

    def woke(self, qemu_ns):
        """At the park right after a WFI: QEMU's clock there, up to date."""
        self.slept_ns = max(self.slept_ns, qemu_ns - self.count * self.insn_ns)

    def tick(self):
        """The park's time in 40 ns ticks, rounded up: a frame handed over
        there is never stamped before the instruction that handed it."""
        return -(-self.ns(self.count) // FPGA_TICK_NS)

    def fence(self, tick):
        """The count of instructions at which the plugin parks for `tick`:
        the first instruction boundary inside it (past the tick before),
        whose time tick() rounds up to `tick` when an instruction takes no
        longer than a tick (shift <= 5), and to the tick in which the
        instruction running across its start ends otherwise. Not the
        boundary at or past the tick's start: the instruction before it
        may end inside the next tick (shift 4: 16 ns an instruction)."""
        return ((tick - 1) * FPGA_TICK_NS - self.slept_ns) // self.insn_ns + 1


class LogTap:
    """The kernel's event log as the plugin saw it written (module
    docstring), each slot announced with the guest instructions executed
    before its first store: a record's time is the guest's virtual time at
    that store (GuestTime), never another park's reading of QEMU's clock
    (timed from one that lagged, a record after the park came out before
    the one written ahead of it)."""

    def __init__(self, path, ring, ring_bytes, time):
        self.out = open(path, "w", encoding="utf-8")
        self.ring, self.entries, self.time = ring, ring_bytes // SLOT_BYTES, time
        self.out.write(f"# motet event log, port cortex-m, taken by qemu_module.py at one "
                       f"instruction per {time.insn_ns} ns as written\n")

    def park(self, qt, tapped, lost, booting=False):
        """At a park, before `time` takes a sleep it ended: the slots
        announced since the last one, [(count, slot)]. `booting`: the first
        interval after the reset, where the start-up code clears the ring
        (its stores to the slots are no records)."""
        if lost:
            self.out.write(f"LOST {lost}\n")
        latest = {}  # slot -> the last announcement of it: an earlier one was overwritten
        for i, (_, slot) in enumerate(tapped):
            latest[slot] = i
        for i, (c, slot) in enumerate(tapped):
            if latest[slot] != i:
                if not booting:
                    self.out.write("LOST 1\n")
                continue
            _, etype, pid, arg = struct.unpack("<IBBH", qt.read(self.ring + slot * SLOT_BYTES,
                                                                SLOT_BYTES))
            if etype:
                self.out.write(f"SLOT {self.time.ns(c)} {etype} {pid} {arg}\n")

    def close(self):
        self.out.close()


class Module:
    def __init__(self, args, workdir):
        sym = symbols(args.image, ("port_cm_bus_if", "port_cm_watchdog_marker", "port_cm_idle")
                      + PARKS)
        self.mbox = sym["port_cm_bus_if"]
        self.marker = sym["port_cm_watchdog_marker"]
        self.idle = sym["port_cm_idle"]
        self.booted = False
        park, resume, qsock = (os.path.join(workdir, n) for n in ("park", "resume", "qtest"))
        os.mkfifo(park)
        os.mkfifo(resume)
        pcs = ":".join(f"{sym[n]:#x}" for n in PARKS)
        self.time = GuestTime(args.icount_shift)
        self.log = None
        tap = ""
        if args.log:
            ring, _, ring_bytes = args.log_ring.partition(":")
            ring, ring_bytes = int(ring, 0), int(ring_bytes, 0)
            self.log = LogTap(args.log, ring, ring_bytes, self.time)
            tap = f",log={ring:#x}:{ring_bytes}:{SLOT_BYTES}"
        self.tapped, self.tap_lost = [], 0
        self.parks_since_boot = 0
        sys.stdout.flush()
        self.qemu = subprocess.Popen(
            [shutil.which(QEMU) or QEMU, "-M", "mps2-an385", "-display", "none", "-monitor", "none",
             "-serial", "stdio", "-semihosting-config", "enable=on,target=native",
             "-icount", f"shift={args.icount_shift},align=off,sleep=off", "-accel", "tcg",
             "-qtest", f"unix:{qsock},server=on,wait=off", "-qtest-log", "/dev/null",
             "-plugin", f"{args.plugin},pcs={pcs},park={park},resume={resume}{tap}",
             "-kernel", str(args.image)], stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        self.park = open(park, "rb")  # the plugin opens its ends in this order
        self.resume = open(resume, "wb", buffering=0)
        for _ in range(500):
            try:
                self.qt = Qtest(qsock)
                break
            except OSError:
                time.sleep(0.01)
        else:
            raise SystemExit("qemu_module: QEMU's qtest socket did not appear")
        self.high = 0
        self.low = 0
        self.now = 0
        self.target = None  # the fence: the tick the CPU runs to
        self.wake_armed = False  # the fence's timer (wake_at_fence())
        self.sleep = AWAKE  # AWAKE, TO_WFI or WOKEN_AT_FENCE
        self.events = []  # (due, kind, result, frame), in the order due
        self.arrived = []
        self.presenting = None  # the event the guest is handling
        self.ready = False
        self.identity = {}  # module, modules, flags: written at JOIN
        self.idle_wake = 0  # the tick its timers wake it at, from its last sleep
        self.slept_known = False  # port_cm_idle is set up (its first sleep)
        self.sleep_began = 0  # the tick of the last port_cm_lockstep_idle()
        self.uncounted = None  # (the port's count, the ticks of a sleep it has not counted)
        self.asked = None  # the want of the last request for time, if asleep

    # ---- the guest ----

    def wait_park(self):
        while True:
            line = self.park.readline()
            if not line:
                raise EmulatorEnded()
            fields = line.decode().split()
            if fields[0] == "L":  # the log tap: a slot begun (LogTap)
                self.tapped.append((int(fields[1]), int(fields[2])))
            elif fields[0] == "LOST":
                self.tap_lost += int(fields[1])
            else:
                break
        what = fields[0][1:]
        if what != PARK_RESET or not self.booted:  # a reset restarts the counter
            self.time.count = int(fields[1])
            if self.log:
                self.log.park(self.qt, self.tapped, self.tap_lost,
                              booting=self.parks_since_boot == 0)
                self.tapped, self.tap_lost = [], 0
            if what == PARK_WOKE:
                self.time.woke(self.qemu_clock() * FPGA_TICK_NS)
            self.now = self.time.tick()
            self.parks_since_boot += self.booted
        return what

    def go(self):
        """Let the CPU go on, to the fence at `self.target` if any. A core
        on its way to a WFI gets the fence's timer as well, at every grant
        until it wakes: the count cannot stop a sleep, and a fence may
        park it before the WFI (at port_cm_lockstep_idle() already, or in
        the few instructions after), so the next grant's WFI needs it."""
        if self.sleep == TO_WFI and self.target is not None:
            self.wake_at_fence()
        fence = NO_FENCE if self.target is None else self.time.fence(self.target)
        self.resume.write(b"g" + struct.pack("<Q", fence))

    def qemu_clock(self):
        """QEMU's virtual clock in 40 ns ticks (the 32-bit counter, with its
        wraps): up to date only right after a WFI (GuestTime)."""
        low = self.qt.readl(FPGA_COUNTER)
        if low < self.low:
            self.high += 1
        self.low = low
        return self.high << 32 | low

    def wake_at_fence(self):
        """Before a WFI: the dual timer's second counter falls due at the
        fence, so that a core asleep past it wakes there. The timer counts
        from QEMU's clock, however it lags the park, and QEMU brings the
        clock up to date before the timer falls due: the WFI ends at the
        fence's tick exactly. (At the fence already, it parks at the
        next instruction. A fence past the counter's reach, 171.8 s, wakes
        the core that much early: awake, it goes back to sleep, and the
        next WFI is armed again.)"""
        if self.now < self.target:
            self.qt.writel(DUAL2, min(DUAL_MAX_LOAD, max(1, self.target - self.qemu_clock())))
            self.qt.writel(DUAL2 + 8, DUAL_ONESHOT_IE_EN)
            self.wake_armed = True

    def stop_wake(self):
        """Right after a WFI, or at the fence: the fence's timer stopped,
        and its interrupt, if it came, taken back unless the port's alarm
        (the line's other counter) raises the line too. Awake, the
        plugin's count fences."""
        if not self.wake_armed:
            return
        self.wake_armed = False
        self.qt.writel(DUAL2 + 8, 0)
        self.qt.writel(DUAL2 + 12, 1)
        if not self.qt.readl(DUAL1_MIS):
            self.qt.writel(NVIC_ICPR, DUAL_LINE)

    def mbox_word(self, name):
        return self.qt.readl(self.mbox + OFF[name])

    # ---- events ----

    def arrive(self, hub):
        while self.events and self.events[0][0] <= self.now:
            due, kind, result, frame = self.events.pop(0)
            hub.send("D", self.now, struct.pack("<QB", due, kind))
            self.arrived.append((kind, result, frame))
        self.present()

    def present(self):
        if self.presenting is not None or not self.ready or not self.arrived:
            return
        kind, result, frame = event = self.arrived.pop(0)
        if kind == EV_RX:
            self.qt.write(self.mbox + OFF["rx_frame"], frame)
            self.qt.writel(self.mbox + OFF["rx_len"], len(frame))
        elif kind == EV_TX_DONE:
            self.qt.writel(self.mbox + OFF["result"], result)
        self.qt.writel(self.mbox + OFF["event"], kind)
        self.presenting = event
        if self.sleep == WOKEN_AT_FENCE:  # the line wakes it as it runs on
            self.sleep = AWAKE
        self.qt.pulse_irq(BUS_IRQ)

    def doorbell(self, hub):
        self.sleep = AWAKE  # it runs
        cmd = self.mbox_word("cmd")
        if cmd == CMD_SEND:
            addr, n = self.mbox_word("tx_addr"), self.mbox_word("tx_len")
            hub.send("T", self.now, self.qt.read(addr, n))
        elif cmd == CMD_JOIN:
            for name, value in self.identity.items():
                self.qt.writel(self.mbox + OFF[name], value)
        elif cmd == CMD_READY:
            self.ready = True
        elif cmd in (CMD_RX_DONE, CMD_EVENT_DONE, CMD_PROBE) and self.presenting:
            if cmd == CMD_RX_DONE:
                hub.send("R", self.now, bytes([self.mbox_word("arg") & 0xFF]))
            elif cmd == CMD_PROBE:  # the probe's id came as its result
                hub.send("P", self.now, struct.pack(
                    "<IIIB", self.presenting[1], self.mbox_word("local"), self.mbox_word("global"),
                    self.mbox_word("arg") & 1))
            self.qt.writel(self.mbox + OFF["event"], 0)
            self.presenting = None
        self.present()

    def take_event(self, body):
        due, kind = struct.unpack_from("<QB", body)
        result = (body[9] if kind == EV_TX_DONE else
                  struct.unpack_from("<I", body, 9)[0] if kind == EV_PROBE else 0)
        frame = body[13:] if kind == EV_RX else b""
        self.events.append((due, kind, result, frame))

    def run_to(self, until, hub):
        """Run the guest to tick `until`, fencing first at each event due."""
        while True:
            self.arrive(hub)
            target = min(until, self.events[0][0]) if self.events else until
            if self.now >= until:
                self.target = None
                return
            self.target = target
            self.go()
            while True:
                what = self.wait_park()
                if what == PARK_FENCE:
                    self.stop_wake()
                    break
                if what == PARK_RESET:
                    self.reset()
                elif what == PARK_WOKE:
                    self.sleep_ended()
                    self.stop_wake()
                    if self.now >= target:  # woken by the fence's timer
                        self.sleep = WOKEN_AT_FENCE
                        break
                    # Woken before the fence (an interrupt): it runs on,
                    # and a fence that parks it before its next sleep
                    # finds it awake (asleep() would keep a frame it is
                    # taking from being granted the time to answer it).
                    self.sleep = AWAKE
                elif what == PARK_IDLE:
                    self.going_to_sleep()
                else:
                    self.doorbell(hub)
                self.go()

    def going_to_sleep(self):
        """At port_cm_lockstep_idle(): the tick its timers wake it at, from
        the port's clocks then (the adapter's and the port's clocks differ
        by a constant and tick together; a tick early, so that the hub's
        grant to it never lands past the interrupt)."""
        _, now, wake = struct.unpack("<3Q", self.qt.read(self.idle, IDLE_SIZE))
        self.slept_known = True
        self.idle_wake = self.now + max(0, wake - now - 1)
        self.sleep_began = self.now
        self.sleep = TO_WFI

    def asleep(self):
        """Whether the core sleeps at this fence with no timer due yet and
        no interrupt pending: on its way to a WFI, a frame presented (as it
        went back to sleep with interrupts masked) shows only as its line
        pending, which ends the WFI at once."""
        if self.sleep == AWAKE or self.idle_wake <= self.now:
            return False
        return not self.qt.readl(NVIC_ISPR) & self.qt.readl(NVIC_ISER)

    def slept(self):
        """The clocks the port has slept, and the sleep that ended at the
        last WFI while the port has not counted it yet (it does so after
        its WFI, and a fence may park the core before: right after it)."""
        if not self.slept_known:
            return 0
        counted = struct.unpack("<Q", self.qt.read(self.idle + IDLE_SLEPT, 8))[0]
        if self.uncounted is None or self.uncounted[0] != counted:
            self.uncounted = None
            return counted
        return counted + self.uncounted[1]

    def sleep_ended(self):
        """Right after a WFI: the sleep's ticks since port_cm_lockstep_idle()
        until the port counts it (slept()): the port's own count of it,
        from its clock's reading before that call to one after the WFI, is
        never less."""
        if self.slept_known:
            self.uncounted = None
            self.uncounted = (self.slept(), self.now - self.sleep_began)

    def ask(self, hub):
        """ADVANCE: asleep, the tick its timers wake it at; the clocks slept."""
        self.asked = self.idle_wake if self.asleep() else None
        want = self.now + 1 if self.asked is None else self.asked
        hub.send("A", self.now, struct.pack("<QBQ", want, self.asked is not None, self.slept()))

    def grant(self, until, hub):
        """Run to the hub's grant; one past the wake-up asked for means the
        module was powered off meanwhile: its timers are held off until the
        grant (module docstring)."""
        if self.asked is None or until <= self.asked:
            self.run_to(until, hub)
            return
        enabled = self.qt.readl(NVIC_ISER) & TIMER_LINES
        dual = self.qt.readl(DUAL1_CTRL)
        self.qt.writel(NVIC_ICER, TIMER_LINES)
        self.qt.writel(DUAL1_CTRL, dual & ~DUAL_IE)
        self.run_to(until, hub)
        self.qt.writel(DUAL1_CTRL, self.qt.readl(DUAL1_CTRL) | (dual & DUAL_IE))
        self.qt.writel(NVIC_ISER, enabled)

    def reset(self):
        """At Reset_Handler: the boot, or the end of the module."""
        if not self.booted:
            self.booted = True
            return
        by_watchdog = self.qt.readl(self.marker) == WATCHDOG_ARMED
        print(f"qemu_module: error: the {'watchdog' if by_watchdog else 'core'} reset the machine"
              f" after tick {self.now} ({self.now / TICK_HZ:.6f} s); a module does not rejoin the"
              " bus after a reset", file=sys.stderr, flush=True)
        raise ModuleReset(EXIT_WATCHDOG if by_watchdog else EXIT_RESET)


class EmulatorEnded(Exception):
    """QEMU went away under the adapter (it crashed, was killed, or the
    guest stopped it: port_halt()'s semihosting exit)."""


class ModuleReset(Exception):
    """The machine reset: the adapter ends with `status`."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


def main(argv=None):
    p = argparse.ArgumentParser(prog="qemu_module.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--bus", required=True)
    p.add_argument("--module", type=int, required=True)
    p.add_argument("--loader", action="store_true")
    p.add_argument("--plugin", required=True)
    p.add_argument("--icount-shift", type=int, default=0,
                   help="one instruction per 2^N ns of virtual time (the core's clock)")
    p.add_argument("--log", metavar="FILE",
                   help="write the kernel's event log there as the guest writes it (LogTap)")
    p.add_argument("--log-ring", metavar="ADDR:BYTES",
                   help="with --log: the image's log_ring, its address and size")
    p.add_argument("image")
    args = p.parse_args(argv)
    if bool(args.log) != bool(args.log_ring):
        p.error("--log and --log-ring go together")
    with tempfile.TemporaryDirectory(prefix="motet-qemu-") as work:
        m = Module(args, work)
        status = 0
        try:
            hub = Hub(args.bus)
            hub.send("H", 0, struct.pack("<BIB", args.module, LINK_VERSION, KERNEL_RETRIES))
            mtype, body = hub.recv()
            if mtype != "W":
                raise SystemExit("qemu_module: no welcome from the hub")
            m.wait_park()  # before the first instruction
            m.identity = {"module": args.module, "modules": struct.unpack("<I", body)[0],
                          "flags": FLAG_LINKED | (FLAG_LOADER if args.loader else 0)}
            while True:
                sys.stdout.flush()
                m.ask(hub)
                while True:
                    mtype, body = hub.recv()
                    if mtype == "E":
                        m.take_event(body)
                    elif mtype == "G":
                        m.grant(struct.unpack("<Q", body)[0], hub)
                        break
                    elif mtype == "Q":
                        status = body[0] if body else 0
                        raise EOFError("quit")
                    else:
                        raise SystemExit(f"qemu_module: unexpected message {mtype!r}")
        except EOFError:
            pass
        except ModuleReset as reset:
            status = reset.status
        except (EmulatorEnded, BrokenPipeError):
            # A module on a bus never ends by itself: say how QEMU did, after
            # whatever it and the guest printed last. (BrokenPipeError: the
            # plugin's resume pipe, QEMU gone.)
            rc = m.qemu.wait()
            how = f"was killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
            sys.stdout.flush()
            print(f"qemu_module: error: QEMU {how} after tick {m.now} ({m.now / TICK_HZ:.6f} s)",
                  file=sys.stderr, flush=True)
            status = EXIT_QEMU_ENDED
        finally:
            if m.qemu.poll() is None:
                m.qemu.kill()
            rc = m.qemu.wait()
            if m.log:
                m.log.close()
        return status if status or rc in (0, -9) else rc


if __name__ == "__main__":
    sys.exit(main())
