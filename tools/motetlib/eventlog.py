# SPDX-License-Identifier: MIT
"""Event-log dumps: parsing, a readable table, and Chrome trace JSON export.

The dump format
---------------

A native Motet program started with `--log FILE` writes the kernel's event
log (kernel/include/motet/log.h) to FILE as text, one record per line:

    EV <time_us> <TYPE> <pid> <arg>

  time_us  time of the event in microseconds of the module's clock (decimal
           integer; simulated or real time, whichever the module runs on)
  TYPE     the event name from log_type_name(): SEND START END ALLOC FREE
           TIMER SLEEP WAKE ERROR CREATE KILL MIGRATE BUS RUN APPFAIL BAD_FRAME
           BUS_LOST BUS_GAP BUDGET DISAGREE UNSENT UNTRACKED INITFAIL
  pid      task id, decimal or 0x-hex (0 = the kernel itself)
  arg      16-bit argument, decimal or 0x-hex; its meaning depends on TYPE:
           SEND: destination pid << 8 | input port; START, END: input port
           (an END's is 255, shown as ?, when its START was overwritten in
           the kernel's ring before the host drained it);
           ALLOC, FREE: bytes; TIMER: timer index; SLEEP: sleep mode;
           ERROR: mt_err_t code; CREATE: priority; KILL: the task's
           messages dropped (queued, or held for its INIT); MIGRATE: phase << 8 |
           the other module (migrate_phase_t, migrate.h); BUS: frame bytes, bit 15 set for a frame received
           (clear: sent), pid = the frame's destination task or virtual pid;
           RUN: sender pid << 8 | input port, pid = the receiver;
           APPFAIL: mt_err_t << 8 | module, pid = the relative pid (in its
           description) of the task an application load failed for; the
           application manager logs it, so the table puts it under appmgr
           BAD_FRAME: sending module << 8 | frame type, pid = the sending
           task, of a frame dropped as malformed (docs/bus.md);
           BUS_LOST: destination module (255: all) << 8 | frame type, pid =
           the sending task, of a message its module gave up; BUS_GAP:
           sending module << 8 | frames missed, pid = the task that sent the
           frame after the gap, logged by a receiver whose sequence numbers
           from that module skipped (docs/bus.md)
           BUDGET: milliseconds the task (pid) had run when the compare
           interrupt found it past its run budget (timer_set_budget())
           DISAGREE: loader module << 8 | the loader's number for the load,
           pid = a module that failed that load after it committed here
           (the device disagrees, docs/bus.md); the error follows in an
           ERROR record; the application manager logs it, as APPFAIL
           UNSENT: loader module << 8 | the loader's number for a load
           this module failed, whose failure broadcast a full transmit
           queue refused or the bus gave up, and which is dropped unsent
           (docs/bus.md)
           UNTRACKED: loader module << 8 | the loader's number for a load
           this module failed, whose failure a newer one replaced while
           copies of it were still to go, and which is followed no more
           (MOTET_BUS_FOLLOWED earlier failures were followed already):
           whether it reached every module is not known (docs/bus.md)
           INITFAIL: mt_err_t the task's (pid) PORT_INIT handler returned:
           the task ends there, never initialised (no FINAL); its KILL
           follows. For one of the kernel's own tasks (pid 0xF0 and up:
           the application manager, the migrator) the error of its INIT
           or of its creation: the module halts there (status 5), no KILL

A RUN record is a send whose receiver started at once (rule 1's fast
path): the kernel writes one record for the two events, and parse() gives
it back as the SEND and the START it stands for, at its time. Likewise a
TIMER record of a task's timer (pid not 0) is the expiry and the timeout
message it posts: parse() gives it back as the TIMER and a SEND from the
kernel (pid 0) to the owner's port TIMEOUT<index>. A kernel timer (pid 0,
threads) posts nothing and stays a bare TIMER.

Three more line kinds are understood:

    LOST <count>     the ring overwrote <count> of its slots before they
                     were drained (log_overruns()); a slot holds one record
                     or more (a RUN, an END with its ERROR, the START of an
                     expiry run at the interrupt's exit), so more records
                     than that may be missing; shown as a gap
    SLOT <time_ns> <type> <pid> <arg>
                     a slot of the kernel's ring as an emulated chip wrote
                     it, taken from the chip's memory by its emulator (the
                     simavr harness's --log, qemu_module.py's --log) at the
                     instant written: time_ns in nanoseconds of the chip's
                     clock (exact cycles: 125 ns at 8 MHz, 16 ns at 62.5
                     MHz), type the log_event_type_t number, arg as the slot
                     holds it. parse() turns slots into the records the
                     kernel's drain would have given (log.c): an END's
                     argument is the handler's result there, its port that
                     of the START it closes, and a failure also an ERROR; a
                     START's high byte, START_EXPIRY, marks a task timer's
                     expiry run first at the interrupt's exit, whose TIMER
                     the slot stands for too (then its SEND, as above).
                     Their time_us is fractional.
    # anything       a comment

Every other line (a program's ordinary output) is ignored, so a dump may be
interleaved with console text. A line that starts with `EV` but does not
have the five fields above is an error, reported with its line number.
A dump is UTF-8 text (a byte that is not is an error naming its line and
column), and a file a user names (`motet log`, `motet profile --logs`)
has the header every writer puts first, `# motet event log, ...`, or at
least one record: an empty or cut-off file, or another file, is an error
naming it, never an empty log.

Example:

    EV 125000 START 16 4
    EV 125000 SEND 16 4616
    EV 125003 END 16 4

Chrome trace export: START and END of a task become a "B"/"E" duration pair
on that task's track (tid = pid), every other record an instant event. The
JSON opens in https://ui.perfetto.dev and chrome://tracing.
"""

import json
from dataclasses import dataclass, replace
from pathlib import Path

from .textfile import utf8_text

EVENT_TYPES = ("SEND", "START", "END", "ALLOC", "FREE", "TIMER", "SLEEP", "WAKE", "ERROR",
               "CREATE", "KILL", "MIGRATE", "BUS", "RUN", "APPFAIL", "BAD_FRAME",
               "BUS_LOST", "BUS_GAP", "BUDGET", "DISAGREE", "UNSENT",
               "UNTRACKED", "INITFAIL")

# Input ports (kernel/include/motet/sched.h): system ports, then PORT_0 ...
SYSTEM_PORTS = ("INIT", "FINAL", "SERIALIZE", "DESERIALIZE", "TIMEOUT0", "TIMEOUT1",
                "TIMEOUT2", "TIMEOUT3")

# An END's port when its START was lost to a ring overrun (LOG_PORT_UNKNOWN, log.h).
PORT_UNKNOWN = 0xFF

# A timer's timeout port: PORT_TIMEOUT0 + its index.
PORT_TIMEOUT0 = SYSTEM_PORTS.index("TIMEOUT0")

# A START slot's high byte for a task timer's expiry run first at the
# interrupt's exit: the slot is its TIMER and its START (LOG_START_EXPIRY,
# kernel/src/log_ring.h).
START_EXPIRY = 0x04

# mt_err_t in order (kernel/include/motet/types.h).
ERRORS = ("MT_OK", "MT_ERR_INVALID", "MT_ERR_NO_TASK", "MT_ERR_NO_PORT", "MT_ERR_QUEUE_FULL",
          "MT_ERR_NO_MEM", "MT_ERR_NO_SLAB", "MT_ERR_NO_TIMER", "MT_ERR_DOUBLE_FREE",
          "MT_ERR_BAD_POINTER", "MT_ERR_EXISTS", "MT_ERR_STATE", "MT_ERR_NO_PROGRAM",
          "MT_ERR_NO_ROUTE", "MT_ERR_DESC_HEADER", "MT_ERR_DESC_LENGTH", "MT_ERR_DESC_TASK",
          "MT_ERR_DESC_ROUTE", "MT_ERR_DESC_GROUP", "MT_ERR_DESC_CHECKSUM",
          "MT_ERR_BUS_CORRUPT", "MT_ERR_BUS_DOWN", "MT_ERR_NOT_MOVABLE", "MT_ERR_NOT_OWNER",
          "MT_ERR_NO_MODULE", "MT_ERR_BUS_LOST", "MT_ERR_TIMEOUT", "MT_ERR_FULL",
          "MT_ERR_OWNER_DEAD", "MT_ERR_STACK")

SLEEP_MODES = ("IDLE", "DEEP", "NONE_DUE")

# Bus frame types (kernel/include/motet/bus.h): BAD_FRAME's arg & 0xFF.
FRAME_TYPES = ("?", "DATA", "MCAST", "SYNC", "DESC", "CREATED", "ASK")

# migrate_phase_t (kernel/include/motet/migrate.h): EV_MIGRATE's arg >> 8.
MIGRATE_PHASES = ("?", "REQUESTED", "FROZEN", "ATTACHED", "LEFT", "LIVE", "RESUMED",
                  "DISCARDED", "KILLED", "REFUSED", "DONE", "LOST")

# Reserved pids (types.h). tests/tools/test_eventlog_header.py checks every
# constant here that mirrors the C side against its header.
PID_NAMES = {0x00: "kernel", 0xF0: "multicast", 0xF1: "timesync", 0xF2: "migrator",
             0xF3: "appmgr"}


# MT_PID_SYSTEM: the first of the pids the kernel's own tasks and addresses take.
SYSTEM_PID_FIRST = 0xF0

# MT_PID_NONE: the kernel, an interrupt (a SEND's sender), or a kernel timer's owner.
KERNEL_PID = 0x00

# MT_PID_APPMGR: who writes APPFAIL records (their pid field is a relative
# pid) and DISAGREE records (theirs is a module).
APPMGR_PID = 0xF3


# EV_END's number in log_event_type_t: EVENT_TYPES starts at EV_SEND = 1.
def _type_number(name):
    return EVENT_TYPES.index(name) + 1


class LogFormatError(ValueError):
    """A malformed `EV` line; the message names the file and line."""


@dataclass(frozen=True)
class Event:
    time_us: int
    type: str
    pid: int
    arg: int
    line: int = 0


@dataclass(frozen=True)
class Lost:
    """A LOST line: `count` ring slots overwritten before they were drained."""
    count: int
    line: int = 0


def _int(text, what, where):
    try:
        value = int(text, 0)
    except ValueError:
        raise LogFormatError(f"{where}: {what} {text!r} is not an integer") from None
    if value < 0:
        raise LogFormatError(f"{where}: {what} {value} is negative")
    return value


@dataclass(frozen=True)
class Slot:
    """A raw ring slot (a SLOT line); Slots turns it into records."""
    time_ns: int
    type: int
    pid: int
    arg: int
    line: int = 0


class Slots:
    """The kernel drain's reading of slots (kernel/src/log.c): an END slot
    holds its handler's result, and its port is that of the newest open
    START or RUN of its task; a result other than MT_OK is an ERROR too. A
    START slot's arg is its port, with START_EXPIRY in the high byte for
    the START of a task timer's expiry run first at the interrupt's exit,
    which stands for the expiry's TIMER too (kernel/src/log_ring.h).
    Stateful: the slots of one log, in order."""

    END, START, RUN = _type_number("END"), _type_number("START"), _type_number("RUN")

    def __init__(self):
        self.open = []  # (pid, port) of the handlers begun and not ended

    def records(self, slot):
        t = Event(slot.time_ns / 1000, EVENT_TYPES[slot.type - 1], slot.pid, slot.arg, slot.line)
        if slot.type in (self.START, self.RUN):  # a START's arg is its port, a RUN's low byte
            port = slot.arg & 0xFF
            self.open.append((slot.pid, port))
            if slot.type != self.START:
                return [t]
            start = replace(t, arg=port)
            if slot.arg >> 8 == START_EXPIRY:
                return [replace(t, type="TIMER", arg=port - PORT_TIMEOUT0), start]
            return [start]
        if slot.type != self.END:
            return [t]
        port = PORT_UNKNOWN
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i][0] == slot.pid:
                port = self.open[i][1]
                del self.open[i:]
                break
        out = [replace(t, arg=port)]
        if slot.arg:
            out.append(replace(t, type="ERROR", arg=slot.arg))
        return out


def parse_line(line, where="<line>"):
    """An Event, a Lost, a Slot, or None for a line that is not a record."""
    fields = line.split()
    if not fields:
        return None
    if fields[0] == "SLOT":
        if len(fields) != 5:
            raise LogFormatError(f"{where}: expected 'SLOT <time_ns> <type> <pid> <arg>', "
                                 f"got {line.strip()!r}")
        time_ns, etype, pid, arg = (_int(f, what, where) for f, what in
                                    zip(fields[1:], ("time", "type", "pid", "arg")))
        if not 1 <= etype <= len(EVENT_TYPES):
            raise LogFormatError(f"{where}: slot type {etype} is not an event type "
                                 f"(1 .. {len(EVENT_TYPES)})")
        if pid > 0xFF:
            raise LogFormatError(f"{where}: pid {pid} does not fit in 8 bits")
        if arg > 0xFFFF:
            raise LogFormatError(f"{where}: arg {arg} does not fit in 16 bits")
        return Slot(time_ns, etype, pid, arg)
    if fields[0] == "EV":
        if len(fields) != 5:
            raise LogFormatError(f"{where}: expected 'EV <time_us> <TYPE> <pid> <arg>', "
                                 f"got {line.strip()!r}")
        time_us = _int(fields[1], "time", where)
        etype = fields[2].upper()
        if etype not in EVENT_TYPES:
            raise LogFormatError(f"{where}: unknown event type {fields[2]!r} "
                                 f"(known: {' '.join(EVENT_TYPES)})")
        pid = _int(fields[3], "pid", where)
        arg = _int(fields[4], "arg", where)
        if pid > 0xFF:
            raise LogFormatError(f"{where}: pid {pid} does not fit in 8 bits")
        if arg > 0xFFFF:
            raise LogFormatError(f"{where}: arg {arg} does not fit in 16 bits")
        return Event(time_us, etype, pid, arg)
    if fields[0] == "LOST":
        if len(fields) != 2:
            raise LogFormatError(f"{where}: expected 'LOST <count>', got {line.strip()!r}")
        return Lost(_int(fields[1], "count", where))
    return None


def error_name(code):
    return ERRORS[code] if code < len(ERRORS) else f"error {code}"


def appfail_text(err, task, module):
    """What an APPFAIL record (or a CREATED frame's outcome) says, in words."""
    return f"{error_name(err)}: task {task} (relative pid) on module {module}"


def owner(rec):
    """The pid of the task a record belongs to (an APPFAIL's pid field is a
    relative pid in a description, a DISAGREE's a module; the record is the
    manager's)."""
    return APPMGR_PID if rec.type in ("APPFAIL", "DISAGREE") else rec.pid


def expand(rec):
    """The events a record stands for: a RUN is its SEND and its START, a
    task timer's TIMER is itself and the SEND of its timeout message."""
    if isinstance(rec, Event) and rec.type == "RUN":
        sender, port = rec.arg >> 8, rec.arg & 0xFF
        return [replace(rec, type="SEND", pid=sender, arg=rec.pid << 8 | port),
                replace(rec, type="START", arg=port)]
    if isinstance(rec, Event) and rec.type == "TIMER" and rec.pid != KERNEL_PID:
        port = PORT_TIMEOUT0 + rec.arg
        return [rec, replace(rec, type="SEND", pid=KERNEL_PID, arg=rec.pid << 8 | port)]
    return [rec]


def _records(rec, slots):
    """The events a parsed line stands for (a Slot read by `slots`)."""
    if isinstance(rec, Slot):
        return [e for r in slots.records(rec) for e in expand(r)]
    return expand(rec)


def parse(text, name="<log>"):
    """All events of a dump, in file order (RUN records expanded, SLOT
    lines read as the kernel's drain would)."""
    records, slots = [], Slots()
    for n, line in enumerate(text.splitlines(), 1):
        rec = parse_line(line, f"{name}:{n}")
        if rec is not None:
            records.extend(_records(replace(rec, line=n), slots))
    return records


# The first line of every writer's log (ports/native/event_dump.c, the
# simavr harness's logtap.c, qemu_module.py).
HEADER = "# motet event log"


def parse_bytes(data, name="<log>", *, named=False):
    """The records of a dump's bytes (parse()); LogFormatError naming the
    line and column of a byte that is not UTF-8. `named`: a file the user
    named as a log, which must have the header or a record (a module's own
    log, read by a tool after its run, may have neither: a module stopped
    before its first write leaves its file empty)."""
    try:
        text = utf8_text(data, name)
    except ValueError as e:
        raise LogFormatError(f"{e}; an event log is text") from None
    records = parse(text, name)
    if named and not records and not text.startswith(HEADER):
        what = "empty" if not text.strip() else "cut off or not an event log"
        raise LogFormatError(f"{name}: {what}: no '{HEADER}' header and no record "
                             "(EV <time_us> <TYPE> <pid> <arg>)")
    return records


def read(path, *, named=False):
    """The records of the dump at `path` (parse_bytes())."""
    with open(path, "rb") as f:
        return parse_bytes(f.read(), str(path), named=named)


class Tail:
    """The records of a log that a running module is still writing, read
    as they come: each new() returns those of the lines completed since the
    last call (a native module writes its records whenever it goes to
    sleep; ports/native/event_dump.c). A file not there yet has none."""

    def __init__(self, path):
        self.path = Path(path)
        self.offset = 0
        self.lines = 0
        self.slots = Slots()

    def new(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        done = data[:data.rfind(b"\n") + 1]  # a line still being written waits
        self.offset += len(done)
        records = []
        for line in done.decode("utf-8", errors="replace").splitlines():
            self.lines += 1
            rec = parse_line(line, f"{self.path}:{self.lines}")
            if rec is not None:
                records.extend(_records(replace(rec, line=self.lines), self.slots))
        return records


# ---- readable table --------------------------------------------------------

def pid_name(pid):
    if pid in PID_NAMES:
        return PID_NAMES[pid]
    return f"0x{pid:02x}"


def port_name(port):
    if port == PORT_UNKNOWN:
        return "?"
    if port < len(SYSTEM_PORTS):
        return SYSTEM_PORTS[port]
    return f"P{port - len(SYSTEM_PORTS)}"


def describe(ev):
    """Human-readable meaning of an event's argument."""
    t, a = ev.type, ev.arg
    if t == "SEND":
        return f"-> {pid_name(a >> 8)} {port_name(a & 0xFF)}"
    if t in ("START", "END"):
        return port_name(a)
    if t == "RUN":  # parse() expands it; a bare parse_line() may hand one in
        return f"{pid_name(a >> 8)} -> {port_name(a & 0xFF)}, at once"
    if t in ("ALLOC", "FREE"):
        return f"{a} B"
    if t == "TIMER":
        return f"timer {a}"
    if t == "SLEEP":
        return SLEEP_MODES[a] if a < len(SLEEP_MODES) else f"mode {a}"
    if t == "ERROR":
        return error_name(a)
    if t == "APPFAIL":
        return "application not loaded: " + appfail_text(a >> 8, ev.pid, a & 0xFF)
    if t == "CREATE":
        return f"prio {a}"
    if t == "MIGRATE":
        phase = a >> 8
        name = MIGRATE_PHASES[phase] if phase < len(MIGRATE_PHASES) else f"phase {phase}"
        return f"{name} m{a & 0xFF}"
    if t == "BUS":
        return f"{'received' if a & 0x8000 else 'sent'} {a & 0x7FFF} B frame"
    if t == "KILL":
        return f"ended, {a} message(s) dropped" if a else "ended"
    if t == "INITFAIL":
        if ev.pid >= SYSTEM_PID_FIRST:
            return f"could not start ({error_name(a)}): the module halts"
        return f"its INIT failed ({error_name(a)}): ended, no FINAL"
    if t == "BUDGET":
        return f"over its run budget: running for {a} ms"
    if t == "DISAGREE":
        return (f"load {a & 0xFF} of m{a >> 8}, committed here, failed on m{ev.pid}: "
                "the device disagrees")
    if t == "UNSENT":
        return (f"our failure of load {a & 0xFF} of m{a >> 8} never sent: "
                "the queue was full or the bus gave it up")
    if t == "UNTRACKED":
        return (f"our failure of load {a & 0xFF} of m{a >> 8} followed no more: "
                "too many newer failures; whether it reached every module is not known")
    if t == "BAD_FRAME":
        kind = FRAME_TYPES[a & 0xFF] if (a & 0xFF) < len(FRAME_TYPES) else f"type {a & 0xFF}"
        return f"{kind} frame from m{a >> 8} dropped"
    if t == "BUS_LOST":
        kind = FRAME_TYPES[a & 0xFF] if (a & 0xFF) < len(FRAME_TYPES) else f"type {a & 0xFF}"
        dst = "all" if a >> 8 == 0xFF else f"m{a >> 8}"
        return f"{kind} frame to {dst} given up"
    if t == "BUS_GAP":
        return f"{a & 0xFF} frame(s) from m{a >> 8} missed"
    return "" if a == 0 else str(a)


def format_table(records):
    """The dump as aligned text lines; handlers nested on the stack are
    indented (START/END pairs, up to three levels)."""
    lines = [f"{'time (ms)':>12}  {'event':<14} {'task':<10} detail"]
    depth = 0
    for rec in records:
        if isinstance(rec, Lost):
            lines.append(f"{'':>12}  ... {rec.count} slots lost (log ring overrun) ...")
            continue
        if rec.type == "END":
            depth = max(0, depth - 1)
        event = "  " * min(depth, 3) + rec.type
        lines.append(f"{rec.time_us / 1000:>12.3f}  {event:<14} "
                     f"{pid_name(owner(rec)):<10} {describe(rec)}".rstrip())
        if rec.type == "START":
            depth += 1
    events = sum(1 for r in records if isinstance(r, Event))
    lost = sum(r.count for r in records if isinstance(r, Lost))
    lines.append(f"{events} events" + (f", {lost} slots lost" if lost else ""))
    return lines


# ---- Chrome trace JSON -----------------------------------------------------

MODULE_PID = 0  # the Chrome "process" of a single dump


def _chrome_events(records, pid, module_name, task_names):
    """(trace events, unmatched ENDs dropped) of one module's records as
    Chrome process `pid`: B/E per task (tid = task pid), instants for the
    rest. task_names: {task pid: name} for the tracks and slices."""
    names = {**PID_NAMES, **(task_names or {})}
    events = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
               "args": {"name": module_name}},
              {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
               "args": {"sort_index": pid}}]
    open_starts = {}
    tids = set()
    dropped = 0
    last_time = 0
    for rec in records:
        if isinstance(rec, Lost):
            events.append({"ph": "i", "s": "p", "name": f"LOST {rec.count}", "pid": pid,
                           "tid": 0, "ts": last_time})
            continue
        last_time = rec.time_us
        tids.add(owner(rec))
        base = {"pid": pid, "tid": owner(rec), "ts": rec.time_us}
        if rec.type == "START":
            open_starts[rec.pid] = open_starts.get(rec.pid, 0) + 1
            name = port_name(rec.arg)
            if rec.pid in (task_names or {}):
                name = f"{task_names[rec.pid]} {name}"
            events.append({**base, "ph": "B", "name": name, "cat": "task",
                           "args": {"port": rec.arg}})
        elif rec.type == "END":
            if open_starts.get(rec.pid, 0) == 0:
                dropped += 1
                continue
            open_starts[rec.pid] -= 1
            events.append({**base, "ph": "E"})
        else:
            events.append({**base, "ph": "i", "s": "t", "name": rec.type, "cat": "kernel",
                           "args": {"arg": rec.arg, "detail": describe(rec)}})
    for tid in sorted(tids):
        label = names.get(tid, f"task {tid:#04x}")
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                       "args": {"name": label}})
    return events, dropped


def to_chrome(records, module_name="module 0"):
    """A Chrome trace (dict) of the records: B/E per task, instants for the rest.

    An END without a START (its START was lost to an overrun or predates the
    dump) is dropped; a START without END stays open, which viewers show as
    running to the end of the trace."""
    events, dropped = _chrome_events(records, MODULE_PID, module_name, None)
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"source": "motet log", "unmatched_end_dropped": dropped}}


def to_chrome_device(modules):
    """One Chrome trace of a whole device: `modules` is a list of
    (module id, module name, records, {task pid: task name}); each module is
    a process (pid = its id), each task a track in it, named. The modules'
    times go in as they are, so they line up only if the clocks were
    exact (`motet run --exact-clocks`, or a device file that says so)."""
    events, dropped = [], 0
    for mid, name, records, task_names in modules:
        evs, d = _chrome_events(records, mid, name, task_names)
        events += evs
        dropped += d
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"source": "motet device logs", "unmatched_end_dropped": dropped}}


def write_chrome(records, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(to_chrome(records), f, indent=1)
        f.write("\n")
