# SPDX-License-Identifier: MIT
"""The bus hub: the simulated bus of a multi-module device, and the time
master that keeps the modules' simulated clocks coherent.

Each native module is a process with its own simulated clock; it connects
to the hub over a Unix socket (ports/native/bus_native.c) and may move its
clock only as far as the hub grants. The hub runs a conservative
discrete-event simulation in global time (integer nanoseconds):

1. It waits until every running module is blocked asking to advance
   (ADVANCE: "I am at tick t and want to reach tick w"), collecting what the
   modules did meanwhile: frames handed to their interface (TX), frames
   taken out of it (RXDONE, accepted or rejected), probe answers.
2. It applies those inputs in a fixed order (time, module id, sequence), so
   the wall-clock order of socket reads never matters.
3. It picks the next global time N: the earliest of its own bus events and
   the modules' wants, processes every bus event at N (slot arbitration,
   end of a transfer, acknowledgements, wake-ups, faults, probes), and
   releases exactly the modules that have something at N: their events and
   a grant to N in their own ticks.

No module is ever granted a tick at which something might still happen to
it, so a frame arrives as an interrupt at its exact tick, and the same seed
gives the same run. Details, and the bus model (TDMA slots, bandwidth, CPU
cost, flow control, power, faults): docs/bus.md.

A module whose simulated time stops (a handler that never returns, tasks
exchanging messages for ever at zero cost) would hold every other module
back for ever: the watchdog stops the run when a module burns more than
`watchdog_s` of CPU time without asking for time, naming the task on its
stack (docs/bus.md, "The watchdog").
"""

from __future__ import annotations

import collections
import dataclasses
import errno
import heapq
import json
import math
import os
import random
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import time
from fractions import Fraction

from . import eventlog, module_kinds
from .appdesc import crc16

# ---- the frame format (kernel/include/motet/bus.h) -----------------------

FRAME_TYPES = {1: "DATA", 2: "MCAST", 3: "SYNC", 4: "DESC", 5: "CREATED", 6: "ASK"}
# A CREATED frame's payload (BUS_APP_CREATED_SIZE): the outcome, u8 mt_err_t,
# u8 relative pid of the task it is about (APPMGR_NO_TASK: none), u8 that
# task's module; then the load it is about: u8 its loader's module, u8 the
# loader's number for it (the port byte of the load's DESC frame).
CREATED_SIZE = 5
APPMGR_NO_TASK = 0xFF
TYPE_RETRY = 0x80
BROADCAST = 0xFF
HEADER = 10
OVERHEAD = 12


def frame_ok(frame: bytes) -> bool:
    if len(frame) < OVERHEAD:
        return False
    n = frame[8] | frame[9] << 8
    return len(frame) == OVERHEAD + n and crc16(frame[:-2]) == (frame[-2] | frame[-1] << 8)


def reseal(frame: bytearray) -> None:
    crc = crc16(frame[:-2])
    frame[-2] = crc & 0xFF
    frame[-1] = crc >> 8


def stamp_sync(frame: bytearray, stamp: int) -> None:
    """Write a beacon's stamp (the interface's job, bus_frame_stamp())."""
    frame[HEADER:HEADER + 4] = struct.pack("<I", stamp & 0xFFFFFFFF)
    reseal(frame)


# ---- the link protocol (ports/native/bus_native.c) -------------------------

LINK_VERSION = 3
WATCHDOG_SIGNAL = signal.SIGUSR2  # asks a module for the task on its stack (STACK)
WATCHDOG_POLL_S = 0.2  # wall-clock seconds between two looks at the CPU time of silent modules
WATCHDOG_SAMPLES = 12  # STACK answers asked of a stuck module
PID_NONE = 0x00  # MT_PID_NONE: no task on the stack (the kernel itself)
EV_RX, EV_TX_DONE, EV_PROBE, EV_HOST = 1, 2, 3, 4
RESULT_SENT, RESULT_REJECTED, RESULT_UNREACHABLE = 0, 1, 2
RX_REJECTED, RX_ACCEPTED, RX_BUSY = 0, 1, 2  # a receiver's answer (bus_rx_t)
BUSY_RETRY_NS = 1_000_000  # a frame a receiver answered busy is offered again after this
RESULT_NAMES = {RESULT_SENT: "sent", RESULT_REJECTED: "rejected", RESULT_UNREACHABLE: "unreachable"}
STATS_FIELDS = ("tx_frames", "tx_bytes", "tx_retransmits", "tx_given_up", "tx_unreachable",
                "tx_queue_full", "rx_frames", "rx_corrupt", "rx_duplicates", "rx_undeliverable",
                "tx_queue_high", "beacons", "rx_bad", "rx_missed")


# The body of each message a module sends, after its u64 tick: (least, most)
# bytes, None for no bound (docs/bus.md); an emulated module's ADVANCE
# adds the cycles it has slept.
MODULE_BODIES = {"T": (0, None), "R": (1, 1), "P": (13, 13), "S": (2, None), "D": (9, 9),
                 "A": (9, 17), "K": (4 * len(STATS_FIELDS), 4 * len(STATS_FIELDS))}


def pack_msg(mtype: str, body: bytes = b"") -> bytes:
    return struct.pack("<IB", 1 + len(body), ord(mtype)) + body


class HubError(Exception):
    """The run cannot go on (a module did not start, the link broke).
    `status`: the exit status `motet run` gives for it (2: the device file
    or the command line asked for something a program refused)."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status



class Interrupted(Exception):
    """Ctrl-C or SIGTERM, noticed at a point where no message is half read."""


class Stuck(Exception):
    """The watchdog found a module whose simulated time stopped: the run ends
    (the text says which module and task)."""


# ---- clocks ----------------------------------------------------------------

class Clock:
    """A module's clock: `hz` ticks per second (1 MHz: a native module's
    1 us counter; an emulated core's cycles) running `ppm` fast, so that
    tick(g) = floor(g * hz * (1e9 + ppb) / 1e18) for global time g in ns."""

    DEN = 10**18

    def __init__(self, ppm: float, start: int, stamp_hz: int, hz: int = 1_000_000):
        self.ppm = ppm
        self.num = (10**9 + round(ppm * 1000)) * hz
        self.start = start
        self.stamp_hz = stamp_hz

    def floor(self, g: int) -> int:
        return g * self.num // self.DEN

    def ceil(self, g: int) -> int:
        return -((-g * self.num) // self.DEN)

    def at(self, tick: int) -> int:
        """The first global ns at which the clock shows `tick`."""
        return -((-tick * self.DEN) // self.num)

    def exact(self, g: int) -> Fraction:
        return Fraction(g * self.num, self.DEN)

    def stamp(self, g: int) -> int:
        """The counter at g, truncated to the stamp clock's last edge (a
        32.768 kHz RTC is good to 30.5 us), modulo 2^32."""
        counter = self.start + self.floor(g)
        if self.stamp_hz < 1_000_000:
            edges = counter * self.stamp_hz // 1_000_000
            counter = -((-edges * 1_000_000) // self.stamp_hz)
        return counter & 0xFFFFFFFF


# ---- the simulation state ----------------------------------------------------

@dataclasses.dataclass
class Transfer:
    """One frame from the moment a module's interface holds it."""
    id: int
    src: "Mod"
    frame: bytearray
    ready: int
    dst: int = 0
    ftype: str = "?"
    receivers: list = dataclasses.field(default_factory=list)
    acks: dict = dataclasses.field(default_factory=dict)
    started: int | None = None
    end: int | None = None
    done: bool = False
    retry: bool = False
    attempt: int = 0  # offers of the frame on the wire (a busy receiver makes more)
    try_no: int = 1  # the sender's sends of this frame: 1, then each retransmission


@dataclasses.dataclass
class Mod:
    """The hub's view of one module."""
    spec: object
    clock: Clock
    index: int
    kind: module_kinds.Kind
    proc: subprocess.Popen | None = None
    conn: socket.socket | None = None
    retries: int = 1  # its kernel's MOTET_BUS_RETRIES: sends of a frame, at most
    tries: dict = dataclasses.field(default_factory=dict)  # (type, dst, seq) -> sends
    rbuf: bytearray = dataclasses.field(default_factory=bytearray)
    obuf: bytearray = dataclasses.field(default_factory=bytearray)
    lines: list = dataclasses.field(default_factory=list)
    # Its last lines of output, kept across steps: what an emulator that
    # dies said last.
    tail: collections.deque = dataclasses.field(
        default_factory=lambda: collections.deque(maxlen=Hub.TAIL_LINES))
    inbox: list = dataclasses.field(default_factory=list)
    outbox: list = dataclasses.field(default_factory=list)
    blocked: bool = False
    want: int | None = None  # tick; None: asleep with nothing scheduled
    sleeping: bool = False
    granted: int = 0
    granted_at: int = 0  # global ns of the last grant
    dead: bool = False
    exit_note: str = ""
    frozen: bool = False
    # Stopped by a stall: every frame to it waits its own acknowledgement
    # timeout and ends without it; it is never marked unresponsive.
    stalled: bool = False
    final_state: str = ""
    power: str = "on"  # on, off, waking
    off_pending: bool = False
    unresponsive: bool = False
    rx: Transfer | None = None  # the frame in its receive buffer
    rx_event: bytes = b""  # that frame's reception, as delivered (receive())
    tx: Transfer | None = None  # the frame in its send buffer
    seq: int = 0
    stats: dict | None = None
    busy_ns: int = 0
    sleep_ns: int = 0
    core_ns: int = 0  # an emulated core: the device time its last report reached
    off_ns: int = 0
    off_since: int = 0
    tx_frames: int = 0
    rx_frames: int = 0
    # Its "deliver" events in the hub's queue, and the tick of the last one
    # queued: a new event goes no earlier (deliver()).
    delivers_queued: int = 0
    last_deliver_tick: int = 0
    watch_cpu: float | None = None  # its CPU seconds when the watchdog began to watch it
    stacks: list = dataclasses.field(default_factory=list)  # STACK answers: (tick, pid, depth, name)
    grants: int = 0  # GRANTs sent: what the module cost the hub's loop
    delivered: int = 0  # events that reached an emulated module's interface (DELIVERED)
    max_late: int = 0  # ticks the latest of them came after its due tick
    past_grant: int = 0  # the most ticks an emulated core ran past a grant

    @property
    def id(self) -> int:
        return self.spec.id

    @property
    def live(self) -> bool:
        return not self.dead and not self.frozen

    def energy_mj(self) -> float:
        p = self.spec.power
        return (p.active_mw * self.busy_ns + p.sleep_mw * self.sleep_ns +
                p.off_uw / 1000 * self.off_ns) / 1e9


@dataclasses.dataclass(frozen=True)
class Fault:
    """A fault injected on command: `kind` at `at_ns` on module `module`
    (None: any receiver); `count` frames, `delay_ns` for a delay and for
    how long a pause lasts. With
    `frame` = (pid, port), a kill or freeze happens instead when `module`
    is about to take the `count`-th frame for that pid and port: at the end
    of its transfer, before the module has it (it never takes it)."""
    kind: str
    module: int | None
    at_ns: int
    count: int = 1
    delay_ns: int = 0
    frame: tuple[int, int] | None = None

    def describe(self) -> str:
        who = "any module" if self.module is None else f"m{self.module}"
        extra = f" x{self.count}" if self.kind in COUNTED_FAULTS and self.count > 1 else ""
        if self.kind == "delay":
            extra = f" by {self.delay_ns / 1000:g} us"
        if self.kind in ("pause", "stall"):
            extra = f" for {self.delay_ns / 1e6:g} ms"
        if self.frame is not None:
            extra = (f" as frame {self.count} for pid {self.frame[0]:#04x} port "
                     f"{self.frame[1]} reaches it")
        return f"{self.kind} {who}{extra}"


FAULT_KINDS = ("kill", "freeze", "pause", "stall", "resume", "off", "corrupt", "delay", "drop")
# Faults on the next N frames a module receives (or any module: *).
COUNTED_FAULTS = ("corrupt", "drop")


def parse_command(line: str, at_ns: int) -> Fault:
    """An interactive command, `KIND MODULE [N]` (e.g. `corrupt 1 3`), as a
    fault at `at_ns` (the hub's current time)."""
    words = line.split()
    if len(words) not in (2, 3):
        raise ValueError(f"bad command {line.strip()!r} (KIND MODULE [N], KIND one of "
                         f"{', '.join(FAULT_KINDS)})")
    extra = f":{words[2]}" if len(words) == 3 else ""
    f = parse_fault(f"{words[0]}:{words[1]}@0{extra}")
    return dataclasses.replace(f, at_ns=at_ns)


def parse_frame_fault(kind: str, who: str, trigger: str) -> Fault:
    """KIND:MODULE@frame:PID:PORT[:N]: kill or freeze MODULE when the N-th
    frame (default 1) for task PID, input PORT is about to reach it."""
    if kind not in ("kill", "freeze"):
        raise ValueError(f"only kill and freeze can be triggered by a frame, not {kind!r}")
    words = trigger.split(":")
    if len(words) not in (3, 4) or words[0] != "frame":
        raise ValueError("a frame trigger is frame:PID:PORT[:N]")
    pid, port = _whole(words[1], "PID", 0), _whole(words[2], "PORT", 0)
    count = _whole(words[3], "N", 0) if len(words) == 4 else 1
    if not (0 <= pid <= 0xFF and 0 <= port <= 0xFF) or count < 1:
        raise ValueError("PID and PORT are bytes, N >= 1")
    return Fault(kind, _fault_module(kind, who), 0, count=count, frame=(pid, port))


def _whole(text: str, what: str, base: int = 10) -> int:
    """A whole number of a fault spec; its error names the part (`what`)."""
    try:
        return int(text, base)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a whole number") from None


def _fault_module(kind: str, who: str) -> int | None:
    """A fault's MODULE: its id, or None for * (any module), which only the
    faults on the next frames a module receives take."""
    if who != "*":
        return _whole(who, "module")
    if kind not in (*COUNTED_FAULTS, "delay"):
        raise ValueError(f"{kind} needs a module number, not *")
    return None


_UNITS = {1e9: "seconds", 1e6: "milliseconds", 1e3: "microseconds"}


def _nanoseconds(text: str, scale: float, what: str) -> int:
    """A fault's time or delay in ns (`text` in the unit `scale` ns):
    finite and not negative."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} {text!r} is not a finite number >= 0 ({_UNITS[scale]})")
    return round(value * scale)


def parse_fault(spec: str) -> Fault:
    """KIND:MODULE@SECONDS[:N] -- kill, freeze and off (power off) a module;
    pause it for N milliseconds, or stall it for N milliseconds (stopped,
    but never marked unresponsive: each frame to it waits its own
    acknowledgement timeout); resume a frozen, paused or stalled one; corrupt the
    next N frames it receives (default 1); delay the next frame it receives
    by N microseconds; drop (lose on the wire) the next N frames it receives
    (default 1). MODULE may be * for corrupt, drop and delay.
    KIND:MODULE@frame:PID:PORT[:N] -- kill or freeze MODULE when the N-th
    frame for PID and PORT is about to reach it (parse_frame_fault)."""
    try:
        kind, _, rest = spec.partition(":")
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r} (known: {', '.join(FAULT_KINDS)})")
        who, at, when = rest.partition("@")
        if not at:
            raise ValueError(f"{kind} needs a module and a time: {kind}:MODULE@SECONDS")
        if when.startswith("frame:"):
            return parse_frame_fault(kind, who, when)
        extra = None
        if ":" in when:
            when, extra = when.split(":", 1)
        module = _fault_module(kind, who)
        at_ns = _nanoseconds(when, 1e9, "time")
        if kind == "delay":
            if extra is None:
                raise ValueError("delay needs :MICROSECONDS")
            return Fault(kind, module, at_ns, delay_ns=_nanoseconds(extra, 1e3, "delay"))
        if kind in ("pause", "stall"):
            if extra is None:
                raise ValueError(f"{kind} needs :MILLISECONDS")
            return Fault(kind, module, at_ns, delay_ns=_nanoseconds(extra, 1e6, kind))
        if extra is not None and kind not in COUNTED_FAULTS:
            raise ValueError(f"{kind} takes no :N (only corrupt and drop take a count)")
        count = _whole(extra, "count") if extra is not None else 1
        if count < 1:
            raise ValueError(f"count {count}: {kind} needs a count >= 1")
        return Fault(kind, module, at_ns, count=count)
    except ValueError as e:
        raise ValueError(f"bad fault {spec!r}: {e} (format KIND:MODULE@SECONDS[:N] or "
                         f"KIND:MODULE@frame:PID:PORT[:N])") from None


# ---- the hub ---------------------------------------------------------------

class Hub:
    """One run of a device. `launch(mod, socket_path)` returns the argv of a
    module process; output lines go to `out` (a callable taking a str)."""

    STALL_S = 60.0  # wall-clock seconds a module may take between two requests
    # CPU seconds a module may compute without asking for time: far more than
    # any handler of the applications here takes between two requests, even
    # sanitized, and no load on the machine makes a waiting module use it.
    WATCHDOG_S = 5.0

    def __init__(self, device, sock_path, launch, *, seed=1, until_s=None, faults=(),
                 probe_s=None, probe_warmup_s=0.0, trace=False, out=print, progress=False,
                 commands=None, watchdog_s=WATCHDOG_S, host=()):
        self.device = device
        # The device's host: (seconds, fn) pairs; fn(hub) runs at that global
        # time, while the device runs, and may answer with host_send() and
        # schedule itself again with host_at().
        self.host = list(host)
        self.sock_path = sock_path
        self.launch = launch
        self.seed = seed
        self.until_ns = None if until_s is None else round(until_s * 1e9)
        self.faults = [f for f in faults if f.frame is None]
        self.frame_faults = [f for f in faults if f.frame is not None]
        self.frame_seen = [0] * len(self.frame_faults)
        self.trace = trace
        self.out = out
        self.progress = progress
        self.rng = random.Random(f"hub/{seed}")
        ppm = device.clock_ppm(seed)
        self.mods = {}
        for i, spec in enumerate(device.modules):
            kind = module_kinds.of(spec)
            clock = Clock(ppm[spec.id], spec.counter_start, spec.stamp_hz, kind.tick_hz(spec))
            self.mods[spec.id] = Mod(spec=spec, clock=clock, index=i, kind=kind)
        self.slot_ns = round(device.bus.slot_us * 1000)
        # The bus's smallest frame latency: the wire time of a frame without
        # payload. No frame handed over at t reaches anyone before t + this.
        self.lookahead_ns = -(-OVERHEAD * 10**9 // device.bus.bandwidth)
        self.ack_timeout_ns = round(device.bus.ack_timeout_us * 1000)
        self.now = 0
        self.heap = []
        self.hseq = 0
        self.bus_free_at = 0
        self.next_tid = 1
        self.notes = []
        self.events_log = []
        # Per link (sender, receiver): frames accepted, and the sum, least and
        # most of their latency, from the sender's interface holding the frame
        # to the receiver's accepting it (RX_DONE), ns of device time.
        self.link_latency = {}
        self.counters = {"frames": 0, "bytes": 0, "by_type": {}, "bus_busy_ns": 0,
                         "rejected": 0, "corrupted": 0, "delayed": 0, "waits_busy_receiver": 0,
                         "wakeups": 0, "unreachable": 0, "retransmissions": 0, "busy": 0,
                         "dropped": 0, "stalled_misses": 0}
        self.corrupt_left = {}
        self.drop_left = {}  # module (None: any) -> frames still to lose on the wire
        self.delay_next = {}
        self.reference = None
        self.probe_truth = {}
        self.probes = []
        self.probe_s = probe_s
        self.probe_warmup_ns = round(probe_warmup_s * 1e9)
        self.sel = selectors.DefaultSelector()
        self.listener = None
        self.end_reason = None
        self.last_progress = 0.0
        self.stop_requested = False
        self.unreachable_noted = set()
        self.beacons_refused = set()  # emulated modules whose beacons were noted
        self.load_failures = set()  # (loader, number, outcome) noted of each load
        self.failed_loads = []  # what each refused description's first refusal said
        self.commands = commands  # a file whose lines are fault commands, or None
        self.command_buf = b""
        self.watchdog_s = watchdog_s  # CPU seconds without asking for time; None or 0: off
        self.watchdog = None  # what the watchdog found, once it stopped the run
        self.chip_reset = None  # the module whose chip's own watchdog reset it
        self.module_ended = None  # the emulated module whose emulator ended by itself
        self.module_exits = []  # modules that exited by themselves with a status not 0
        self.clk_tck = os.sysconf("SC_CLK_TCK")

    # ---- notes and output ----

    def note(self, text, module=None, t=None):
        t = self.now if t is None else t
        self.notes.append(f"hub| [{t / 1e9:11.6f} s] {text}")
        self.events_log.append({"t": t / 1e9, "module": module, "what": text})

    def flush_output(self):
        for line in self.notes:
            self.out(line)
        self.notes.clear()
        for m in sorted(self.mods.values(), key=lambda m: m.id):
            for line in m.lines:
                self.out(f"m{m.id}| {line}")
            m.lines.clear()

    def show_progress(self, force=False):
        if not self.progress:
            return
        wall = time.monotonic()
        if not force and wall - self.last_progress < 0.5:
            return
        self.last_progress = wall
        until = f" / {self.until_ns / 1e9:g} s" if self.until_ns else ""
        sys.stderr.write(f"\rmotet run: t = {self.now / 1e9:.3f} s{until}, "
                         f"{self.counters['frames']} frames   ")
        sys.stderr.flush()

    # ---- the event queue ----

    def push(self, t, kind, *data):
        heapq.heappush(self.heap, (t, self.hseq, kind, data))
        self.hseq += 1

    def deliver(self, m, t, body, probe=None):
        """An event for module m at global time t, at its next tick."""
        if m.dead:
            return
        tick = max(m.clock.ceil(t), m.granted + 1)
        # Keep one module's events in order: none before one already queued
        # for it. Each is queued no earlier than the one before, so the last
        # is the latest: no need to look through the queue (which holds the
        # whole fault schedule) for every event.
        if m.delivers_queued:
            tick = max(tick, m.last_deliver_tick)
        when = m.clock.at(tick)
        if probe is not None:
            self.probe_truth[(probe, m.id)] = when
        m.delivers_queued += 1
        m.last_deliver_tick = tick
        self.push(when, "deliver", m, tick, body)

    # ---- the device's host ----

    def host_at(self, t_ns, fn):
        """Run fn(hub) at global time t_ns (not before now)."""
        self.push(max(t_ns, self.now), "host", fn)

    def host_send(self, module, body):
        """A message from the host to `module` (a native module's program
        takes it in its bus interrupt, port_native_bus_on_host()), at the
        module's next tick; False if the module cannot take one."""
        m = self.mods.get(module)
        if m is None or m.dead or m.spec.kind != "native":
            self.note(f"host: no native module {module} to take the message")
            return False
        self.deliver(m, self.now, struct.pack("<B", EV_HOST) + bytes(body))
        return True

    # ---- processes and sockets ----

    def start(self):
        try:
            os.unlink(self.sock_path)
        except FileNotFoundError:
            pass
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.sock_path)
        self.listener.listen(len(self.mods))
        for m in self.mods.values():
            argv = self.launch(m, self.sock_path)
            m.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
            os.set_blocking(m.proc.stdout.fileno(), False)
            self.sel.register(m.proc.stdout, selectors.EVENT_READ, ("out", m))
        self.sel.register(self.listener, selectors.EVENT_READ, ("listen", None))
        self.handshake()
        if self.commands is not None:
            os.set_blocking(self.commands.fileno(), False)
            self.sel.register(self.commands, selectors.EVENT_READ, ("cmd", None))

    def handshake(self):
        pending = dict(self.mods)
        deadline = time.monotonic() + self.STALL_S
        while any(m.conn is None for m in self.mods.values()):
            for m in self.mods.values():
                if m.conn is None and m.proc.poll() is not None:
                    self.drain_output(m, final=True)
                    self.flush_output()
                    refused = m.kind.refused_arguments(m.spec, m.proc.returncode)
                    raise HubError(f"module {m.id} ({m.spec.name}) exited with status "
                                   f"{m.proc.returncode} before joining the bus"
                                   + (f": {refused} refused the arguments it was given (the "
                                      "device file's args and sensors, the options after --; "
                                      "its message is above)" if refused else ""),
                                   status=2 if refused else 1)
            self.check_interrupt()
            if time.monotonic() > deadline:
                raise HubError("modules did not connect: "
                               + ", ".join(f"m{i}" for i, m in pending.items() if not m.conn))
            for key, _ in self.sel.select(timeout=0.2):
                what, m = key.data
                if what == "out":
                    self.drain_output(m)
                elif what == "listen":
                    self.accept()
        mask = sum(1 << m.id for m in self.mods.values())
        for m in self.mods.values():
            m.conn.sendall(pack_msg("W", struct.pack("<I", mask)))
        self.sel.unregister(self.listener)
        self.listener.close()
        self.listener = None

    def accept(self):
        conn, _ = self.listener.accept()
        conn.setblocking(True)
        header = self.read_exact(conn, 5)
        length, mtype = struct.unpack("<IB", header)
        body = self.read_exact(conn, length - 1)
        if chr(mtype) != "H" or len(body) < 8 + 5:
            raise HubError("a module spoke before saying hello")
        mid, version = struct.unpack_from("<BI", body, 8)
        if version != LINK_VERSION or len(body) != 8 + 6:
            raise HubError(f"module {mid} speaks link version {version}, not {LINK_VERSION}")
        m = self.mods.get(mid)
        if m is None or m.conn is not None:
            raise HubError(f"a module announced itself as {mid}, which is not expected")
        m.retries = body[13]
        m.conn = conn
        conn.setblocking(False)
        self.sel.register(conn, selectors.EVENT_READ, ("sock", m))

    @staticmethod
    def read_exact(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise HubError("a module closed the link during the handshake")
            data += chunk
        return data

    def drain_output(self, m, final=False):
        """Read what module m printed; complete lines go to this step."""
        while True:
            try:
                chunk = os.read(m.proc.stdout.fileno(), 65536)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                final = True
                break
            m.obuf += chunk
        *lines, rest = m.obuf.split(b"\n")
        m.obuf = bytearray(rest)
        got = [line.decode(errors="replace").rstrip("\r") for line in lines]
        if final and m.obuf:
            got.append(m.obuf.decode(errors="replace"))
            m.obuf = bytearray()
        m.lines.extend(got)
        m.tail.extend(line for line in got if line.strip())

    def send(self, m, mtype, body=b""):
        if m.dead or m.conn is None:
            return
        try:
            m.conn.setblocking(True)
            m.conn.sendall(pack_msg(mtype, body))
            m.conn.setblocking(False)
        except OSError:
            self.module_gone(m)

    def read_socket(self, m):
        try:
            chunk = m.conn.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.module_gone(m)
            return
        m.rbuf += chunk
        while len(m.rbuf) >= 5:
            length, mtype = struct.unpack_from("<IB", m.rbuf)
            if length == 0:
                raise HubError(f"m{m.id} ({m.spec.name}) sent a message of length 0")
            if len(m.rbuf) < 4 + length:
                break
            body = bytes(m.rbuf[5:4 + length])
            del m.rbuf[:4 + length]
            self.message(m, chr(mtype), body)

    def check_message(self, m, mtype, body):
        """A module's message of a type it sends, with exactly its fields;
        anything else stops the run (HubError) before any of it is used."""
        least, most = MODULE_BODIES.get(mtype, (None, None))
        if mtype == "A" and m.kind.free_running:
            least = 17
        n = len(body) - 8
        if least is None or n < least or (most is not None and n > most):
            raise HubError(f"m{m.id} ({m.spec.name}) sent a malformed message: type "
                           f"{mtype!r} with {max(n, 0)} bytes after its tick")

    def message(self, m, mtype, body):
        if m.dead:
            return
        self.check_message(m, mtype, body)
        (local,) = struct.unpack_from("<Q", body)
        rest = body[8:]
        if m.unresponsive and self.end_reason is None:
            m.unresponsive = False
            self.unreachable_noted = {k for k in self.unreachable_noted if k[1] != m.id}
            self.note(f"m{m.id} answers again", m.id)
        if mtype == "S":
            name = rest[2:].decode(errors="replace")
            m.stacks.append((local, rest[0], rest[1], name))
            return
        if mtype == "D":
            due, _ = struct.unpack_from("<QB", rest)
            m.delivered += 1
            m.max_late = max(m.max_late, local - due)
            return
        if mtype == "A":
            want, sleeping = struct.unpack_from("<QB", rest)
            self.drain_output(m)  # everything it printed before asking
            if m.kind.free_running:  # an instruction may end past the grant
                m.past_grant = max(m.past_grant, local - m.granted)
                m.granted = max(m.granted, local)
                self.core_time(m, local, struct.unpack_from("<Q", rest, 9)[0])
            m.blocked = True
            m.watch_cpu = None
            m.want = None if want == 0xFFFFFFFFFFFFFFFF else want
            m.sleeping = bool(sleeping)
            return
        m.seq += 1
        m.inbox.append((local, m.seq, mtype, rest))

    def module_gone(self, m):
        if m.dead:
            return
        m.dead = True
        m.blocked = False
        try:
            self.sel.unregister(m.conn)
        except (KeyError, ValueError):
            pass
        status = m.proc.poll() if m.proc else None
        if status is None and m.proc:
            try:
                status = m.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                status = None
        self.drain_output(m, final=True)
        reset = m.kind.reset_note(status)
        if reset and not m.exit_note:
            m.exit_note = reset
            self.chip_reset = {"module": m.id, "name": m.spec.name, "tick": m.granted}
            self.note(f"m{m.id} ({m.spec.name}) {reset}: the run stops", m.id)
        if not m.exit_note and m.kind.free_running and self.end_reason is None:
            self.emulator_ended(m, status)
        if not m.exit_note:
            m.exit_note = f"exited with status {status}" if status is not None else "link lost"
            if self.end_reason is None:
                self.note(f"m{m.id} {m.exit_note}", m.id)
            # Ended by itself (no QUIT, no fault, no watchdog): the run
            # goes on without it, and fails at its end (run_device.py).
            if status:
                self.module_exits.append({"module": m.id, "name": m.spec.name,
                                          "status": status, "tick": m.granted,
                                          "meaning": m.kind.exit_meaning(status)})
        self.forget_module(m)

    def emulator_ended(self, m, status):
        """An emulated module's process ended on its own: its emulator
        crashed, was killed, or its chip stopped (port_halt()). Its tasks
        are gone with nothing to report them, so the run stops, naming it
        with what it said last."""
        how = f"status {status}" if status is not None else "its link lost"
        m.exit_note = f"its emulator ({m.kind.emulator}) ended ({how})"
        last = list(m.tail)
        self.module_ended = {"module": m.id, "name": m.spec.name, "status": status,
                             "tick": m.granted, "last_output": last}
        said = f"; its last output: {last[-1]!r}" if last else "; it printed nothing"
        self.note(f"m{m.id} ({m.spec.name}): {m.exit_note}: the run stops{said}", m.id)

    # ---- waiting for the modules ----

    def read_commands(self):
        """Interactive faults: each line applies at the next step (so at the
        hub's current time, which depends on the wall clock: not repeatable,
        unlike --fault)."""
        try:
            chunk = os.read(self.commands.fileno(), 4096)
        except BlockingIOError:
            return
        if not chunk:
            self.sel.unregister(self.commands)
            return
        self.command_buf += chunk
        *lines, self.command_buf = self.command_buf.split(b"\n")
        for line in lines:
            text = line.decode(errors="replace").strip()
            if not text:
                continue
            try:
                self.push(self.now, "fault", parse_command(text, self.now))
            except ValueError as e:
                self.note(f"command ignored: {e}")

    def request_stop(self, signum, frame):
        """Signal handler: only a flag, so that no message is torn."""
        self.stop_requested = True

    def check_interrupt(self):
        if self.stop_requested:
            raise Interrupted()

    def waiting_for(self):
        return [m for m in self.mods.values() if m.live and not m.blocked]

    def cpu_seconds(self, m):
        """CPU time (user + system) module m's process has used, or None if
        it cannot be read. CPU time, not wall time: a module that waits for
        a busy machine is not stuck."""
        try:
            with open(f"/proc/{m.proc.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / self.clk_tck
        except (OSError, IndexError, ValueError):
            return None

    def check_watchdog(self):
        """Each module still computing since its last request for time is
        watched from the first look; once it has used watchdog_s of CPU
        since then, its simulated time has stopped."""
        if not self.watchdog_s:
            return
        for m in self.waiting_for():
            if m.proc is None or m.conn is None:
                continue
            cpu = self.cpu_seconds(m)
            if cpu is None:
                continue
            if m.watch_cpu is None:
                m.watch_cpu = cpu
            elif cpu - m.watch_cpu >= self.watchdog_s:
                self.read_socket(m)  # it may have asked for time meanwhile
                if not m.blocked and not m.dead:
                    self.stuck(m, cpu - m.watch_cpu)

    def stuck(self, m, cpu):
        """Ask m (WATCHDOG_SIGNAL) which task is on its stack, a few times,
        since a sample may fall between two handlers; kill it and stop the
        run naming the tasks seen."""
        m.stacks.clear()
        for _ in range(WATCHDOG_SAMPLES):
            asked = len(m.stacks)
            try:
                os.kill(m.proc.pid, WATCHDOG_SIGNAL)
            except OSError:
                break
            deadline = time.monotonic() + 0.5
            while len(m.stacks) == asked and time.monotonic() < deadline and not m.dead:
                if select.select([m.conn], [], [], 0.05)[0]:
                    self.read_socket(m)
            if m.dead:
                break
            time.sleep(0.01)  # let it run on a little: the next sample is another instant
        seen = {}
        for _, pid, depth, name in m.stacks:
            if pid != PID_NONE:
                label = f"{pid:#04x} (program '{name}')" if name else f"{pid:#04x}"
                seen[label] = seen.get(label, 0) + 1
        at = m.stacks[0][0] if m.stacks else m.granted
        if seen:
            tasks = ", ".join(f"task {label} ({n} of {len(m.stacks)} samples)"
                              for label, n in sorted(seen.items(), key=lambda kv: -kv[1]))
            what = f"on its stack: {tasks}"
        elif m.stacks:
            what = f"no task on its stack in {len(m.stacks)} samples (the kernel was between handlers)"
        else:
            what = "it did not say which task runs"
        self.watchdog = {"module": m.id, "name": m.spec.name, "tick": at, "cpu_s": cpu,
                         "tasks": seen, "samples": len(m.stacks)}
        self.note(f"watchdog: m{m.id} ({m.spec.name}) used {cpu:.1f} s of CPU without asking for "
                  f"time: its simulated time stopped at {at / 1e6:.6f} s; {what}", m.id)
        m.exit_note = "stopped by the watchdog"
        if m.proc.poll() is None:
            m.proc.kill()
        self.module_gone(m)
        raise Stuck(self.watchdog)

    def wait_quiescent(self):
        deadline = time.monotonic() + self.STALL_S
        next_watch = time.monotonic() + WATCHDOG_POLL_S
        while self.waiting_for():
            self.check_interrupt()
            if time.monotonic() >= next_watch:
                next_watch = time.monotonic() + WATCHDOG_POLL_S
                self.check_watchdog()
            events = self.sel.select(timeout=0.2)
            for key, _ in events:
                what, m = key.data
                if what == "sock":
                    self.read_socket(m)
                elif what == "out":
                    self.drain_output(m)
                elif what == "cmd":
                    self.read_commands()
            if events:
                deadline = time.monotonic() + self.STALL_S
            elif time.monotonic() > deadline:
                names = ", ".join(f"m{m.id}" for m in self.waiting_for())
                raise HubError(f"no answer for {self.STALL_S:.0f} s (wall clock) from {names}")

    # ---- applying what the modules did ----

    def global_of(self, m, tick):
        return max(m.clock.at(tick), self.now)

    def apply_inputs(self):
        inputs = []
        for m in self.mods.values():
            for local, seq, mtype, body in m.inbox:
                inputs.append((self.global_of(m, local), m.id, seq, m, mtype, body))
            m.inbox.clear()
        for t, _, _, m, mtype, body in sorted(inputs, key=lambda x: x[:3]):
            if mtype == "T":
                self.on_tx(m, t, bytearray(body))
            elif mtype == "R":
                self.on_rxdone(m, t, body[0])
            elif mtype == "P":
                self.on_probe_answer(m, body)
            elif mtype == "K":
                values = struct.unpack_from(f"<{len(STATS_FIELDS)}I", body)
                m.stats = dict(zip(STATS_FIELDS, values))
        for m in self.mods.values():
            if m.off_pending and m.blocked and m.sleeping and m.tx is None and m.rx is None:
                self.power_off(m)

    def on_tx(self, m, t, frame):
        tr = Transfer(id=self.next_tid, src=m, frame=frame, ready=t)
        self.next_tid += 1
        if len(frame) >= OVERHEAD:
            tr.dst = frame[2]
            tr.ftype = FRAME_TYPES.get(frame[0] & ~TYPE_RETRY, "?")
            tr.retry = bool(frame[0] & TYPE_RETRY)
            # A retransmission keeps its type, destination and sequence number.
            key = (frame[0] & ~TYPE_RETRY, tr.dst, frame[3])
            tr.try_no = m.tries.get(key, 0) + 1 if tr.retry else 1
            m.tries[key] = tr.try_no
        m.tx = tr
        if tr.retry:
            self.counters["retransmissions"] += 1
        if self.trace:  # at the frame's time: an emulated core may report it from ahead
            self.note(f"m{m.id} hands frame #{tr.id} ({self.frame_name(tr)}) to the bus", m.id,
                      t)
        if tr.dst != BROADCAST and (tr.dst not in self.mods or self.mods[tr.dst].dead):
            self.finish(tr, RESULT_UNREACHABLE, t)
            return
        self.schedule_slot(tr, t)

    def unstampable_beacon(self, tr):
        """The interface stamps a beacon with its sender's kernel time in
        microseconds; the hub models that for a native module (its 1 us
        counter), not for an emulated core, whose kernel time it does not
        know: the beacon reaches nobody, rather than a wrong stamp every
        module's clock."""
        tr.receivers = []
        if tr.src.id not in self.beacons_refused:
            self.beacons_refused.add(tr.src.id)
            self.note(f"error: m{tr.src.id} ({tr.src.kind.name}) sent a time-sync beacon: the "
                      "bus stamps beacons from native modules only; it reaches no module "
                      "(further ones are only counted)", tr.src.id)
        self.counters["unstamped_beacons"] = self.counters.get("unstamped_beacons", 0) + 1

    def frame_name(self, tr):
        dst = "all" if tr.dst == BROADCAST else f"m{tr.dst}"
        return f"{tr.ftype} m{tr.src.id}->{dst}, {len(tr.frame)} B"

    def on_rxdone(self, m, t, verdict):
        tr = m.rx
        m.rx = None
        if tr is None or tr.done:
            return
        if verdict == RX_BUSY and tr.dst != BROADCAST:
            self.busy_receiver(m, tr, t)
            return
        ok = verdict == RX_ACCEPTED
        tr.acks[m.id] = ok
        if ok:
            n, total, low, high = self.link_latency.get((tr.src.id, m.id), (0, 0, None, 0))
            lat = t - tr.ready
            self.link_latency[(tr.src.id, m.id)] = (n + 1, total + lat,
                                                    lat if low is None else min(low, lat),
                                                    max(high, lat))
        if not ok:
            self.counters["rejected"] += 1
            if tr.try_no < tr.src.retries:
                then = f"m{tr.src.id} will send it again"
            else:
                then = (f"that was m{tr.src.id}'s last try ({tr.try_no} of "
                        f"MOTET_BUS_RETRIES = {tr.src.retries}): it gives the frame up")
            self.note(f"m{m.id} rejected frame #{tr.id} ({self.frame_name(tr)}) as corrupt: "
                      f"not delivered, {then}", m.id, t)
        self.check_complete(tr, t)

    # ---- TDMA arbitration and transfers ----

    def schedule_slot(self, tr, t):
        """The start of the sender's next own slot at or after t."""
        self.push(self.own_slot(tr.src, t), "slot", tr)

    def receivers_of(self, tr):
        if tr.dst == BROADCAST:
            cands = [m for m in self.mods.values() if m is not tr.src]
        else:
            cands = [self.mods[tr.dst]] if tr.dst in self.mods else []
        return [m for m in cands if not m.dead and not m.unresponsive]

    def on_slot(self, tr):
        if tr.done or tr.src.dead:
            return
        if self.bus_free_at > self.now:  # someone else's transfer is on the wire
            self.schedule_slot(tr, self.bus_free_at)
            return
        recv = self.receivers_of(tr)
        if tr.dst != BROADCAST and not recv:
            self.finish(tr, RESULT_UNREACHABLE, self.now)
            return
        not_ready = [r for r in recv if r.power != "on" or r.rx is not None]
        for r in not_ready:
            if r.power == "off":
                self.wake(r, tr)
        if not_ready:
            if any(r.rx is not None for r in not_ready):
                self.counters["waits_busy_receiver"] += 1
            self.schedule_slot(tr, self.now + 1)
            return
        wire = -(-len(tr.frame) * 10**9 // self.device.bus.bandwidth)
        tr.started = self.now
        tr.end = self.now + wire
        tr.receivers = recv
        self.bus_free_at = tr.end
        self.counters["bus_busy_ns"] += wire
        self.push(tr.end, "txend", tr)

    def on_txend(self, tr):
        if tr.done:
            return
        c = self.counters
        c["frames"] += 1
        c["bytes"] += len(tr.frame)
        c["by_type"][tr.ftype] = c["by_type"].get(tr.ftype, 0) + 1
        tr.src.tx_frames += 1
        if tr.ftype == "SYNC" and tr.src.kind.free_running:
            self.unstampable_beacon(tr)
        elif tr.ftype == "SYNC":
            stamp_sync(tr.frame, tr.src.clock.stamp(self.now))
            self.reference = tr.src.id
        elif tr.ftype == "DESC":  # a load number used again (it wraps): its own notes
            load = (tr.src.id, tr.frame[5])
            self.load_failures = {f for f in self.load_failures if f[:2] != load}
        elif tr.ftype == "CREATED":
            self.note_outcome(tr)
        self.frame_triggers(tr)
        tr.receivers = [r for r in tr.receivers if not r.dead and not r.unresponsive]
        for r in tr.receivers:
            self.receive(r, tr)
        if not tr.receivers:  # a unicast whose receiver died on the way was not delivered
            self.finish(tr, RESULT_SENT if tr.dst == BROADCAST else RESULT_UNREACHABLE, self.now)
            return
        self.push(self.now + self.ack_timeout_ns, "acktimeout", tr, tr.attempt)
        self.check_complete(tr, self.now)  # ends now if every receiver lost it

    def note_outcome(self, tr):
        """A module's failed stage one of an application load (the kernel
        cannot name anything, so the hub does): once per distinct outcome
        and description, as every module may report the same."""
        payload = tr.frame[HEADER:-2]
        if len(payload) != CREATED_SIZE or payload[0] == 0:
            return
        err, task, module, loader, number = payload
        if (loader, number, err, task, module) in self.load_failures:
            return
        first = not any(f[:2] == (loader, number) for f in self.load_failures)
        self.load_failures.add((loader, number, err, task, module))
        if task == APPMGR_NO_TASK:
            what = eventlog.error_name(err)
        else:
            what = eventlog.appfail_text(err, task, module)
            if module in self.mods:
                what += f" '{self.mods[module].spec.name}'"
            else:
                ids = ", ".join(str(i) for i in sorted(self.mods))
                what += f", which this device does not have (its modules: {ids})"
        if what == "MT_ERR_TIMEOUT":
            # A give-up at the verdict deadline: the modules that had the
            # verdict already keep the application, the others undo it.
            self.note(f"m{tr.src.id} gave the application up (MT_ERR_TIMEOUT): the modules "
                      "still waiting for its verdict undo it, those that had it keep it",
                      tr.src.id)
        else:
            self.note(f"m{tr.src.id} refused the application: {what}; no module starts it",
                      tr.src.id)
        if first:
            self.failed_loads.append(f"m{tr.src.id}: {what}")

    def frame_triggers(self, tr):
        """Faults that a frame sets off as it reaches a receiver, before the
        receiver has it."""
        if len(tr.frame) < OVERHEAD or (tr.frame[0] & ~TYPE_RETRY) not in (1, 2):
            return
        pid, port = tr.frame[4], tr.frame[5]
        for i, f in enumerate(self.frame_faults):
            r = self.mods.get(f.module)
            if f.frame != (pid, port) or r not in tr.receivers or r.dead or tr.retry:
                continue
            self.frame_seen[i] += 1
            if self.frame_seen[i] == f.count:
                self.note(f"fault trigger: frame #{tr.id} ({self.frame_name(tr)}) is frame "
                          f"{f.count} for pid {pid:#04x} port {port} to reach m{r.id}", r.id)
                self.on_fault(f)

    def take_drop(self, r):
        """Whether a drop fault takes the frame on its way to r."""
        key = r.id if self.drop_left.get(r.id, 0) else None
        if not self.drop_left.get(key, 0):
            return False
        self.drop_left[key] -= 1
        return True

    def receive(self, r, tr):
        if self.take_drop(r):
            # Lost on the wire: r's interface sees no frame, so no
            # acknowledgement follows the frame's end, which the sender's
            # interface sees there and then (on_txend): the attempt ends as
            # not taken and the frame goes again in the sender's next slot,
            # each time it is lost. The ack timeout is for a receiver that
            # has the frame and does not answer (frozen, hung), not for this.
            tr.acks[r.id] = False
            self.counters["dropped"] += 1
            self.note(f"fault: frame #{tr.id} ({self.frame_name(tr)}) dropped on its way to "
                      f"m{r.id}: not delivered, no acknowledgement at its end; m{tr.src.id} "
                      f"sends it again in its next slot", r.id)
            return
        frame = bytearray(tr.frame)
        at = self.now
        left = self.corrupt_left.get(r.id, 0) or self.corrupt_left.get(None, 0)
        if left:
            key = r.id if self.corrupt_left.get(r.id, 0) else None
            self.corrupt_left[key] -= 1
            bit = self.rng.randrange(len(frame) * 8)
            frame[bit // 8] ^= 1 << (bit % 8)
            self.counters["corrupted"] += 1
            self.note(f"fault: frame #{tr.id} ({self.frame_name(tr)}) corrupted on its way to "
                      f"m{r.id}: bit {bit % 8} of byte {bit // 8} flipped", r.id)
        delay = self.delay_next.pop(r.id, 0) or self.delay_next.pop(None, 0)
        if delay:
            at += delay
            self.counters["delayed"] += 1
            self.note(f"fault: frame #{tr.id} ({self.frame_name(tr)}) to m{r.id} delayed by "
                      f"{delay / 1000:g} us", r.id)
        r.rx = tr
        r.rx_frames += 1
        r.rx_event = struct.pack("<BI", EV_RX, r.clock.stamp(at)) + bytes(frame)
        self.deliver(r, at, r.rx_event)

    def check_complete(self, tr, t):
        if tr.done:
            return
        waiting = [r for r in tr.receivers if r.id not in tr.acks and not r.dead
                   and not r.unresponsive]
        if waiting:
            return
        answered = [tr.acks[r.id] for r in tr.receivers if r.id in tr.acks]
        if not answered and tr.dst != BROADCAST:
            self.finish(tr, RESULT_UNREACHABLE, t)
        elif not all(answered):
            self.finish(tr, RESULT_REJECTED, t)
        else:
            self.finish(tr, RESULT_SENT, t)

    def busy_receiver(self, r, tr, t):
        """r answered busy: its interface keeps nothing and the frame stays in
        the sender's, which offers it again later; the sender is told nothing
        (it waits, like a sender behind a full receive buffer)."""
        self.counters["busy"] += 1
        if (tr.src.id, r.id, "busy") not in self.unreachable_noted:  # the first of a series
            self.unreachable_noted.add((tr.src.id, r.id, "busy"))
            self.note(f"m{r.id} answered frame #{tr.id} ({self.frame_name(tr)}) busy: offered "
                      f"again every {BUSY_RETRY_NS / 1e6:g} ms until taken (further busy "
                      f"answers of m{r.id} to m{tr.src.id} are only counted)", r.id, t)
        tr.attempt += 1
        tr.receivers, tr.acks, tr.started, tr.end = [], {}, None, None
        self.schedule_slot(tr, t + BUSY_RETRY_NS)

    def on_acktimeout(self, tr, attempt):
        if tr.done or attempt != tr.attempt:
            return
        for r in list(tr.receivers):
            if r.id in tr.acks or r.dead or r.unresponsive:
                continue
            if r.stalled:
                self.miss_frame(r, tr)
            else:
                self.mark_unresponsive(r, tr)
        self.check_complete(tr, self.now)

    def take_back_reception(self, r):
        """r did not answer the frame in its receive buffer in time: the
        frame went by its interface, which neither answered nor kept it.
        Stopped, as a processor held under a debugger, its reception,
        waiting for the module to run again, is taken back."""
        r.rx = None
        if r.frozen:
            r.outbox = [ev for ev in r.outbox if ev[8:] != r.rx_event]

    def miss_frame(self, r, tr):
        """A stalled r did not answer frame tr in time: this frame ends
        without it (a unicast as unreachable), and the next one to it waits
        its own acknowledgement timeout, as a bus that keeps no list of
        unresponsive receivers does."""
        self.take_back_reception(r)
        tr.receivers = [x for x in tr.receivers if x is not r]
        self.counters["stalled_misses"] += 1
        if (tr.src.id, r.id, "stalled") not in self.unreachable_noted:  # the first of a series
            self.unreachable_noted.add((tr.src.id, r.id, "stalled"))
            self.note(f"m{r.id} did not acknowledge frame #{tr.id} ({self.frame_name(tr)}) within "
                      f"{self.ack_timeout_ns / 1e6:g} ms: stalled, the frame ends without it; "
                      f"each later frame to it waits its own timeout (further ones from "
                      f"m{tr.src.id} are only counted)", r.id)

    def mark_unresponsive(self, r, tr):
        r.unresponsive = True
        self.take_back_reception(r)
        state = "frozen" if r.frozen else "silent"
        self.note(f"m{r.id} did not acknowledge frame #{tr.id} ({self.frame_name(tr)}) within "
                  f"{self.ack_timeout_ns / 1e6:g} ms: unresponsive ({state}); frames to it now "
                  f"fail as unreachable, broadcasts skip it", r.id)

    def finish(self, tr, result, t):
        tr.done = True
        if tr.src.tx is tr:
            tr.src.tx = None
        if result == RESULT_UNREACHABLE:
            self.counters["unreachable"] += 1
            if (tr.src.id, tr.dst) not in self.unreachable_noted:  # the first of a series
                self.unreachable_noted.add((tr.src.id, tr.dst))
                self.note(f"frame #{tr.id} ({self.frame_name(tr)}) is unreachable: m{tr.src.id} "
                          f"is told so (further ones are only counted)", tr.src.id, t)
        self.deliver(tr.src, t, struct.pack("<BB", EV_TX_DONE, result))

    # ---- power ----

    def wake(self, r, tr):
        r.power = "waking"
        self.counters["wakeups"] += 1
        wake_ns = round(r.spec.power.wake_us * 1000)
        self.note(f"m{r.id} is woken by frame #{tr.id} ({self.frame_name(tr)}); powered on in "
                  f"{wake_ns / 1000:g} us", r.id)
        self.push(self.now + wake_ns, "wakedone", r)

    def on_wakedone(self, r):
        if r.dead:
            return
        r.off_ns += self.now - r.off_since
        r.power = "on"
        r.granted_at = self.now
        self.note(f"m{r.id} is powered on", r.id)

    def power_off(self, m):
        m.off_pending = False
        self.account(m, self.now)
        m.power = "off"
        m.off_since = self.now
        self.note(f"m{m.id} is powered off (its clock runs on; a frame for it wakes it)", m.id)

    # ---- faults ----

    def on_fault(self, f):
        self.note(f"fault: {f.describe()}", f.module)
        m = self.mods.get(f.module) if f.module is not None else None
        if f.module is not None and (m is None or m.dead):
            self.note(f"fault ignored: no live module {f.module}")
            return
        if f.kind == "kill":
            m.exit_note = "killed by fault injection"
            self.note(f"m{m.id} killed: frames to it fail as unreachable, broadcasts skip it",
                      m.id)
            if m.proc and m.proc.poll() is None:
                if m.frozen:
                    os.kill(m.proc.pid, signal.SIGCONT)
                m.proc.kill()
            self.module_gone(m)
        elif f.kind in ("freeze", "pause", "stall"):
            if f.kind != "freeze" and m.kind.free_running:
                self.note(f"fault ignored: m{m.id} is an emulated core, whose clock cannot jump "
                          "the time it was stopped when it resumes", m.id)
                return
            m.frozen = True
            if m.proc and m.proc.poll() is None:
                os.kill(m.proc.pid, signal.SIGSTOP)
            if f.kind == "freeze":
                self.note(f"m{m.id} frozen: it runs no more; frames to it wait for its answer",
                          m.id)
            else:
                back = self.now + f.delay_ns
                m.stalled = f.kind == "stall"
                then = ("each frame to it waits its own acknowledgement timeout" if m.stalled
                        else "frames to it wait for its answer")
                self.note(f"m{m.id} {f.kind}ed until {back / 1e6:g} ms: it runs nothing "
                          f"meanwhile; {then}", m.id)
                self.push(back, "fault", Fault("resume", m.id, back))
        elif f.kind == "resume":
            self.resume(m)
        elif f.kind == "off":
            if m.power == "on":
                m.off_pending = True  # once it sleeps with its interface idle
                if m.blocked and m.sleeping and m.tx is None and m.rx is None:
                    self.power_off(m)
        elif f.kind == "corrupt":
            self.corrupt_left[f.module] = self.corrupt_left.get(f.module, 0) + f.count
        elif f.kind == "delay":
            self.delay_next[f.module] = f.delay_ns
        elif f.kind == "drop":
            self.drop_left[f.module] = self.drop_left.get(f.module, 0) + f.count

    def resume(self, m):
        """A stopped module runs again from where it stopped, its clock at
        the hub's time: it takes whatever fell due meanwhile late, as a
        processor held under a debugger would. Marked unresponsive while it
        was stopped, it is reachable again once it talks (message())."""
        if not m.frozen:
            self.note(f"fault ignored: m{m.id} is not stopped", m.id)
            return
        if m.kind.free_running:
            self.note(f"fault ignored: m{m.id} is an emulated core, whose clock cannot jump "
                      "the time it was stopped", m.id)
            return
        m.frozen = m.stalled = False
        m.watch_cpu = None
        if m.proc and m.proc.poll() is None:
            os.kill(m.proc.pid, signal.SIGCONT)
        self.note(f"m{m.id} resumed: it runs again, its clock at the hub's time", m.id)

    def forget_module(self, m):
        """A module died: nothing may wait for it any more. One that stops
        with the run (its end reached) ends nothing: a frame to it still on
        the wire was cut by the run's end, not unreachable."""
        m.rx = None
        if m.tx is not None:
            m.tx.done = True
            m.tx = None
        if self.end_reason is not None:
            return
        for tr in self.open_transfers():
            if m in tr.receivers:
                self.check_complete(tr, self.now)

    def open_transfers(self):
        seen = []
        for _, _, kind, data in self.heap:
            if kind in ("slot", "txend", "acktimeout") and not data[0].done:
                if data[0] not in seen:
                    seen.append(data[0])
        return seen

    # ---- probes: measuring the time-sync error ----

    def on_probe(self, pid):
        for m in self.mods.values():
            if m.live and m.power == "on" and m.id != self.reference:
                self.deliver(m, self.now, struct.pack("<BI", EV_PROBE, pid), probe=pid)

    def on_probe_answer(self, m, body):
        pid, local, estimate, synced = struct.unpack_from("<IIIB", body)
        when = self.probe_truth.pop((pid, m.id), None)
        if when is None or self.reference is None or not synced:
            return
        ref = self.mods[self.reference].clock
        truth = (ref.start + ref.exact(when)) % 2**32
        err = Fraction(estimate) - truth
        if err > 2**31:
            err -= 2**32
        elif err < -2**31:
            err += 2**32
        if when >= self.probe_warmup_ns:
            self.probes.append((when / 1e9, m.id, float(err)))

    def schedule_probes(self):
        if not self.probe_s or self.until_ns is None:
            return
        period = round(self.probe_s * 1e9)
        t = self.rng.randrange(period)
        pid = 1
        while t <= self.until_ns:
            self.push(t, "probe", pid)
            pid += 1
            t += period + self.rng.randrange(-period // 8, period // 8 + 1)

    # ---- the main loop ----

    def next_time(self):
        cands = [self.heap[0][0]] if self.heap else []
        for m in self.mods.values():
            if self.running_free(m):
                continue  # it goes on by itself: catch_up() moves it
            if m.live and m.blocked and m.power == "on" and m.want is not None:
                cands.append(max(m.clock.at(m.want), self.now))
        return min(cands) if cands else None

    # ---- emulated modules: lock-step ----

    MAX_QUANTUM_NS = 1_000_000  # a running core's grant when nothing else is due
    TAIL_LINES = 5  # the last lines of each module's output the hub keeps

    @staticmethod
    def running_free(m):
        """An emulated core that is computing: it may act at any tick."""
        return m.kind.free_running and m.live and m.blocked and m.power == "on" and not m.sleeping

    def own_slot(self, m, t):
        """The start of m's first own TDMA slot at or after t."""
        k = -(-t // self.slot_ns)
        k += (m.index - k) % len(self.mods)
        return k * self.slot_ns

    def horizon(self, m, limit):
        """How far the running core m may go before the hub processes time
        `limit` (None: nothing due). A frame it hands over can start no
        earlier than its next own slot and reaches its receivers a wire time
        later; granted no further, none of its frames can reach a module
        already past it, itself included (its own TX_DONE). With a frame in
        its interface it cannot hand over another before TX_DONE."""
        at = m.clock.at(m.granted)
        h = at + self.MAX_QUANTUM_NS if limit is None else limit
        if m.tx is None:
            h = min(h, self.own_slot(m, at) + self.lookahead_ns)
        # Another core computing may hand over a frame for m at any of its
        # ticks, unseen by the hub until it reports: m goes no further than
        # the earliest such frame could reach it (without this, a core whose
        # own frame waits for a busy receiver ran ahead of a computing peer,
        # and the peer's frame arrived in its past, late and unacknowledged).
        for o in self.mods.values():
            if o is not m and o.kind.free_running and o.live and o.power == "on" \
                    and not o.sleeping:
                h = min(h, self.own_slot(o, o.clock.at(o.granted)) + self.lookahead_ns)
        return h

    def catch_up(self, limit):
        """Grant every running emulated core up to its horizon (stopping
        short by the longest instruction, so that no instruction ends past
        a tick an event may be due at); True if one was granted: its
        reports come first, and may bring `limit` forward."""
        moved = False
        for m in sorted(self.mods.values(), key=lambda m: m.id):
            if not self.running_free(m):
                continue
            tick = m.clock.floor(self.horizon(m, limit)) - m.kind.overshoot_ticks(m.spec)
            if tick <= m.granted:
                continue
            m.granted = tick
            m.blocked = False
            m.grants += 1
            self.send(m, "G", struct.pack("<Q", tick))
            moved = True
        return moved

    def process_events(self):
        while self.heap and self.heap[0][0] <= self.now:
            _, _, kind, data = heapq.heappop(self.heap)
            if kind == "deliver":
                m, tick, body = data
                m.delivers_queued -= 1
                if not m.dead:
                    m.outbox.append(struct.pack("<Q", tick) + body)
            elif kind == "slot":
                self.on_slot(*data)
            elif kind == "txend":
                self.on_txend(*data)
            elif kind == "acktimeout":
                self.on_acktimeout(*data)
            elif kind == "wakedone":
                self.on_wakedone(*data)
            elif kind == "fault":
                self.on_fault(*data)
            elif kind == "probe":
                self.on_probe(*data)
            elif kind == "host":
                data[0](self)

    @staticmethod
    def core_time(m, tick, asleep):
        """An emulated core's busy and asleep time: from its own cycles
        (`asleep` of the `tick` it has run so far, the time it was powered
        off included), in device time."""
        slept = m.clock.at(asleep)
        m.core_ns = m.clock.at(tick)
        m.busy_ns = m.core_ns - slept
        m.sleep_ns = max(0, slept - m.off_ns)

    def account(self, m, until):
        if m.kind.free_running:
            # Its core counts its own cycles (core_time) up to its last
            # report; asleep then, it has slept on since.
            if m.sleeping and m.power == "on" and until > m.core_ns:
                m.sleep_ns += until - m.core_ns
                m.core_ns = until
            return
        span = until - m.granted_at
        if span > 0:
            if m.power != "on":
                pass  # counted when it comes back on
            elif m.sleeping:
                m.sleep_ns += span
            else:
                m.busy_ns += span
        m.granted_at = until

    def wake_modules(self):
        for m in sorted(self.mods.values(), key=lambda m: m.id):
            if not m.live or not m.blocked:
                continue
            due = m.power == "on" and m.want is not None and m.clock.at(m.want) <= self.now
            if m.power == "on" and m.want is not None and m.want < m.clock.floor(self.now):
                due = True  # powered on again after its wake-up time passed
            if self.running_free(m):
                due = False  # catch_up() grants it
            if not (m.outbox or due):
                continue
            tick = m.clock.floor(self.now)
            if not m.sleeping and m.want is not None and not m.kind.free_running:
                tick = min(tick, m.want)
            tick = max(tick, m.granted + 1)
            self.account(m, self.now)
            for ev in m.outbox:
                self.send(m, "E", ev)
            m.outbox.clear()
            m.granted = tick
            m.blocked = False
            m.grants += 1
            self.send(m, "G", struct.pack("<Q", tick))

    def run(self):
        """Run until the time limit, an idle device or an interrupt; returns
        the report (a dict)."""
        previous = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous[sig] = signal.signal(sig, self.request_stop)
            except ValueError:  # not the main thread: no signals here
                pass
        try:
            self.start()
            for f in self.faults:
                self.push(f.at_ns, "fault", f)
            for t_s, fn in self.host:
                self.host_at(round(t_s * 1e9), fn)
            self.schedule_probes()
            while True:
                self.wait_quiescent()
                if self.chip_reset:
                    self.end_reason = "watchdog reset"
                    break
                if self.module_ended:
                    self.end_reason = "module ended"
                    break
                self.check_interrupt()
                self.apply_inputs()
                self.flush_output()
                self.show_progress()
                n = self.next_time()
                limit = n  # how far running emulated cores may go first
                if self.until_ns is not None:
                    limit = self.until_ns + 1 if n is None else min(n, self.until_ns + 1)
                if self.catch_up(limit):
                    continue
                if n is None and self.until_ns is None:
                    self.end_reason = "idle: nothing scheduled on any module"
                    break
                if n is None:  # idle until the time limit: let it pass
                    self.note("idle: nothing scheduled on any module")
                    n = self.until_ns + 1
                if self.until_ns is not None and n > self.until_ns:
                    self.now = self.until_ns
                    self.end_reason = "time limit"
                    break
                if not any(m.live for m in self.mods.values()):
                    self.end_reason = "no module left running"
                    break
                self.now = n
                self.process_events()
                self.wake_modules()
        except (Interrupted, KeyboardInterrupt):
            self.end_reason = "interrupted"
        except Stuck:
            self.end_reason = "watchdog"
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return self.report()

    def note_faults_not_made(self):
        """A fault whose frame never came is said, not dropped unseen (the
        run waits for a timed one, and check_fault() refuses one timed
        after --until)."""
        for f, seen in zip(self.frame_faults, self.frame_seen):
            if seen < f.count:
                self.note(f"fault not made: {f.describe()}: {seen} such frame(s) reached "
                          f"m{f.module} in the run")

    def stop(self):
        """Tell every module the run is over, collect its counters, and make
        sure no process outlives the hub."""
        if self.end_reason is None:
            self.end_reason = "error"
        self.note_faults_not_made()
        if self.end_reason != "time limit":
            # Emulated cores run ahead of the hub within their grants (at
            # the time limit, to it): the device has reached the furthest.
            self.now = max([self.now] + [m.core_ns for m in self.mods.values()])
        for m in self.mods.values():
            m.final_state = ("killed" if m.exit_note.startswith(("killed", "stopped")) else
                             "exited" if m.dead else "frozen" if m.frozen else
                             "off" if m.power != "on" else "running")
            if m.dead or m.proc is None:
                continue
            self.account(m, self.now)
            if m.power != "on":
                m.off_ns += self.now - m.off_since
            if m.frozen and m.proc.poll() is None:
                os.kill(m.proc.pid, signal.SIGCONT)
        # A module that was running when we stopped gets QUIT once it asks
        # for time; each prints its counters and exits.
        quit_sent = set()
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            for m in self.mods.values():
                if not m.dead and m.blocked and m.id not in quit_sent:
                    quit_sent.add(m.id)
                    self.send(m, "Q", b"\x00")
            if not any(m.proc is not None and m.proc.poll() is None for m in self.mods.values()):
                break
            for key, _ in self.sel.select(timeout=0.1):
                what, m = key.data
                if what == "sock":
                    self.read_socket(m)
                elif what == "out":
                    self.drain_output(m)
        for m in self.mods.values():  # what they said before exiting
            while m.conn is not None and not m.dead:
                self.read_socket(m)
                if not m.dead:
                    break
        for m in self.mods.values():
            if m.proc is None:
                continue
            if m.proc.poll() is None:
                m.proc.kill()
                m.proc.wait()
            self.drain_output(m, final=True)
            for local, seq, mtype, body in m.inbox:
                if mtype == "K":
                    m.stats = dict(zip(STATS_FIELDS, struct.unpack_from(
                        f"<{len(STATS_FIELDS)}I", body)))
            m.inbox.clear()
            m.proc.stdout.close()
            if m.conn is not None:
                m.conn.close()
        self.sel.close()
        if self.listener is not None:
            self.listener.close()
        try:
            os.unlink(self.sock_path)
        except OSError as e:
            if e.errno != errno.ENOENT:
                raise
        self.note(f"stopped: {self.end_reason}")
        self.flush_output()
        if self.progress:
            sys.stderr.write("\r" + " " * 60 + "\r")

    # ---- the report ----

    def probe_summary(self):
        if not self.probes:
            return None
        errs = [e for _, _, e in self.probes]
        per = {}
        for _, mid, e in self.probes:
            per.setdefault(mid, []).append(e)
        rms = (sum(e * e for e in errs) / len(errs)) ** 0.5
        return {"count": len(errs), "max_abs_us": max(abs(e) for e in errs),
                "mean_us": sum(errs) / len(errs), "rms_us": rms, "reference": self.reference,
                "per_module": {str(k): {"count": len(v), "max_abs_us": max(abs(e) for e in v)}
                               for k, v in sorted(per.items())}}

    def report(self):
        mods = {}
        for m in sorted(self.mods.values(), key=lambda m: m.id):
            note = m.exit_note if m.final_state in ("killed", "exited") else ""
            mods[str(m.id)] = {
                "name": m.spec.name, "state": m.final_state, "note": note,
                "ppm": m.clock.ppm, "unresponsive": m.unresponsive,
                "frames_sent": m.tx_frames, "frames_received": m.rx_frames,
                "busy_s": m.busy_ns / 1e9, "sleep_s": m.sleep_ns / 1e9, "off_s": m.off_ns / 1e9,
                "energy_mj": m.energy_mj(), "kernel": m.stats, "kind": m.kind.name}
            if m.kind.free_running:
                mods[str(m.id)]["bus_events"] = {"delivered": m.delivered,
                                                 "max_late_ticks": m.max_late, "grants": m.grants,
                                                 "max_past_grant_ticks": m.past_grant}
        bus = dict(self.counters)
        bus["utilisation"] = bus["bus_busy_ns"] / self.now if self.now else 0.0
        bus["model"] = {"bandwidth_Bps": self.device.bus.bandwidth,
                        "slot_us": self.device.bus.slot_us,
                        "ack_timeout_us": self.device.bus.ack_timeout_us}
        return {"device": self.device.name, "seed": self.seed, "end_s": self.now / 1e9,
                "reason": self.end_reason, "bus": bus, "modules": mods,
                "events": self.events_log, "timesync": self.probe_summary(),
                "watchdog": self.watchdog, "chip_reset": self.chip_reset,
                "module_ended": self.module_ended, "module_exits": self.module_exits,
                "failed_loads": self.failed_loads,
                "links": [{"src": src, "dst": dst, "frames": n, "mean_us": total / n / 1e3,
                           "min_us": low / 1e3, "max_us": high / 1e3}
                          for (src, dst), (n, total, low, high)
                          in sorted(self.link_latency.items())]}


def summary_lines(report):
    """Human-readable lines of a report (what `motet run` prints last)."""
    b = report["bus"]
    types = ", ".join(f"{k} {v}" for k, v in sorted(b["by_type"].items())) or "none"
    lines = [f"bus: {b['frames']} frames ({types}), {b['bytes']} B, "
             f"{100 * b['utilisation']:.2f} % busy; {b['retransmissions']} retransmitted, "
             f"{b['rejected']} rejected, {b['corrupted']} corrupted, {b.get('dropped', 0)} dropped "
             f"and {b['delayed']} delayed by faults, {b['waits_busy_receiver']} waits for a busy receiver, "
             f"{b.get('busy', 0)} busy answers, {b.get('stalled_misses', 0)} frames ended "
             f"without a stalled receiver, "
             f"{b['wakeups']} wake-ups, {b['unreachable']} unreachable"]
    for mid, m in report["modules"].items():
        lines.append(f"m{mid} {m['name']}: {m['note'] or m['state']}"
                     f", clock {m['ppm']:+.3f} ppm, sent {m['frames_sent']} received "
                     f"{m['frames_received']}, busy {m['busy_s'] * 1e3:.3f} ms, asleep "
                     f"{m['sleep_s']:.3f} s, off {m['off_s']:.3f} s, {m['energy_mj']:.3f} mJ")
    ts = report.get("timesync")
    if ts:
        lines.append(f"timesync: {ts['count']} probes against m{ts['reference']}: max |error| "
                     f"{ts['max_abs_us']:.2f} us, rms {ts['rms_us']:.2f} us, mean "
                     f"{ts['mean_us']:+.2f} us")
    return lines


def write_report(report, path):
    with open(path, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
