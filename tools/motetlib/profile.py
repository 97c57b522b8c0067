# SPDX-License-Identifier: MIT
"""Task costs for `motet plan`: the profile file, and making one from
device runs' event logs.

The format (TOML; every figure per period of the application, the period
the profile was measured with):

    [profile]
    app = "ssl_device"            # the description's [app] name
    period_ms = 250.0             # one period: what "per period" means

    [measured]                    # where each processor kind's cycles come
    msp430 = "..."                # from, in words (required for each kind
    arm7 = "..."                  # a task has cycles for)

    [[task]]
    name = "sc0"
    messages = 1.5                # messages it handles per period
    ram_bytes = 40                # what it allocates up to the end of INIT
    cycles = { msp430 = 31000.0, arm7 = 2900.0 }
                                  # per message handled, by processor kind

    [[route]]                     # one per output port whose traffic is known
    from = "sc0"
    port = 1                      # the sender's output port
    messages = 0.5                # messages along it per period
    bytes = 672                   # bus frame bytes per message (header and
                                  # CRC included), when it crossed the bus

    [[workload]]                  # a task whose cost per item of work is
    task = "ht"                   # linear in the item's size (optional)
    port = 0                      # the output port whose message ends an item
    per_period = 0.75             # items per period over the window
    mean_size = 143.2             # their mean size there
    base = { arm7 = 90000.0 }     # a: cycles of the handler ending an item,
    per_unit = { arm7 = 15000.0 } # b: + b per unit of size, by kind
    samples = { arm7 = 21 }       # handlers the fit had

A kind missing from a task's cycles means "never measured there": the
planner does not place the task on such a module and says why.

A workload says what a task's cycles per period become when its input
differs from the window's: n items per period of mean size E cost
n * (a + b * E) in the handlers that end them, against per_period *
(a + b * mean_size) in the window, and the rest of its messages as
measured (with_workload). For the SSL application the task is HT, an item
a located block (the handler that sends the direction) and its size the
cross-spectrum entries it kept, which the radio prints (`entries=`).

`motet profile APP.toml DEVICE.toml --period-ms P -o OUT.toml` measures
one: it runs the device (`motet run`, simulated time) with the application
placed as APP.toml says, then with every movable task on a module of
another processor kind, then, if a route with a movable end has not yet
crossed the bus, with those routes split, each run handing the module
program the placed description (`--app-file FILE.bin`, which every module
program built on module_main() reads, ssl_device too; --desc-option changes
it), and reads every module's event log
(eventlog.py). Per task, the cycles of a message are the handler's own
time (START to END less the handlers that preempted it) times the clock of
its module's processor, averaged over the handlers that started inside the
window (--warmup .. --until), per input port, then weighted by the ports'
share of the task's messages in the first run; INIT and the other system
ports are left out.
Messages per period (per task and per route) come from the first run only,
the placement as described: a variant may overload a module.
On the native port simulated time advances only by what the module program
charges for its work, so these are the program's cost model's cycles for
that processor, not the kernel's: the file says so per kind. A message to
another module is a BUS record, whose size is the frame's; it is credited to
the module's task that routes to that destination (a multicast frame: that
has a group route) and ran last before it.
`--logs DIR` reads logs of a run made by hand (`motet run DEVICE.toml
--log-dir DIR`, the application placed as APP.toml) instead.

`--fit TASK:PORT` fits a workload: every handler of TASK that sends on
output PORT ends an item; the k-th such handler of a run (in time order)
is paired with the k-th line of the run's output that --fit-size (a
regular expression with one group, default `entries=(\\d+)`) matches, whose
group is the item's size; a and b per processor kind are the least-squares
line (numpy) through (size, the handler's own cycles) over the handlers
that started inside the window, of every run. With --logs, the output is
read from DIR/output.txt (what `motet run` printed).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import sys
import tempfile
import tomllib
from pathlib import Path

from . import appc_text, appplace, build, cmdline, device as devmod, eventlog, fields, run_device
from .textfile import toml_text

KERNEL_PID = 0  # the owner of the kernel's heap blocks in ALLOC records
FIRST_APP_PID = 0x10  # MT_PID_FIRST_APP: relative pid 0 is pid 0x10
MULTICAST_PID = 0xF0
PORT_INIT = 0
PORT_TIMEOUT0 = eventlog.PORT_TIMEOUT0
APP_PORT_0 = 8  # PORT_0


PERIOD_MS = (0.001, 3.6e6)  # a profile's period: 1 us .. 1 hour
DEFAULT_SIZE_RE = r"entries=(\d+)"  # --fit-size: the SSL radio's direction line


class ProfileError(Exception):
    """A profile that cannot be used or made; the message says where."""


@dataclasses.dataclass(frozen=True)
class TaskCost:
    name: str
    messages: float
    ram_bytes: int
    cycles: dict  # processor kind -> cycles per message


@dataclasses.dataclass(frozen=True)
class RouteCost:
    src: str
    port: int
    messages: float
    bytes: float | None  # None: never crossed the bus when measured


@dataclasses.dataclass(frozen=True)
class WorkloadCost:
    task: str
    port: int  # the output port whose message ends an item
    per_period: float  # items per period in the profile's window
    mean_size: float  # their mean size there
    base: dict  # kind -> a, cycles of a handler that ends an item of size 0
    per_unit: dict  # kind -> b, cycles per unit of an item's size
    samples: dict  # kind -> handlers fitted

    def item_cycles(self, kind, per_period, mean_size):
        """Cycles per period of the handlers ending items on `kind`."""
        return per_period * (self.base[kind] + self.per_unit[kind] * mean_size)


@dataclasses.dataclass(frozen=True)
class Profile:
    app: str
    period_ms: float
    measured: dict  # kind -> where its figures come from
    tasks: dict  # name -> TaskCost
    routes: dict  # (src, port) -> RouteCost
    path: str = "<profile>"
    workloads: dict = dataclasses.field(default_factory=dict)  # task -> WorkloadCost

    def route(self, src: str, port: int) -> RouteCost:
        return self.routes.get((src, port), RouteCost(src, port, 0.0, None))


# ---- reading -----------------------------------------------------------------

def _field(table, key, types, where, default=None):
    if key not in table:
        if default is None:
            raise ProfileError(f"{where}: missing '{key}'")
        return default
    v = table[key]
    if isinstance(v, bool) or not isinstance(v, types):
        raise ProfileError(f"{where}: '{key}' must be "
                           f"{'a number' if float in types else 'an integer'}"
                           f"{'' if str not in types else ' or a string'}, got {v!r}")
    return v


def _figure(table, key, where, lo=0.0, hi=1e15, default=None, integral=False):
    v = _field(table, key, (int,) if integral else (int, float), where, default)
    return fields.bounded(v, key, where, lo, hi, "", ProfileError)


def _unknown(table, known, where):
    fields.unknown(table, known, where, ProfileError)


def _tables(doc, key, path):
    """doc[key] as the array of tables [[key]] it must be (absent: none)."""
    value = doc.get(key, [])
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise ProfileError(f"{path}: '{key}' must be [[{key}]] tables")
    return value


def parse(text: str, path: str = "<profile>", app: appplace.App | None = None) -> Profile:
    """A validated Profile; with `app`, checked against its tasks and routes."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{path}: not valid TOML: {e}") from None
    _unknown(doc, ("profile", "measured", "task", "route", "workload"), path)
    head = doc.get("profile")
    if not isinstance(head, dict):
        raise ProfileError(f"{path}: missing [profile]")
    _unknown(head, ("app", "period_ms"), f"{path} [profile]")
    name = head.get("app")
    if not isinstance(name, str):
        raise ProfileError(f"{path} [profile]: 'app' must be the application's name")
    period = _figure(head, "period_ms", f"{path} [profile]", *PERIOD_MS)
    measured = doc.get("measured", {})
    if not isinstance(measured, dict) or not all(isinstance(v, str) for v in measured.values()):
        raise ProfileError(f"{path} [measured]: each kind must be a string saying where its "
                           "figures come from")
    tasks = {}
    for i, t in enumerate(_tables(doc, "task", path)):
        where = f"{path} task #{i + 1}"
        _unknown(t, ("name", "messages", "ram_bytes", "cycles"), where)
        tname = t.get("name")
        if not isinstance(tname, str):
            raise ProfileError(f"{where}: 'name' must be a task's name")
        where = f"{path} task '{tname}'"
        if tname in tasks:
            raise ProfileError(f"{where}: given twice")
        cycles = t.get("cycles", {})
        if not isinstance(cycles, dict):
            raise ProfileError(f"{where}: 'cycles' must be a table kind = cycles")
        for kind in cycles:
            _figure(cycles, kind, f"{where} cycles")
            if kind not in measured:
                raise ProfileError(f"{where}: cycles.{kind}: [measured] does not say where "
                                   f"the {kind} figures come from")
        tasks[tname] = TaskCost(tname, _figure(t, "messages", where),
                                _figure(t, "ram_bytes", where, 0, 2**32, integral=True),
                                {k: float(v) for k, v in cycles.items()})
    routes = {}
    for i, r in enumerate(_tables(doc, "route", path)):
        where = f"{path} route #{i + 1}"
        _unknown(r, ("from", "port", "messages", "bytes"), where)
        src = r.get("from")
        if not isinstance(src, str):
            raise ProfileError(f"{where}: 'from' must be a task's name")
        port = _figure(r, "port", where, 0, 255, integral=True)
        if (src, port) in routes:
            raise ProfileError(f"{where}: route {src}:{port} given twice")
        nbytes = _figure(r, "bytes", where, 1, 65535) if "bytes" in r else None
        routes[(src, port)] = RouteCost(src, port, _figure(r, "messages", where), nbytes)
    workloads = {}
    for i, w in enumerate(_tables(doc, "workload", path)):
        where = f"{path} workload #{i + 1}"
        _unknown(w, ("task", "port", "per_period", "mean_size", "base", "per_unit", "samples"),
                 where)
        task = w.get("task")
        if task not in tasks:
            raise ProfileError(f"{where}: 'task' must name a [[task]] of the profile")
        if task in workloads:
            raise ProfileError(f"{where}: task '{task}' has a workload already")
        figures = {}
        for key in ("base", "per_unit", "samples"):
            table = w.get(key)
            if not isinstance(table, dict):
                raise ProfileError(f"{where}: '{key}' must be a table kind = figure")
            for kind in table:
                if kind not in tasks[task].cycles:
                    raise ProfileError(f"{where}: {key}.{kind}: task '{task}' has no {kind} "
                                       "cycles")
                _figure(table, kind, f"{where} {key}", -1e15 if key == "base" else 0.0,
                        integral=key == "samples")
            figures[key] = {k: (int if key == "samples" else float)(v) for k, v in table.items()}
        if not figures["base"].keys() == figures["per_unit"].keys() == figures["samples"].keys():
            raise ProfileError(f"{where}: base, per_unit and samples must name the same kinds")
        workloads[task] = WorkloadCost(task, _figure(w, "port", where, 0, 255, integral=True),
                                       float(_figure(w, "per_period", where)),
                                       float(_figure(w, "mean_size", where)), figures["base"],
                                       figures["per_unit"], figures["samples"])
    prof = Profile(name, float(period), dict(measured), tasks, routes, path, workloads)
    if app is not None:
        check(prof, app)
    return prof


def check(prof: Profile, app: appplace.App):
    """The profile is of `app`: every task has figures, every route is one."""
    if prof.app != app.name:
        raise ProfileError(f"{prof.path}: a profile of '{prof.app}', not of '{app.name}' "
                           f"({app.path})")
    names = {t.name for t in app.tasks}
    missing = [t for t in sorted(names) if t not in prof.tasks]
    if missing:
        raise ProfileError(f"{prof.path}: no figures for task{'s' if len(missing) > 1 else ''} "
                           f"{', '.join(missing)} of {app.path}")
    extra = [t for t in prof.tasks if t not in names]
    if extra:
        raise ProfileError(f"{prof.path}: task '{extra[0]}' is not in {app.path}")
    ports = {(r.src, r.port) for r in app.routes}
    for key in prof.routes:
        if key not in ports:
            raise ProfileError(f"{prof.path}: route {key[0]}:{key[1]} is not an output port "
                               f"of {app.path}")
    for w in prof.workloads.values():
        if (w.task, w.port) not in ports:
            raise ProfileError(f"{prof.path}: workload of '{w.task}': port {w.port} is not an "
                               f"output port of {app.path}")


def with_workload(prof: Profile, stats: dict) -> Profile:
    """The profile for an input whose workload statistics are `stats`
    ({task: (items per period, mean size)}): each such task's cycles per
    message are what its cycles per period become, the items' handlers
    costing per_period * (a + b * mean_size) instead of the window's."""
    tasks = dict(prof.tasks)
    for task, (per_period, mean_size) in stats.items():
        w = prof.workloads.get(task)
        if w is None:
            raise ProfileError(f"{prof.path}: no workload for task '{task}' (motet profile "
                               "--fit)")
        t = tasks[task]
        if not t.messages:
            raise ProfileError(f"{prof.path}: task '{task}' handles no messages per period: "
                               "its workload cannot be scaled")
        cycles = dict(t.cycles)
        for kind in w.base:
            per = (t.messages * cycles[kind] + w.item_cycles(kind, per_period, mean_size)
                   - w.item_cycles(kind, w.per_period, w.mean_size))
            cycles[kind] = max(per, 0.0) / t.messages
        tasks[task] = dataclasses.replace(t, cycles=cycles)
    return dataclasses.replace(prof, tasks=tasks)


def workload_stats(sizes, lo_s, hi_s, period_ms):
    """(items per period, mean size) of [(time s, size)] inside [lo_s, hi_s)."""
    inside = [n for t, n in sizes if lo_s <= t < hi_s]
    periods = (hi_s - lo_s) * 1e3 / period_ms
    return len(inside) / periods, (sum(inside) / len(inside) if inside else 0.0)


def fit_linear(samples, where="fit"):
    """(a, b) of the least-squares line cycles = a + b * size through
    [(size, cycles)]; the sizes must take two values at least."""
    import numpy as np
    if len({x for x, _ in samples}) < 2:
        raise ProfileError(f"{where}: the sizes of {len(samples)} item(s) do not vary: "
                           "cannot fit a cost per unit")
    x = np.array([float(x) for x, _ in samples])
    y = np.array([float(y) for _, y in samples])
    (a, b), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(x), x]), y, rcond=None)
    return float(a), float(b)


def load(path, app: appplace.App | None = None) -> Profile:
    try:
        text = toml_text(path, "a profile")
    except ValueError as e:
        raise ProfileError(str(e)) from None
    return parse(text, str(path), app)


# ---- writing -----------------------------------------------------------------

def _num(x):
    return f"{x:.1f}" if isinstance(x, float) else str(x)


def write(prof: Profile, header: str = "") -> str:
    out = [f"# {h}" if h else "#" for h in header.splitlines()]
    out += ["", "[profile]", f'app = "{prof.app}"', f"period_ms = {prof.period_ms:g}", "",
            "[measured]"]
    out += [f"{k} = {_quote(v)}" for k, v in sorted(prof.measured.items())]
    for t in prof.tasks.values():
        cyc = ", ".join(f'{_key(k)} = {v:.1f}' for k, v in sorted(t.cycles.items()))
        out += ["", "[[task]]", f'name = "{t.name}"', f"messages = {t.messages:.4f}",
                f"ram_bytes = {t.ram_bytes}", f"cycles = {{ {cyc} }}"]
    for r in prof.routes.values():
        out += ["", "[[route]]", f'from = "{r.src}"', f"port = {r.port}",
                f"messages = {r.messages:.4f}"]
        if r.bytes is not None:
            out.append(f"bytes = {r.bytes:.1f}")
    for w in prof.workloads.values():
        table = lambda d, f: ", ".join(f"{_key(k)} = {f(v)}" for k, v in sorted(d.items()))  # noqa
        out += ["", "[[workload]]", f'task = "{w.task}"', f"port = {w.port}",
                f"per_period = {w.per_period:.4f}", f"mean_size = {w.mean_size:.2f}",
                f"base = {{ {table(w.base, lambda v: f'{v:.1f}')} }}",
                f"per_unit = {{ {table(w.per_unit, lambda v: f'{v:.2f}')} }}",
                f"samples = {{ {table(w.samples, str)} }}"]
    return "\n".join(out) + "\n"


def _quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _key(k):
    return k if k.replace("_", "").replace("-", "").isalnum() else _quote(k)


# ---- measuring from event logs -------------------------------------------------

@dataclasses.dataclass
class _Tally:
    cycles: dict = dataclasses.field(default_factory=dict)  # (task, kind, port) -> [sum, n]
    handled: dict = dataclasses.field(default_factory=dict)  # (task, port) -> messages
    ram: dict = dataclasses.field(default_factory=dict)  # task -> bytes
    sends: dict = dataclasses.field(default_factory=dict)  # (src, port) -> set of times
    frames: dict = dataclasses.field(default_factory=dict)  # (src, port) -> [bytes...]


def _route_of(app, src, dst, dst_port):
    """The output port of `src` that leads to task `dst`, input `dst_port`."""
    for r in app.routes_from(src):
        for d, p in zip(r.dst, r.dst_ports):
            if d == dst and p == dst_port:
                return r
    return None


def _module_log(tally, app, placement, spec, records, lo, hi, fits=None, items=None):
    """Add one module's records of one run to the tally; with `fits`
    ({task: output port}), each handler of such a task that sends on that
    port to `items` ({task: [(start us, kind, own cycles)]}). A local send
    is a SEND inside the handler; a frame's BUS record comes when the frame
    has gone out, after the handler's END, and counts for the handler of
    the task it is credited to that ran last."""
    fits = fits or {}
    handlers, last_handler = {}, {}  # task -> [[start, own cycles, ends an item]]
    by_pid = {FIRST_APP_PID + t.pid: t.name for t in app.tasks}
    here = {t.name for t in app.tasks if placement[t.name] == spec.id}
    kind = spec.processor.name
    stack, init_done, last_start, ram = [], set(), {}, {}
    copies = driver_copies(records)
    for i, r in enumerate(records):
        if not isinstance(r, eventlog.Event):
            continue
        if i in copies and stack:  # (no handler: an interrupt outside any, no task's)
            stack[-1][2] += sum(spec.frame_ns + n * spec.byte_ns for n in copies[i]) / 1e3
        task = by_pid.get(r.pid)
        if r.type == "START":
            rec = [r.time_us, None, False] if task in fits else None
            stack.append([r.pid, r.time_us, 0, r.arg, rec])
            if rec:
                handlers.setdefault(task, []).append(rec)
                last_handler[task] = rec
            if task:
                last_start[task] = r.time_us
        elif r.type == "END":
            at = next((i for i in range(len(stack) - 1, -1, -1) if stack[i][0] == r.pid), None)
            if at is None:
                continue
            pid, start, inner, port, rec = stack[at]
            del stack[at:]
            took = r.time_us - start
            if rec:
                rec[1] = (took - inner) * spec.processor.mhz
            if stack:
                stack[-1][2] += took
            if port == PORT_INIT:
                init_done.add(r.pid)
            if task and port >= PORT_TIMEOUT0 and lo <= start < hi:
                acc = tally.cycles.setdefault((task, kind, port), [0.0, 0])
                acc[0] += (took - inner) * spec.processor.mhz
                acc[1] += 1
                tally.handled[task, port] = tally.handled.get((task, port), 0) + 1
        elif r.type == "ALLOC" and task and r.pid not in init_done:
            ram[task] = ram.get(task, 0) + r.arg
        elif r.type == "SEND" and task:
            dst = by_pid.get(r.arg >> 8)
            route = dst and _route_of(app, task, dst, (r.arg & 0xFF) - APP_PORT_0)
            if route and fits.get(task) == route.port and stack and stack[-1][4]:
                stack[-1][4][2] = True
            if route and lo <= r.time_us < hi:
                tally.sends.setdefault((task, route.port), set()).add(r.time_us)
        elif r.type == "BUS" and not r.arg & 0x8000:
            route = _frame_route(app, here, by_pid, last_start, r)
            if route and fits.get(route.src) == route.port and route.src in last_handler:
                last_handler[route.src][2] = True
            if route and lo <= r.time_us < hi:
                key = (route.src, route.port)
                tally.sends.setdefault(key, set()).add(r.time_us)
                tally.frames.setdefault(key, []).append(r.arg & 0x7FFF)
    if items is not None:
        for task, recs in handlers.items():
            items.setdefault(task, []).extend((start, kind, cycles)
                                              for start, cycles, ends in recs
                                              if ends and cycles is not None)
    for task, nbytes in ram.items():
        tally.ram[task] = max(tally.ram.get(task, 0), nbytes)


FRAME_BLOCK_SLACK = 16  # a frame's heap block: its bytes, rounded up by the heap


def driver_copies(records):
    """{index of a record: [bytes of each frame the bus driver copies
    there]}: the bus driver's work in a module's log, which the planner
    charges per frame and byte on both ends and is not the task's (the
    native port charges the module's bus cycles per frame and byte for each
    copy to or from the interface, ports/native/bus_native.c).

    A received frame is copied in the interrupt that ends with its BUS
    record (bit 15 set); the kernel may then allocate its payload (ALLOC by
    the kernel, among the SENDs that deliver it), which is no frame of
    ours. A frame we send is the kernel's ALLOC of its block (kernel/src/
    bus.c), and its BUS record when it has gone out: each BUS record is the
    earliest such ALLOC not yet matched whose block fits its bytes (the
    kernel's other allocations, a task's at its creation, match none). It
    is copied when the kernel hands it to the interface (kick()): at its
    ALLOC if the frame sent before it had gone out by then, else at that
    frame's BUS record, in whatever handler that interrupt came in.
    Charging each copy to the handler that opened the frame took from an
    SC a band copy it had not paid when three SCs shared a module (their
    handlers measured below zero), and left the copies of received frames
    in the handlers they interrupted."""
    copies, opened, sent = {}, [], []  # opened: [index, bytes, matched]
    delivering = False
    for i, r in enumerate(records):
        if not isinstance(r, eventlog.Event):
            continue
        received = r.type == "BUS" and bool(r.arg & 0x8000)
        if received:
            copies.setdefault(i, []).append(r.arg & 0x7FFF)
        elif r.type == "ALLOC" and r.pid == KERNEL_PID and not delivering:
            opened.append([i, r.arg, False])
        elif r.type == "BUS":
            n = r.arg & 0x7FFF
            frame = next((o for o in opened if not o[2] and n <= o[1] < n + FRAME_BLOCK_SLACK),
                         None)
            if frame:
                frame[2] = True
                sent.append((frame[0], i, n))
        delivering = received or (delivering and r.pid == KERNEL_PID and
                                  r.type in ("SEND", "ALLOC"))
    last_out = -1
    for at, out, n in sent:
        copies.setdefault(max(at, last_out), []).append(n)
        last_out = out
    return copies


def _frame_route(app, here, by_pid, last_start, r):
    """The route a sent frame's BUS record belongs to: of the module's tasks
    that route to its destination, the one that ran last (None: none)."""
    if r.pid == MULTICAST_PID:
        cands = [q for q in app.routes if q.src in here and q.group]
    else:
        dst = by_pid.get(r.pid)
        cands = [q for q in app.routes if q.src in here and not q.group and dst in q.dst]
    return max(cands, key=lambda q: last_start.get(q.src, -1)) if cands else None


def _cycles(tally, task, mix):
    """{kind: cycles per message} of a task: the mean per input port on that
    kind, weighted by the ports' share of its messages in the first run
    (`mix`), so that a variant whose message mix differs (a decision lost
    on an overloaded module) does not skew the figure. A port never handled
    on a kind counts as the kind's mean over the ports it did handle."""
    per = {}
    for (name, kind, port), (total, n) in tally.cycles.items():
        if name == task and n:
            per.setdefault(kind, {})[port] = (total, n)
    out = {}
    for kind, ports in per.items():
        overall = sum(t for t, _ in ports.values()) / sum(n for _, n in ports.values())
        weight = sum(mix.values())
        if not weight:
            out[kind] = overall
            continue
        out[kind] = sum((ports[p][0] / ports[p][1] if p in ports else overall) * n
                        for p, n in mix.items()) / weight
    return out


def item_sizes(lines, size_re=DEFAULT_SIZE_RE):
    """The sizes the run's output lines give, in order: each line that
    `size_re` matches, its first group."""
    pattern = re.compile(size_re)
    return [int(m.group(1)) for m in map(pattern.search, lines) if m]


def _pair(items, sizes, where):
    """[(start us, kind, cycles, size)]: the k-th item handler with the k-th
    size. A run may end with the last item's message not yet reported."""
    items = sorted(items)
    if not 0 <= len(items) - len(sizes) <= 1:
        raise ProfileError(f"{where}: {len(items)} handlers end an item but the output "
                           f"gives {len(sizes)} sizes: cannot pair them")
    return [(s, k, c, n) for (s, k, c), n in zip(items, sizes)]


def _workloads(app, fits, paired, first, lo, hi, periods):
    out = {}
    for task, port in fits.items():
        by_kind = {}
        for _, kind, cycles, size in (x for run in paired for x in run.get(task, ())
                                      if lo <= x[0] < hi):
            by_kind.setdefault(kind, []).append((size, cycles))
        if not by_kind:
            raise ProfileError(f"--fit {task}:{port}: no handler of {task} sent on port "
                               f"{port} inside the window")
        fitted = {k: fit_linear(v, f"--fit {task}:{port} on {k}") for k, v in by_kind.items()}
        ref = [x[3] for x in first.get(task, ()) if lo <= x[0] < hi]
        out[task] = WorkloadCost(task, port, len(ref) / periods,
                                 sum(ref) / len(ref) if ref else 0.0,
                                 {k: a for k, (a, _) in fitted.items()},
                                 {k: b for k, (_, b) in fitted.items()},
                                 {k: len(v) for k, v in by_kind.items()})
    return out


def from_logs(app, dev, runs, period_ms, lo_s, hi_s, measured, fits=None, outputs=None,
              size_re=DEFAULT_SIZE_RE):
    """A Profile from `runs`: [(placement {task: module}, {module id: records})],
    each read over the window [lo_s, hi_s) of module time. Cycles, RAM and
    frame sizes come from every run; how many messages a task handles and a
    route carries per period from the first (the description's placement,
    presumably one that keeps up: a variant may overload a module). With
    `fits` ({task: output port}) and `outputs` (each run's output lines), a
    workload per such task (module docstring, --fit)."""
    tally, ref = _Tally(), _Tally()
    lo, hi = lo_s * 1e6, hi_s * 1e6
    fits = fits or {}
    paired = []
    for i, (placement, logs) in enumerate(runs):
        items = {}
        for spec in dev.modules:
            for t in (tally, ref) if i == 0 else (tally,):
                _module_log(t, app, placement, spec, logs.get(spec.id, []), lo, hi, fits,
                            items if t is tally else None)
        if fits:
            sizes = item_sizes(outputs[i] if outputs else [], size_re)
            paired.append({task: _pair(items.get(task, []), sizes, f"run {i + 1}")
                           for task in fits})
    periods = (hi - lo) / (period_ms * 1e3)
    tasks = {}
    for t in app.tasks:
        mix = {port: n for (name, port), n in ref.handled.items() if name == t.name}
        tasks[t.name] = TaskCost(t.name, sum(mix.values()) / periods,
                                 tally.ram.get(t.name, 0), _cycles(tally, t.name, mix))
    routes = {}
    for r in app.routes:
        key = (r.src, r.port)
        frames = tally.frames.get(key)
        sends = len(ref.sends.get(key, ()))
        if sends or frames:
            routes[key] = RouteCost(r.src, r.port, sends / periods,
                                    sum(frames) / len(frames) if frames else None)
    kinds = {k for t in tasks.values() for k in t.cycles}
    workloads = _workloads(app, fits, paired, paired[0] if paired else {}, lo, hi, periods)
    return Profile(app.name, float(period_ms), {k: measured[k] for k in sorted(kinds)}, tasks,
                   routes, workloads=workloads)


EMULATORS = {"avr": "the simavr harness", "cortex-m": "QEMU (-icount, its lock-step plug-in)"}


def measured_text(dev, runs):
    """Per processor kind, where its figures came from, in words."""
    out = {}
    for kind in sorted({m.processor.name for m in dev.modules}):
        mods = [m for m in dev.modules if m.processor.name == kind]
        ports = sorted({m.kind for m in mods})
        args = sorted({shlex.join(m.args) for m in mods})
        if ports == ["native"]:
            how = ("handler time in simulated time, which the native port advances only by "
                   "what the module program charges for its work (its cost model: module "
                   f"arguments {'; '.join(args)}), times the clock")
        elif all(p in EMULATORS for p in ports):
            how = ("the chip's own cycles: each record of the kernel's log taken by "
                   f"{' and '.join(EMULATORS[p] for p in ports)} as the chip wrote it, at the "
                   "cycle it was written (eventlog.py, SLOT lines); handler time times the "
                   "clock")
        else:
            how = "handler time times the clock"
        out[kind] = (f"{', '.join(ports)} port: event logs of {dev.path} modules "
                     f"{', '.join(str(m.id) for m in mods)} ({kind}, {mods[0].processor.mhz:g} "
                     f"MHz), {len(runs)} placement{'s' if len(runs) > 1 else ''}; {how}")
    return out


def variants(app, dev):
    """Placements to measure: the description's; every movable task on a
    module of another processor kind; then, while some route with a movable
    end has always been local, that route split. A device with emulated
    modules runs the description its images have built in (module_kinds:
    the module program's options do not reach them): that one only."""
    given = {t.name: t.module for t in app.tasks}
    if any(m.kind in EMULATORS for m in dev.modules):
        return [given]
    kind = {m.id: m.processor.name for m in dev.modules}
    out = [given]
    swapped = dict(given)
    for t in app.tasks:
        if t.movable:
            other = [m.id for m in dev.modules if m.processor.name != kind.get(t.module)]
            if other:
                swapped[t.name] = other[0]
    if swapped != given:
        out.append(swapped)
    movable = {t.name for t in app.tasks if t.movable}
    split = dict(given)
    for r in app.routes:
        for d in r.dst:
            if not ({r.src, d} & movable) or any(p[r.src] != p[d] for p in out + [split]):
                continue
            mover = d if d in movable else r.src
            fixed = r.src if mover == d else d
            same = [m.id for m in dev.modules
                    if m.id != split[fixed] and kind[m.id] == kind.get(given[mover])]
            others = same or [m.id for m in dev.modules if m.id != split[fixed]]
            if others:
                split[mover] = others[0]
    if split != given and split not in out:
        out.append(split)
    return out


def _read_logs(dev, log_dir, named=False):
    """Each module's log in log_dir; `named`: the user named the directory
    (--logs), so each file must be a log (eventlog.parse_bytes())."""
    out = {}
    for m in dev.modules:
        path = Path(log_dir) / f"m{m.id}.log"
        try:
            out[m.id] = eventlog.read(path, named=named)
        except OSError as e:
            raise ProfileError(f"cannot read {path}: {e.strerror}") from None
        except eventlog.LogFormatError as e:
            raise ProfileError(str(e)) from None
    return out


def measure(app, dev, bdir, until_s, desc_option, extra, keep=None, out=print):
    """([(placement, logs)], [output lines]) of one device run per variant."""
    runs, outputs = [], []
    with tempfile.TemporaryDirectory(prefix="motet-profile-") as tmp:
        base = Path(keep or tmp)
        for i, placement in enumerate(variants(app, dev)):
            text = appplace.placed(app, placement)
            desc = base / f"placement{i}.bin"
            desc.parent.mkdir(parents=True, exist_ok=True)
            (base / f"placement{i}.toml").write_text(text)
            desc.write_bytes(appc_text.compile_text(text))
            log_dir = base / f"placement{i}"
            given = {t.name: t.module for t in app.tasks}
            moved = {t: m for t, m in placement.items() if m != given[t]}
            lines = []
            built_in = any(m.kind in EMULATORS for m in dev.modules)  # variants()
            status, _ = run_device.run(dev, bdir, until=until_s, log_dir=log_dir,
                                       extra=[*extra] if built_in else
                                       [*extra, desc_option, str(desc)],
                                       out=lines.append, progress=False)
            if status != 0:
                raise ProfileError(f"the device run of placement {i} failed:\n"
                                   + "\n".join(lines[-20:]))
            where = ", ".join(f"{t} on m{m}" for t, m in moved.items()) or "as described"
            out(f"profile: placement {i} ({where}): {until_s:g} s run")
            runs.append((placement, _read_logs(dev, log_dir)))
            outputs.append(lines)
    return runs, outputs


def _parse_fit(text, app):
    task, _, port = text.partition(":")
    try:
        port = int(port)
    except ValueError:
        raise ProfileError(f"--fit {text}: must be TASK:PORT (an output port number)") from None
    if (task, port) not in {(r.src, r.port) for r in app.routes}:
        raise ProfileError(f"--fit {text}: {task}:{port} is not an output port of {app.path}")
    return {task: port}


def _read_output(log_dir):
    path = Path(log_dir) / "output.txt"
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as e:
        raise ProfileError(f"cannot read {path} (--fit with --logs needs the run's "
                           f"output there): {e.strerror}") from None


def main(argv=None):
    p = cmdline.ArgumentParser(
        prog="motet profile",
        description="Measure an application's task costs on a device for `motet plan`: "
                    "cycles per message of each task on each processor kind, messages and "
                    "bus bytes per route (format and method: tools/motetlib/profile.py).")
    p.add_argument("app", metavar="APP.toml")
    p.add_argument("device", metavar="DEVICE.toml")
    p.add_argument("--period-ms", type=float, required=True,
                   help="the application's period: figures are per period")
    p.add_argument("-o", "--output", metavar="OUT.toml", help="write the profile here "
                   "(default: print it)")
    p.add_argument("--until", type=float, default=6.0, metavar="S",
                   help="simulated seconds per run (default 6)")
    p.add_argument("--warmup", type=float, default=1.0, metavar="S",
                   help="leave the first S seconds out (default 1)")
    p.add_argument("--logs", metavar="DIR", action="append",
                   help="read DIR/mN.log of a run made with the application placed as APP.toml "
                        "instead of running the device (repeatable)")
    p.add_argument("--desc-option", default="--app-file",
                   help="the module program's option that takes a compiled description "
                        "(default --app-file, which every program built on module_main() "
                        "takes)")
    p.add_argument("--fit", metavar="TASK:PORT",
                   help="fit TASK's cost per item as a + b * size: a handler that sends on "
                        "output PORT ends an item, its size from the run's output (--fit-size)")
    p.add_argument("--fit-size", default=DEFAULT_SIZE_RE, metavar="REGEX",
                   help="an output line giving an item's size in its first group "
                        f"(default {DEFAULT_SIZE_RE})")
    p.add_argument("--keep", metavar="DIR", help="keep the placements and logs in DIR")
    p.add_argument("--no-build", action="store_true", help="do not build the programs first")
    p.add_argument("--build-dir", help="build directory (default build/)")
    p.add_argument("extra", nargs="*", help="after --: arguments for every module")
    args = p.parse_args(argv)
    if not 0 <= args.warmup < args.until:
        p.error("--warmup must be below --until")
    if not PERIOD_MS[0] <= args.period_ms <= PERIOD_MS[1]:  # false for nan too
        # the bounds a profile's period_ms is read with: what is written must load
        print(f"profile: error: --period-ms {args.period_ms:g}: must be within "
              f"{PERIOD_MS[0]:g} .. {PERIOD_MS[1]:g} ms", file=sys.stderr)
        return 2
    try:
        app = appplace.load(args.app)
        dev = devmod.load(args.device)
        fits = _parse_fit(args.fit, app) if args.fit else {}
        if args.logs:
            given = {t.name: t.module for t in app.tasks}
            runs = [(given, _read_logs(dev, d, named=True)) for d in args.logs]
            outputs = [_read_output(d) if fits else [] for d in args.logs]
        else:
            bdir = build.build_dir(args.build_dir)
            if not args.no_build:
                status = run_device.build_programs(args.build_dir, dev)
                if status != 0:
                    return status
            runs, outputs = measure(app, dev, bdir, args.until, args.desc_option, args.extra,
                                    args.keep, out=lambda s: print(s, file=sys.stderr))
        prof = from_logs(app, dev, runs, args.period_ms, args.warmup, args.until,
                         measured_text(dev, runs), fits, outputs, args.fit_size)
    except (appplace.AppError, devmod.DeviceError, ProfileError) as e:
        print(f"profile: error: {e}", file=sys.stderr)
        return 2
    cmd = "./motet profile " + shlex.join(argv if argv is not None else sys.argv[1:])
    header = (f"Task costs of {app.path} on {dev.path}, for `motet plan`.\n"
              f"Produced by: {cmd}\n"
              f"Format and method: tools/motetlib/profile.py. Window {args.warmup:g} .. "
              f"{args.until:g} s of each run.")
    text = write(prof, header)
    if args.output:
        Path(args.output).write_text(text)
        print(f"profile: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
