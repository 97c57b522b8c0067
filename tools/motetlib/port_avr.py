# SPDX-License-Identifier: MIT
"""The AVR port's host side: run an ATmega128 image under the simavr
harness, check that an image fits the chip's SRAM, measure the benchmarks.

    port_avr.py [run] [--freq HZ] [--harness PATH] [--timeout S]
                IMAGE.elf
    port_avr.py check-ram IMAGE.elf
    port_avr.py bench [--build-dir DIR] [--out FILE]

`run` is the CTest runner of the AVR port (MOTET_PORT_RUNNER in
ports/avr/port.cmake): it starts motet-simavr on the image, passes the
firmware's console through, and exits with the status the firmware gave
port_halt() -- or 124 when the image does not halt within the timeout,
125 when the harness cannot start it, 126 when it crashes.

Finding the harness (tools/simavr-harness, a host program on libsimavr), in
this order: --harness PATH (the AVR build passes the copy it built, or the
one named by -DMOTET_SIMAVR_HARNESS); $MOTET_SIMAVR; `motet-simavr` on
PATH; tools/simavr-harness/motet-simavr in $MOTET_BUILD_DIR or build/ (a
native build makes it there).

`bench` runs bench/avr's images (cycle counts from GPIO edges), reads the
linker maps for the footprint and every image's stack high-water mark, and
writes docs/benchmarks-avr.md. Standard library only.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HARNESS_NAME = "motet-simavr"
DEFAULT_TIMEOUT = 100.0  # seconds of host time per image
EXIT_LIMIT, EXIT_ERROR = 124, 125

SRAM_BYTES = 4096  # ATmega128 internal SRAM
STACK_RESERVE = 512  # bytes an image must leave for the one stack (at least)


def find_harness(explicit=None):
    """Path of motet-simavr, or None; see the module docstring for the order."""
    candidates = [explicit, os.environ.get("MOTET_SIMAVR"), shutil.which(HARNESS_NAME)]
    build = os.environ.get("MOTET_BUILD_DIR")
    for d in ([Path(build)] if build else []) + [ROOT / "build"]:
        candidates.append(str(d / "tools" / "simavr-harness" / HARNESS_NAME))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def harness_or_exit(explicit=None):
    exe = find_harness(explicit)
    if exe is None:
        where = f" (not found at {explicit})" if explicit else ""
        print(f"port_avr: error: the simavr harness {HARNESS_NAME} is missing{where}.\n"
              "  Build it with a native build (cmake -S . -B build && cmake --build build\n"
              "  makes build/tools/simavr-harness/motet-simavr; needs libsimavr-dev and\n"
              "  libelf-dev), then pass it with -DMOTET_SIMAVR_HARNESS=PATH or set\n"
              "  MOTET_SIMAVR=PATH.", file=sys.stderr)
        sys.exit(EXIT_ERROR)
    return exe


def run(elf, timeout=DEFAULT_TIMEOUT, freq=None, harness=None, extra=()):
    """Run one image; returns the firmware's halt status or a harness error
    status (see the module docstring). Console output goes to stdout, the
    harness summary (cycles, time asleep, stack high-water) to stderr."""
    cmd = [harness_or_exit(harness), "--timeout", str(timeout)]
    if freq:
        cmd += ["--freq", str(freq)]
    cmd += [*extra, str(elf)]
    sys.stdout.flush()
    try:
        # The harness enforces the timeout in simulated runs; this one only
        # guards against a harness that hangs itself.
        res = subprocess.run(cmd, timeout=timeout + 30, stdout=subprocess.PIPE, text=True,
                             errors="replace")
    except subprocess.TimeoutExpired:
        print(f"port_avr: error: {elf}: the harness did not stop within {timeout + 30:.0f} s",
              file=sys.stderr)
        return EXIT_LIMIT
    sys.stdout.write(res.stdout)
    sys.stdout.flush()
    return res.returncode


# ---- static RAM of an image ------------------------------------------------

def section_sizes(elf):
    """{section: bytes} from `avr-size -A`."""
    res = subprocess.run(["avr-size", "-A", str(elf)], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"avr-size -A {elf} failed: {res.stderr.strip()}")
    sizes = {}
    for line in res.stdout.splitlines():
        m = re.match(r"^(\.\S+)\s+(\d+)\s+\d+", line)
        if m:
            sizes[m.group(1)] = int(m.group(2))
    return sizes


def static_ram(sizes):
    return sum(sizes.get(s, 0) for s in (".data", ".bss", ".noinit"))


def check_ram(elf):
    """Fail unless the image's static data leaves STACK_RESERVE bytes of the
    internal SRAM for the stack."""
    try:
        sizes = section_sizes(elf)
    except (OSError, RuntimeError) as e:
        print(f"port_avr: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    used = static_ram(sizes)
    left = SRAM_BYTES - used
    flash = sizes.get(".text", 0) + sizes.get(".data", 0)
    print(f"{Path(elf).name}: flash {flash} B, static RAM {used} B of {SRAM_BYTES} B, "
          f"{left} B left for the stack")
    if left < STACK_RESERVE:
        print(f"port_avr: error: {elf} leaves {left} B of SRAM for the stack, "
              f"less than {STACK_RESERVE} B", file=sys.stderr)
        return 1
    return 0


# ---- benchmarks: cycles from GPIO edges -------------------------------------
#
# bench/avr/bench_avr.c marks each operation on its own pin (see its header).
# The harness stamps every edge with the cycle at which the writing
# instruction starts; a window is the SBI (2 cycles) plus the work up to the
# CBI. Pass 1 runs an image until it is ready for the injected interrupts
# (PC7 rises); pass 2 runs it again (simavr is deterministic) with INT0
# injected after that cycle and records every marker; pass 3 profiles each
# measured operation function by function.

BENCH_IMAGES = (("log on", "bench_avr.elf"), ("log off", "bench_avr_nolog.elf"))
# The footprint's images (bench/avr/core_avr.c): one application using only
# tasks, messages and timers, against the kernel core and the full kernel.
CORE_IMAGES = (("core", "core_avr.elf"), ("full, log off", "core_avr_full_nolog.elf"),
               ("full, log on", "core_avr_full.elf"))
BENCH_PINS = "A0,A1,A2,A3,A4,A5,A6,A7,B5,C0,C1,C2,C7"
# Thread switches (bench/avr/bench_avr_threads.c): pin -> figure.
THREAD_IMAGES = (("log on", "bench_avr_threads.elf"), ("log off", "bench_avr_threads_nolog.elf"))
THREAD_PINS = (("A1", "yield switch"), ("A2", "semaphore hand-off"))
BENCH_READY_LIMIT = 50_000_000  # cycles within which the image must get ready
IRQ_EVENTS = 16  # as IRQ_EVENTS in bench_avr.c
IRQ_FIRST, IRQ_SPACING = 20_000, 40_000  # cycles after ready, between injections
SBI_CYCLES = 2
PROFILED = (("A1", "immediate"), ("A2", "chain"), ("A3", "round trip"), ("A4", "mem"),
            ("A5", "slab"))


class BenchError(RuntimeError):
    pass


def _harness_run(exe, elf, args, timeout=120):
    cmd = [exe, "-q", "--timeout", str(timeout), *args, str(elf)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30)
    return res.returncode, res.stdout, res.stderr


def read_trace(path):
    """{name: [(cycle, level), ...]} from a motet-simavr edge file."""
    events = {}
    for line in Path(path).read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        cycle, name, level = line.split()
        events.setdefault(name, []).append((int(cycle), int(level)))
    return events


def read_profile(path):
    """{function: cycles} from a motet-simavr flat profile (--profile),
    heaviest first; static functions of one name add up."""
    funcs = {}
    for line in Path(path).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cycles, _, func = line.split(None, 2)  # "(no symbol)" has a space
        funcs[func] = funcs.get(func, 0) + int(cycles)
    return funcs


def read_profile_pcs(path):
    """[(address, cycles, executions, function)] in address order from a
    motet-simavr per-instruction profile (--profile-pc)."""
    rows = []
    for line in Path(path).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        addr, cycles, runs, func = line.split(None, 3)
        rows.append((int(addr, 16), int(cycles), int(runs), func))
    return rows


def windows(events):
    """Durations of the high pulses of one pin, in order."""
    out, rise = [], None
    for cycle, level in events:
        if level:
            rise = cycle
        elif rise is not None:
            out.append(cycle - rise)
            rise = None
    return out


def _spread(values):
    """(min, max) of a list of cycle counts; BenchError when empty."""
    if not values:
        raise BenchError("an operation left no marker edges")
    return min(values), max(values)


def _ready_cycle(exe, elf, work):
    trace = Path(work) / "ready.txt"
    _harness_run(exe, elf, ["--max-cycles", str(BENCH_READY_LIMIT), "--trace", "C7",
                            "-o", str(trace)])
    rises = [c for c, level in read_trace(trace).get("C7", []) if level]
    if not rises:
        raise BenchError(f"{elf.name} never got ready for the interrupts (PC7)")
    return rises[0]


def _latencies(starts, marks):
    """For each start, cycles to the first mark at or after it."""
    out = []
    for s in starts:
        later = [m for m in marks if m >= s]
        if later:
            out.append(later[0] - s)
    return out


def _analyse(events):
    """Cycle figures of one bench run: {figure: (min, max)}."""
    w = {pin: windows(events.get(pin, []))[1:]
         for pin in ("A0", "A1", "A2", "A3", "A4", "A5", "C1", "C2")}
    empty = _spread(w["A0"])
    if empty[0] != empty[1]:
        raise BenchError(f"the empty window varies: {empty}")
    base = empty[0]

    def minus(pin, sub):
        lo, hi = _spread(w[pin])
        return lo - sub, hi - sub

    imm = minus("A1", base)
    rises = lambda pin: [c for c, level in events.get(pin, []) if level]
    injected = rises("INT0")
    timer = _timer_windows(events)
    return {
        "empty": empty,
        "immediate": imm,
        "immediate by pid": minus("C1", base),
        "immediate, sched_send()": minus("C2", base),
        "queued": (minus("A2", base)[0] - imm[0], minus("A2", base)[1] - imm[1]),
        "round trip": minus("A3", SBI_CYCLES),
        "mem": minus("A4", base),
        "slab": minus("A5", base),
        "irq body": _spread(_latencies(injected, rises("C0"))),
        "irq handler": _spread(_latencies(injected, rises("A6"))),
        "timer handler": _spread(timer),
    }


def measure_threads(exe, elf, work):
    """{figure: (min, max)} of the thread image: each pin's windows after the
    first (the threads' start), less the SBI that opens them."""
    trace = Path(work) / "thread-edges.txt"
    status, out, err = _harness_run(exe, elf, ["--trace", ",".join(p for p, _ in THREAD_PINS),
                                               "-o", str(trace)])
    if status != 0:
        raise BenchError(f"{elf.name} failed (status {status}):\n{out}{err}")
    events = read_trace(trace)
    return {name: _spread([w - SBI_CYCLES for w in windows(events.get(pin, []))[1:]])
            for pin, name in THREAD_PINS}


def _top_functions(path, runs, n=5):
    """[(cycles per run, function)] of the heaviest functions of a profile."""
    heaviest = sorted(read_profile(path).items(), key=lambda fc: -fc[1])[:n]
    return [(cycles / runs, func) for func, cycles in heaviest]


# The floor images (bench/avr/floor_avr.c): the rules' operations alone,
# with the interrupt lock and without it.
FLOOR_IMAGES = (("floor", "floor_avr.elf"), ("floor unlocked", "floor_avr_unlocked.elf"),
                ("floor log", "floor_avr_log.elf"), ("floor log one", "floor_avr_log_one.elf"))
# The floor of a timer expiry (bench/avr/floor_avr_timer.c).
FLOOR_TIMER_IMAGE = "floor_avr_timer.elf"
# The floor of the two thread switches (bench/avr/floor_avr_threads.c),
# measured as the thread image is; its figures join the floor column.
FLOOR_THREADS_IMAGE = "floor_avr_threads.elf"
FLOOR_FIGURES = (("immediate", "A1"), ("round trip", "A3"))


def measure_floor(exe, elf, work):
    """{figure: (min, max)} of the floor image, windows taken as for Motet's."""
    trace = Path(work) / "floor-edges.txt"
    status, out, err = _harness_run(exe, elf, ["--trace", "A0,A1,A3", "-o", str(trace)])
    if status != 0:
        raise BenchError(f"{elf.name} failed (status {status}):\n{out}{err}")
    events = read_trace(trace)
    w = {pin: windows(events.get(pin, []))[1:] for pin in ("A0", "A1", "A3")}
    if not all(w.values()):
        raise BenchError(f"{elf.name} marked no windows")
    base = _spread(w["A0"])[0]
    imm, trip = _spread(w["A1"]), _spread(w["A3"])
    return {"immediate": (imm[0] - base, imm[1] - base),
            "round trip": (trip[0] - SBI_CYCLES, trip[1] - SBI_CYCLES)}


def _timer_windows(events, compare_pin="B5"):
    """Cycles from each compare output's edge (OC1A: B5) to the next rise of
    the timer task's marker (A7), as bench_avr.c's timer row."""
    b5 = [c for c, _ in events.get(compare_pin, [])]
    return [r - max(e for e in b5 if e <= r)
            for r in (c for c, level in events.get("A7", []) if level) if any(e <= r for e in b5)]


def measure_floor_timer(exe, elf, work):
    """{"timer handler": (min, max)} of the timer floor image."""
    trace = Path(work) / "floor-timer-edges.txt"
    status, out, err = _harness_run(exe, elf, ["--trace", "A7,B6", "-o", str(trace)])
    if status != 0:
        raise BenchError(f"{elf.name} failed (status {status}):\n{out}{err}")
    timer = _timer_windows(read_trace(trace), "B6")  # OC1B: the floor's compare
    if not timer:
        raise BenchError(f"{elf.name} marked no windows")
    return {"timer handler": _spread(timer)}


def measure_image(exe, elf, work):
    """Figures, profiles and run summary of one bench image."""
    ready = _ready_cycle(exe, elf, work)
    cycles = ",".join(str(ready + IRQ_FIRST + k * IRQ_SPACING) for k in range(IRQ_EVENTS))
    trace, summary = Path(work) / "edges.txt", Path(work) / "summary.json"
    status, out, err = _harness_run(exe, elf, ["--irq", f"INT0@{cycles}", "--trace", BENCH_PINS,
                                               "-o", str(trace), "--json", str(summary)])
    if status != 0:
        raise BenchError(f"{elf.name} failed (status {status}):\n{out}{err}")
    figures = _analyse(read_trace(trace))
    profiles = {}
    for pin, name in PROFILED:
        prof = Path(work) / f"profile-{pin}.txt"
        _harness_run(exe, elf, ["--irq", f"INT0@{cycles}", "--profile", str(prof),
                                "--profile-gate", pin])
        profiles[name] = _top_functions(prof, 1 + len(windows(read_trace(trace)[pin])[1:]))
    run = json.loads(summary.read_text())
    return {"figures": figures, "profiles": profiles, "run": run, "console": out}


# ---- footprint: from the linker maps ---------------------------------------

# Kernel and port objects by component (every object either links). The
# "core" flag marks the components counted before the core image existed
# (scheduler, slab caches, timers, boot and the port), kept for comparison.
COMPONENTS = (
    ("scheduler", ("dispatch.c", "isr_exit.c", "sched_run.c", "sched_query.c", "sched_k.c", "send.c",
                   "post.c", "task.c", "queue.c", "take.c", "sched_migrate.c", "bit_table.c"),
     True),
    ("slab caches", ("slab.c",), True),
    ("timers", ("timer.c", "timer_budget.c", "timer_phase.c"), True),
    ("boot, errors", ("boot.c", "errors.c"), True),
    ("AVR port", ("port_avr_boot.c", "port_avr_startup.c", "port_avr_console.c", "port_avr_irq.c",
                  "port_avr_timer.c", "port_avr_watchdog.c", "port_avr_context.c",
                  "port_avr_bus.c"), True),
    ("heap", ("mem_heap.c", "mem_check.c"), False),
    ("event log", ("log.c",), False),
    ("applications", ("appdesc.c", "appmgr.c", "program.c", "module.c", "module_main.c",
                      "module_errors.c", "module_say.c"), False),
    ("multicast", ("mcast.c",), False),
    ("remote tasks", ("task_remote.c",), False),
    ("threads", ("thread.c", "thread_create.c", "thread_events.c", "thread_life.c", "thread_msgq.c",
                 "thread_mutex.c", "thread_policy_fifo.c", "thread_policy_mantis.c", "thread_policy_prio.c",
                 "thread_policy_retos.c", "thread_policy_vop.c", "thread_ready.c",
                 "thread_sem.c", "thread_slice.c", "thread_stack.c", "thread_suspend.c",
                 "thread_wait.c"), False),
    ("bus, migration, time sync", ("bus.c", "bus_app.c", "bus_frame.c", "migrate.c", "migrate_bus.c",
                                   "migrate_image.c", "migrate_layout.c", "migrate_peer.c",
                                   "migrate_peer_cast.c",
                                   "migrate_source.c", "migrate_source_tx.c",
                                   "timesync.c", "state_layout.c"), False),
    ("fixed-block pools", ("pool.c",), False),
)
# Static data whose size the configuration sets (MOTET_HEAP_SIZE, ...).
POOL_SYMBOL = re.compile(r"^(heap|ring|live_starts|members|queue_level|\w+_storage|\w+_used)$")
MAP_ENTRY = re.compile(r"^ (\.(?:text|data|bss|rodata|progmem)\S*|COMMON)"
                       r"(?:\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+))?$")
MAP_NEXT = re.compile(r"^\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)$")


MAP_SYMBOL = re.compile(r"^\s+0x([0-9a-f]+)\s+([A-Za-z_]\w*)$")


def map_sections(map_path):
    """[(section, bytes, object)] of the input sections an image kept; a
    COMMON block is split into its symbols ("COMMON.name"), sized by their
    addresses, so that the pools in it are told from the rest."""
    text = Path(map_path).read_text()
    start = text.find("Linker script and memory map")
    lines = text[start:].splitlines() if start >= 0 else []
    out = []
    for i, line in enumerate(lines):
        m = MAP_ENTRY.match(line)
        if not m:
            continue
        if m.group(2) is not None:
            size, obj = int(m.group(2), 16), m.group(3)
        elif i + 1 < len(lines) and (m2 := MAP_NEXT.match(lines[i + 1])):
            size, obj = int(m2.group(1), 16), m2.group(2)
        else:
            continue
        if m.group(1) != "COMMON":
            out.append((m.group(1), size, obj))
            continue
        base = int(line.split()[1], 16)
        symbols = []
        for follow in lines[i + 1:]:
            sm = MAP_SYMBOL.match(follow)
            if not sm:
                break
            symbols.append((int(sm.group(1), 16), sm.group(2)))
        if not symbols:
            out.append(("COMMON", size, obj))
            continue
        ends = [a for a, _ in symbols[1:]] + [base + size]
        out += [(f"COMMON.{name}", end - at, obj) for (at, name), end in zip(symbols, ends)]
    return out


def _object_name(path):
    m = re.search(r"\(([^)]+)\)$", path)
    name = m.group(1) if m else Path(path).name
    return re.sub(r"\.(obj|o)$", "", name)


def footprint(map_path):
    """{component: {rom, ram, pools}} of one linked image (bytes)."""
    sizes = {}
    for section, size, obj in map_sections(map_path):
        name = _object_name(obj)
        comp = next((c for c, files, _ in COMPONENTS if name in files), None)
        if comp is None or size == 0:
            continue
        entry = sizes.setdefault(comp, {"rom": 0, "ram": 0, "pools": 0})
        if section.startswith("COMMON."):
            symbol = section[len("COMMON."):]
        else:
            symbol = section.split(".", 2)[-1] if section.count(".") >= 2 else ""
        if section.startswith((".text", ".progmem")):
            entry["rom"] += size
        elif section.startswith((".data", ".rodata")):
            # avr-gcc's linker script puts .rodata in .data: constants not
            # kept in program memory (PROGMEM) are copied to RAM at start-up.
            entry["rom"] += size
            entry["ram"] += size
        else:  # .bss, COMMON
            entry["ram"] += size
        if section.startswith((".bss", ".data", "COMMON.")) and POOL_SYMBOL.match(symbol):
            entry["pools"] += size
    return sizes


# ---- the report ------------------------------------------------------------

# Issue #15's targets (event log off), and what the kernel core may take.
TARGETS = {"immediate": 120, "round trip": 400, "irq handler": 200, "timer handler": 350,
           "yield switch": 200, "semaphore hand-off": 300}
CORE_ROM_TARGET, CORE_RAM_TARGET = 6000, 128
# The log's cost per dispatch: immediate dispatch with it on, less with it off.
LOG_PER_DISPATCH_TARGET = 40
ANCHORS = [
    ("CoMOS (MSP430)", "15,616 B", "836 B"),
    ("RETOS", "18,314 B", "748 B"),
    ("embOS (ATmega128)", "1,974 B", "-"),
]


def _fmt_range(lo_hi):
    lo, hi = lo_hi
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def stack_marks(bdir, exe):
    """[(image, stack bytes used)] of every unit-test image and hello (the
    bench images report theirs from their own run)."""
    images = sorted((bdir / "tests").glob("test_*.elf"))
    images += [bdir / "apps" / "hello" / "hello.elf"]
    out = []
    with tempfile.TemporaryDirectory(prefix="motet-avr-stack-") as work:
        summary = Path(work) / "s.json"
        for elf in images:
            if not elf.exists():
                continue
            _harness_run(exe, elf, ["--json", str(summary)])
            run = json.loads(summary.read_text()) if summary.exists() else {}
            used = run.get("stack_used") if run.get("end") == "halted" else None
            out.append((elf.name, used))
            summary.unlink(missing_ok=True)
    return out


def _freq(bdir):
    m = re.search(r"^MOTET_AVR_F_CPU:\w+=(\d+)$", (bdir / "CMakeCache.txt").read_text(), re.M)
    return int(m.group(1)) if m else 8_000_000


def write_report(out, results, sizes, stacks, freq):
    on, off = results["log on"], results["log off"]
    lines = [
        "<!-- SPDX-License-Identifier: MIT -->",
        "# Benchmarks: AVR port (ATmega128 on simavr)",
        "",
        "Generated by `python3 tools/motetlib/port_avr.py bench` (bench/avr/bench_avr.c, "
        "tools/simavr-harness); do not edit by hand.",
        "",
        f"Cycles per operation on an ATmega128 at {freq / 1e6:g} MHz (the same cycle counts at "
        "4 MHz), measured cycle-exactly by the simavr harness from GPIO edges around each "
        "operation (docs/simavr-harness.md). Every figure is the same on each of its 16 runs "
        "unless a range is shown. Kernel configuration: ports/avr/port.cmake; avr-gcc 5.4, -Os.",
        "",
        "| operation | cycles (log on) | cycles (log off) | floor | target | what it includes |",
        "|---|---:|---:|---:|---:|---|",
    ]
    floor = results.get("floor", {})
    rows = [
        ("immediate local dispatch", "immediate", "<= 120",
         "sched_signal() (a message without payload) along a route to a higher-priority "
         "local task, the nested dispatch, the (counting) handler, the return to the sender"),
        ("immediate dispatch by pid", "immediate by pid", "",
         "the same with sched_signal_to(), which finds the task by its pid"),
        ("immediate, sched_send()", "immediate, sched_send()", "",
         "the immediate dispatch with sched_send(out, NULL, 0, 0): the payload's arguments "
         "passed and tested"),
        ("queued dispatch", "queued", "",
         "a send from a nested handler to a task below it (queue insert), and at that "
         "handler's return the queue check, the dequeue and the run of the queued handler; "
         "measured as a chain minus the immediate dispatch"),
        ("message round trip", "round trip", "<= 400",
         "task PING sends to its partner (nested), the partner answers PING (queued: PING is "
         "on the stack), both return, PING's handler runs with the answer; from PING's send "
         "to the answer handler's first instruction. ChibiOS/RT's thread round trip on the "
         "same simulator and compiler: 471 (-O2), 521 (-Os)"),
        ("interrupt to ISR body", "irq body", "",
         "external INT0 (injected while the module sleeps) to the first instruction of the "
         "interrupt body: vector jump and the register saves of PORT_AVR_ISR"),
        ("interrupt to handler", "irq handler", "<= 200",
         "the same interrupt to the first instruction of the task it posts to: the body's "
         "sched_post_isr(), then the dispatch at interrupt exit with interrupts enabled"),
        ("timer expiry to handler", "timer handler", "<= 350",
         "Timer1 compare match (OC1A edge) to the first instruction of the TIMEOUT0 "
         "handler: compare interrupt, delta-list expiry and periodic re-arm, post, exit "
         "dispatch"),
        ("mem_alloc + mem_free", "mem", "", "mem_alloc(32) and mem_free() on a quiet heap"),
        ("slab_alloc + slab_free", "slab", "",
         "slab_alloc() (zeroing a 16-byte object) and slab_free() with its double-free check"),
        ("thread yield switch", "yield switch", "<= 200",
         "bench_avr_threads.c: thread_yield() from one thread to another of its level, from "
         "the call to the first instruction after the other's own thread_yield() (threads "
         "with analyser-sized stacks: no guard; log off: the statistics off too, "
         "MOTET_STATS=0, no switch counter). ChibiOS/RT 221.5, FreeRTOS 263 on the same "
         "simulator and compiler"),
        ("semaphore hand-off", "semaphore hand-off", "<= 300",
         "sem_post() from a thread to a higher one waiting in sem_wait(), to the first "
         "instruction after its sem_wait() returns. ChibiOS/RT 352, FreeRTOS 1,400"),
    ]
    for title, key, target, what in rows:
        lines.append(f"| {title} | {_fmt_range(on['figures'][key])} | "
                     f"{_fmt_range(off['figures'][key])} | "
                     f"{_fmt_range(floor[key]) if key in floor else ''} | {target} | {what} |")
    lines += _verdict_lines(on, off)
    lines += _floor_lines(on, off, floor, results.get("floor unlocked", {}),
                          results.get("floor log", {}), results.get("floor log one", {}))
    lines += _accuracy_lines(off)
    lines += _profile_lines(on, off)
    lines += _footprint_lines(sizes, off)
    lines += _stack_lines(stacks)
    lines += _method_lines(freq)
    Path(out).write_text("\n".join(lines) + "\n")


def _verdict_lines(on, off):
    out = ["", "Against the targets (event log off, the better case):", ""]
    for key, target in TARGETS.items():
        lo = off["figures"][key][0]
        verdict = "met" if lo <= target else f"missed by a factor of {lo / target:.1f}"
        out.append(f"- {key}: {lo} cycles against <= {target}: **{verdict}**.")
    extra = on["figures"]["immediate"][0] - off["figures"]["immediate"][0]
    verdict = "met" if extra <= LOG_PER_DISPATCH_TARGET else "missed"
    out.append(f"- the event log's cost per immediate dispatch: {extra} cycles against <= "
               f"{LOG_PER_DISPATCH_TARGET}: **{verdict}** (two 6-byte slots, RUN and END, "
               "each with the counter's 16 bits; the floor below says what any log costs).")
    out.append("- The breakdown below says where the cycles go. An immediate dispatch is the "
               "send's checks, the route's destination and its gate compared with the running "
               "priority under the interrupt lock, a frame pushed into the task's control "
               "block, the indirect call, the frame popped under the lock and one comparison "
               "with the queue's top level; about 30 of its cycles are the benchmark's own "
               "code (the operation's call and the counting handler).")
    return out


def _against_floor(key, off, floor, bare=""):
    """One line: Motet's figure (log off) against the floor and the target."""
    lo, base = off["figures"][key][0], floor[key][0]
    return (f"- {key}: Motet {lo}, floor {base}{bare}. Motet is {lo - base} cycles "
            f"({(lo - base) / base:.0%}) above the floor; the target, <= {TARGETS[key]}, "
            f"is {'below' if TARGETS[key] < base else 'above'} it.")


def _floor_lines(on, off, floor, unlocked, logged, logged_once):
    if not floor:
        return []
    out = ["", "## The floor", "",
           "The floor column is bench/avr/floor_avr.c: the operations the dispatch rules need "
           "for these two figures (a route naming its task, the gate compared with the running "
           "priority, the frame pushed into and popped from the control block with interrupts "
           "off, the indirect call with four arguments, the queue's top level compared after "
           "the return; for the round trip also a block from a free list appended to its "
           "level's FIFO, and the drain), written straight in one file with no kernel around "
           "them and measured like Motet, with the same handlers, compiler and flags. Built "
           "without the interrupt lock (which the rules need: a handler run at an interrupt's "
           "exit may kill or run a task between the test and the push) it shows what the lock "
           "itself costs.", ""]
    for key in ("immediate", "round trip"):
        bare = f"; without the lock {unlocked[key][0]}" if key in unlocked else ""
        out.append(_against_floor(key, off, floor, bare))
    if "timer handler" in floor:
        out += ["", "The timer row's floor is bench/avr/floor_avr_timer.c: a compare "
                "interrupt that calls the handler at its exit, through the port's own entry "
                "and idle loop (from the idle loop's SLEEP it saves only SREG and one "
                "register, as Motet's does), one read of the counter with its top byte "
                "compared for the 32-bit time's wraps, a delta list whose head is popped, its "
                "base moved to the expired deadline and the periodic timer linked again, the "
                "compare armed for the new head and the counter read again after arming, the "
                "expiry's message left in a slot after its task's gate is compared with the "
                "interrupted code and the queue's top, and at the exit the frame pushed, "
                "interrupts on and the handler called with four arguments; measured like "
                "Motet's row (OC1A edge to the handler's marker, from idle).", "",
                _against_floor("timer handler", off, floor)]
    if "yield switch" in floor:
        out += ["", "The thread rows' floor is bench/avr/floor_avr_threads.c: what a yield to "
                "an equal and a semaphore hand-off to a higher thread need (a FIFO per level; a "
                "yield takes the head of its own level, nobody above a running thread being "
                "ready; a hand-off compares with the best ready thread, found in a bitmap "
                "searched as the kernel searches it; one byte of the kernel stack's claim "
                "compared, the interrupt lock around the decision and the switch, the "
                "wait list kept best first, the two operations as calls) around the port's own "
                "port_context_switch() (18 registers and the stack pointer, 90 cycles of each "
                "figure), measured with the same markers and windows as bench_avr_threads.c: "
                "no switch counter, canary, timeout, suspension or policy option.", ""]
        out += [_against_floor(key, off, floor) for key in ("yield switch", "semaphore hand-off")]
    if logged and logged_once:
        least = logged["immediate"][0] - floor["immediate"][0]
        once = logged_once["immediate"][0] - floor["immediate"][0]
        extra = on["figures"]["immediate"][0] - off["figures"]["immediate"][0]
        out.append(f"- the event log per immediate dispatch: Motet {extra}, floor {least} "
                   "(the floor built with FLOOR_LOG: what a slice, its causality and its "
                   "times need, the receiver, sender and port at the start and the task and "
                   "result at the end, each with the counter's 16 bits, in 6-byte slots of a "
                   "ring whose laps are counted, written inside the dispatch's own critical "
                   f"sections); {once} with one 9-byte slot a dispatch instead (FLOOR_LOG_ONE: "
                   "written at the end, the start's time, ring offset and port kept in the "
                   f"frame meanwhile). The target, <= {LOG_PER_DISPATCH_TARGET}, is "
                   f"{'below' if LOG_PER_DISPATCH_TARGET < min(least, once) else 'above'} "
                   "both.")
    return out


def _accuracy_lines(off):
    body = off["figures"]["irq body"][0]
    return [
        "",
        "## What simavr 1.6 does not charge",
        "",
        "simavr charges no cycles for the hardware's interrupt response and none for the "
        "wake-up from sleep; the interrupt figures above include only the vector jump "
        f"(3 cycles) and the code (e.g. {body} cycles from INT0 to the interrupt body). A real "
        "ATmega128 adds:",
        "",
        "- 4 cycles of interrupt response (push of the return address, clearing I) to every "
        "interrupt figure;",
        "- 4 more cycles when the interrupt wakes the core from sleep;",
        "- the start-up time of the sleep mode: none from idle (the clock runs; the timer "
        "figures are measured from idle); from power-save, the oscillator start-up the fuses "
        "select (e.g. 1K or 16K clock cycles for a crystal, 6 for an external clock). The "
        "interrupt figures are measured from power-save, the mode the AVR port uses when "
        "nothing is due.",
        "",
        "So on a chip: interrupt to handler = the figure above + 8 cycles + the power-save "
        "start-up; timer expiry to handler = the figure above + 8 cycles.",
    ]


def _profile_lines(on, off):
    out = ["", "## Where the cycles go (event log off)", "",
           "Self cycles per run of the heaviest functions inside each measured window "
           "(harness `--profile-gate`); the window includes the marker and call overhead.", ""]
    for name, funcs in off["profiles"].items():
        parts = ", ".join(f"{fn} {c:.0f}" for c, fn in funcs)
        out.append(f"- {name}: {parts}")
    return out


def core_footprint(sizes):
    """The footprint table's rows and totals from {image config: footprint()}
    of CORE_IMAGES: [(component, [rom...], [fixed RAM...], [pools...])] in
    CORE_IMAGES order, and {"all"|"old": (roms, fixed, pools)}."""
    configs = [c for c, _ in CORE_IMAGES]
    rows, totals = [], {"all": None, "old": None}
    zero = {"rom": 0, "ram": 0, "pools": 0}
    sums = {k: [[0] * len(configs) for _ in range(3)] for k in totals}
    for comp, _, counted_before in COMPONENTS:
        parts = [sizes[c].get(comp, zero) for c in configs]
        row = ([p["rom"] for p in parts], [p["ram"] - p["pools"] for p in parts],
               [p["pools"] for p in parts])
        if not any(any(v) for v in row):
            continue
        rows.append((comp, *row))
        for key in ("all", "old") if counted_before else ("all",):
            for total, values in zip(sums[key], row):
                for i, v in enumerate(values):
                    total[i] += v
    return rows, {k: tuple(v) for k, v in sums.items()}


def _footprint_lines(sizes, off):
    rows, totals = core_footprint(sizes)
    n = len(CORE_IMAGES)
    heads = [c for c, _ in CORE_IMAGES]
    out = ["", "## Footprint", "",
           "Bytes per kernel component as linked into the image of one application that "
           "uses only tasks, messages and timers, and an interrupt that posts to a task "
           "(bench/avr/core_avr.c), from its linker maps: against the kernel core (the core "
           "configuration, cmake/core_config.cmake: event log, threads, bus, multicast, "
           "application manager, statistics, remote tasks and heap payloads compiled out) "
           "and, the same code, against the port's default kernel (the full kernel). "
           "ROM = .text + .data (initial values), RAM = .data + .bss, .data including the "
           "constants not kept in program memory (.rodata, which avr-gcc copies to RAM). "
           "Pools are the static arrays whose size the "
           "configuration sets (heap, slab storage, log ring, queue levels, ...); fixed RAM "
           "is the rest. A component an image does not link shows 0.", "",
           "| component | " + " | ".join(f"ROM ({h})" for h in heads) + " | " +
           " | ".join(f"RAM fixed ({h})" for h in heads) + " | " +
           " | ".join(f"RAM pools ({h})" for h in heads) + " |",
           "|---|" + "---:|" * (3 * n)]
    for comp, rom, fixed, pools in rows:
        out.append(f"| {comp} | " + " | ".join(str(v) for v in rom + fixed + pools) + " |")
    for key, title in (("all", "**all kernel and port code linked**"),
                       ("old", "scheduler, slab caches, timers, boot, port")):
        rom, fixed, pools = totals[key]
        out.append(f"| {title} | " + " | ".join(str(v) for v in rom + fixed + pools) + " |")
    core_rom_all, core_fixed = totals["all"][0][0], totals["all"][1][0]
    core_rom_old = totals["old"][0][0]
    met = lambda v, t: "met" if v <= t else "missed"
    out += ["",
            f"- The kernel core is everything the core image links from the kernel and the "
            f"port: ROM {core_rom_all} B, of which the heap (task state, routes and payload "
            f"copies live there) {rows_value(rows, 'heap', 0)} B; fixed static RAM "
            f"{core_fixed} B.",
            f"- Against the targets (log off): ROM {core_rom_old} B without the heap (the "
            f"components counted before: scheduler, slab caches, timers, boot and port) "
            f"against <= {CORE_ROM_TARGET} B ({met(core_rom_old, CORE_ROM_TARGET)}), "
            f"{core_rom_all} B with it ({met(core_rom_all, CORE_ROM_TARGET)}); fixed static "
            f"RAM {core_fixed} B against <= {CORE_RAM_TARGET} B "
            f"({met(core_fixed, CORE_RAM_TARGET)}).",
            f"- The full kernel, for the same application: ROM {totals['all'][0][1]} B (log "
            f"off) and {totals['all'][0][2]} B (log on); fixed static RAM "
            f"{totals['all'][1][1]} B and {totals['all'][1][2]} B.",
            "- Task control block and queue entry, as the benchmark prints: `" +
            off["console"].strip().splitlines()[0] + "` (the control block holds the task's "
            "frame on the shared stack: docs/architecture.md).",
            "- Whole images (avr-size; kernel, port, application, avr-libc and libgcc such "
            "as printf and 64-bit division): " +
            "; ".join(f"{n} {rom} B flash, {ram} B static RAM of 4096"
                      for n, (rom, ram) in sizes.get("images", {}).items()) + ".",
            "- Anchors (whole kernels, as published): " +
            "; ".join(f"{n} {rom} ROM, {ram} RAM" for n, rom, ram in ANCHORS) + "."]
    return out


def rows_value(rows, comp, image):
    """ROM of component `comp` in CORE_IMAGES[image] (0 if not linked)."""
    return next((rom[image] for c, rom, _, _ in rows if c == comp), 0)


def _stack_lines(stacks):
    out = ["", "## Shared stack high-water mark", "",
           "The port paints the free RAM between the static data and the top of the stack "
           "before main() and reports, at halt, how much of it was overwritten "
           "(port_avr_stack_used(), the harness's `stack` figure). Unit-test images keep the "
           "stack in external SRAM but run the same kernel code.", "",
           "| image | stack bytes used |", "|---|---:|"]
    for name, used in stacks:
        out.append(f"| {name} | {used if used is not None else 'did not halt'} |")
    return out


def _method_lines(freq):
    return ["", "## Method", "",
            "- Each operation is a noinline function called between `SBI PORTA,n` and "
            "`CBI PORTA,n`; an empty function is the baseline (SBI, CALL, RET). One warm-up run, "
            "then 16 measured runs; every target handler counts its runs and the image halts "
            "with an error if an operation did not produce exactly the runs it should.",
            "- Edges are stamped with the cycle at which the writing instruction starts. The "
            "interrupt is a low pulse on INT0 injected by the harness at chosen cycles, 40,000 "
            "cycles apart, while the module sleeps in power-save; the timer is a periodic "
            "1000-tick timer whose compare matches toggle OC1A in hardware.",
            "- Deterministic: simavr runs the same image to the same cycle every time.",
            f"- Clock: {freq} Hz; Timer1 prescaler 256 (one tick = 256 cycles).",
            "- The harness corrects simavr 1.6 where it differs from the chip (the interrupt "
            "delay after SEI/RETI, TCNT kept while a timer is stopped, write-one-to-clear "
            "flags): docs/simavr-harness.md."]


def bench(build_dir=None, harness=None, out=None):
    """Measure both bench images and write the report; an exit status."""
    bdir = Path(build_dir or os.environ.get("MOTET_AVR_BUILD_DIR") or ROOT / "build-avr")
    bdir = bdir if bdir.is_absolute() else ROOT / bdir
    exe = harness_or_exit(harness or str(bdir / "tools" / HARNESS_NAME))
    out = out or ROOT / "docs" / "benchmarks-avr.md"
    try:
        results, sizes = {}, {}
        for config, name in BENCH_IMAGES:
            elf = bdir / "bench" / "avr" / name
            if not elf.exists():
                raise BenchError(f"{elf} was not built (cmake --build {bdir})")
            with tempfile.TemporaryDirectory(prefix="motet-avr-bench-") as work:
                results[config] = measure_image(exe, elf, work)
                threads = bdir / "bench" / "avr" / dict(THREAD_IMAGES)[config]
                if not threads.exists():
                    raise BenchError(f"{threads} was not built (cmake --build {bdir})")
                results[config]["figures"].update(measure_threads(exe, threads, work))
            figs = results[config]["figures"]
            print(f"bench: {config}: " + ", ".join(f"{k} {_fmt_range(v)}"
                                                  for k, v in figs.items()), flush=True)
        for config, name in FLOOR_IMAGES:
            elf = bdir / "bench" / "avr" / name
            if not elf.exists():
                raise BenchError(f"{elf} was not built (cmake --build {bdir})")
            with tempfile.TemporaryDirectory(prefix="motet-avr-floor-") as work:
                results[config] = measure_floor(exe, elf, work)
            print(f"bench: {config}: " + ", ".join(f"{k} {_fmt_range(v)}"
                                                  for k, v in results[config].items()), flush=True)
        for label, name, measure in (("timer floor", FLOOR_TIMER_IMAGE, measure_floor_timer),
                                     ("thread floor", FLOOR_THREADS_IMAGE, measure_threads)):
            elf = bdir / "bench" / "avr" / name
            if not elf.exists():
                raise BenchError(f"{elf} was not built (cmake --build {bdir})")
            with tempfile.TemporaryDirectory(prefix="motet-avr-floor-") as work:
                figures = measure(exe, elf, work)
            results["floor"].update(figures)
            print(f"bench: {label}: " + ", ".join(f"{k} {_fmt_range(v)}"
                                                  for k, v in figures.items()), flush=True)
        for config, name in CORE_IMAGES:
            elf = bdir / "bench" / "avr" / name
            if not elf.exists():
                raise BenchError(f"{elf} was not built (cmake --build {bdir})")
            sizes[config] = footprint(Path(str(elf) + ".map"))
        images = {}
        for elf in [bdir / "apps" / "hello" / "hello.elf"] + \
                   [bdir / "bench" / "avr" / name for _, name in BENCH_IMAGES + CORE_IMAGES]:
            if elf.exists():
                sec = section_sizes(elf)
                images[elf.name] = (sec.get(".text", 0) + sec.get(".data", 0), static_ram(sec))
        sizes["images"] = images
        stacks = stack_marks(bdir, exe)
        stacks += [(name, results[config]["run"].get("stack_used")) for config, name in BENCH_IMAGES]
        write_report(out, results, sizes, stacks, _freq(bdir))
    except (BenchError, OSError, subprocess.SubprocessError) as e:
        print(f"port_avr: bench: error: {e}", file=sys.stderr)
        return 1
    print(f"bench: wrote {out}")
    return 0


# ---- command line ----------------------------------------------------------

def _parser():
    p = argparse.ArgumentParser(
        prog="port_avr.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="run an image under motet-simavr, exit with its status")
    r.add_argument("elf")
    r.add_argument("--freq", type=int, help="CPU clock in Hz (default: the image's own)")
    r.add_argument("--harness", help="path of motet-simavr")
    r.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help="host seconds before giving up (default: %(default)s)")
    c = sub.add_parser("check-ram", help="fail unless an image leaves room for the stack")
    c.add_argument("elf")
    b = sub.add_parser("bench", help="measure the AVR benchmarks, write docs/benchmarks-avr.md")
    b.add_argument("--build-dir", default=None,
                   help="AVR build directory (default: $MOTET_AVR_BUILD_DIR or build-avr)")
    b.add_argument("--harness", help="path of motet-simavr")
    b.add_argument("--out", default=str(ROOT / "docs" / "benchmarks-avr.md"),
                   help="report file (default: %(default)s)")
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    # `port_avr.py IMAGE.elf` is `run IMAGE.elf` (the runner form).
    if argv and argv[0] not in ("run", "check-ram", "bench", "-h", "--help"):
        argv.insert(0, "run")
    args = _parser().parse_args(argv)
    if args.cmd == "run":
        return run(args.elf, args.timeout, args.freq, args.harness)
    if args.cmd == "check-ram":
        return check_ram(args.elf)
    if args.cmd == "bench":
        return bench(args.build_dir, args.harness, args.out)
    _parser().print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
