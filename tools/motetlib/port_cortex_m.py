# SPDX-License-Identifier: MIT
"""Run Cortex-M images of Motet under QEMU (mps2-an385), deterministically.

    python3 tools/motetlib/port_cortex_m.py [--timeout S] [--icount-shift N] IMAGE.elf

boots the image with -icount (one instruction per 2^N ns of virtual time,
no real-time pacing: every run is identical), passes the UART0 console
through to standard output and exits with the program's status, which the
firmware reports through semihosting (ports/cortex-m/startup.c). A program
that does not finish within the timeout (wall clock) is killed and the
status is 124, with a message on standard error.

Also the home of the Cortex-M benchmarks: `bench(build_dir)` runs the
images of bench/cortex-m (and the unit-test images, for their stack
high-water marks), reads the footprint from the archives and linker maps,
and writes docs/benchmarks-cortex-m.md; `--bench BUILD_DIR` does the same
from the command line. How each figure is measured is written into that
document (see render()).
"""

import argparse
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

QEMU = "qemu-system-arm"
MACHINE = "mps2-an385"
# Generous: QEMU takes every access to a 1 KB page that holds a thread's
# 32-byte MPU guard region (ports/cortex-m/guard.c) through its slow path,
# and flushes its TLB at every write of a region, so images that switch
# threads all the time (bench_tm_threads) take several times the host time
# they took without the guard; the instructions counted are the same.
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_ICOUNT_SHIFT = 0
TIMEOUT_STATUS = 124


class RunnerError(RuntimeError):
    pass


def qemu_command(elf, icount_shift=DEFAULT_ICOUNT_SHIFT):
    """The QEMU command line that runs `elf` deterministically."""
    return [QEMU, "-M", MACHINE, "-display", "none", "-monitor", "none",
            "-serial", "stdio", "-semihosting-config", "enable=on,target=native",
            "-icount", f"shift={icount_shift},align=off,sleep=off",
            "-kernel", str(elf)]


def _qemu_path():
    path = shutil.which(QEMU)
    if path is None:
        raise RunnerError(f"{QEMU} not found (install qemu-system-arm, or "
                          f"`./motet setup --all`)")
    return path


def _pump(src, sinks):
    """Copy QEMU's output to each sink (a binary stream or a bytearray); a
    stream that closes (a pipe to `head`) is dropped, the others go on."""
    sinks = list(sinks)
    for chunk in iter(lambda: src.read1(4096), b""):
        for sink in list(sinks):
            if isinstance(sink, bytearray):
                sink.extend(chunk)
                continue
            try:
                sink.write(chunk)
                sink.flush()
            except (BrokenPipeError, ValueError):
                sinks.remove(sink)


def run_captured(elf, timeout=DEFAULT_TIMEOUT_S, icount_shift=DEFAULT_ICOUNT_SHIFT,
                 echo=True):
    """Run `elf`; returns (status, console bytes). Status 124: timed out."""
    elf = Path(elf)
    if not elf.is_file():
        raise RunnerError(f"no such image: {elf}")
    cmd = qemu_command(elf, icount_shift)
    cmd[0] = _qemu_path()
    out = bytearray()
    sinks = [out] + ([sys.stdout.buffer] if echo else [])
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    pump = threading.Thread(target=_pump, args=(proc.stdout, sinks), daemon=True)
    pump.start()
    try:
        status = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pump.join(timeout=5)
        sys.stdout.flush()
        print(f"\ncortex-m: {elf.name} did not finish within {timeout:g} s of wall-clock "
              f"time; QEMU killed (the program never called port_halt(): a hang, a "
              f"lock-up after a fault, or a wait with no event due)", file=sys.stderr)
        return TIMEOUT_STATUS, bytes(out)
    pump.join(timeout=5)
    return status, bytes(out)


def run(elf, timeout=DEFAULT_TIMEOUT_S, icount_shift=DEFAULT_ICOUNT_SHIFT):
    """Run `elf`, console to standard output; returns its exit status."""
    return run_captured(elf, timeout, icount_shift, echo=True)[0]


# ---- benchmarks ---------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "docs" / "benchmarks-cortex-m.md"
CONFIGS = (("log on", ""), ("log off", "_nolog"))
LOOP_SHIFT = 0     # bench_kernel, bench_tm: one instruction per ns
LATENCY_SHIFT = 7  # bench_latency: 128 ns per instruction, 40 ns per clock
NS_PER_CLOCK = 40  # the 25 MHz timer clock of mps2-an385
TM_INTERVAL_MS = 100

# CoMOS and RETOS footprints quoted in their papers (MSP430 builds).
ANCHORS = (("CoMOS (MSP430)", 15616, 836), ("RETOS (MSP430)", 18314, 748))

# Kernel objects by component, for the footprint table; anything else is
# listed under its own name.
COMPONENTS = (
    ("scheduler", ("dispatch.c", "isr_exit.c", "sched_run.c", "sched_query.c", "sched_k.c", "send.c",
                   "post.c", "task.c", "queue.c", "bit_table.c")),
    ("memory: heap and slabs", ("mem_heap.c", "mem_check.c", "slab.c")),
    ("time: delta timers", ("timer.c", "timer_budget.c", "timer_phase.c")),
    ("event log", ("log.c",)),
    ("multicast", ("mcast.c",)),
    ("applications: descriptions, manager, programs", ("appdesc.c", "appmgr.c", "program.c")),
    ("boot, error names", ("boot.c", "errors.c")),
)


class BenchError(RuntimeError):
    pass


@dataclass(frozen=True)
class Op:
    """A figure from bench_kernel: op minus baseline, per operation."""
    name: str
    op: str
    baseline: str
    includes: str


OPS = (
    Op("immediate local dispatch", "immediate", "empty",
       "sched_signal() (a message without payload) along a route to a higher-priority local "
       "task, the nested dispatch on the shared stack, the (counting) handler, the return to "
       "the sender"),
    Op("immediate dispatch by pid", "immediate_pid", "empty",
       "the same with sched_signal_to(), which finds the task by its pid"),
    Op("immediate, sched_send()", "immediate_send", "empty",
       "the immediate dispatch with sched_send(out, NULL, 0, 0): the payload's arguments "
       "passed and tested"),
    Op("queued dispatch", "chain", "immediate",
       "a send to a lower-priority task from a nested handler (queue insert), then at that "
       "handler's return the queue check, dequeue and run; a chain minus the immediate dispatch "
       "that carries it"),
    Op("message round trip", "roundtrip", "immediate",
       "task A sends to B (equal priority: nested), B replies to A (on the stack: queued), A "
       "handles the reply after returning; minus the immediate dispatch that starts A"),
    Op("interrupt post to handler", "irq", "empty",
       "pending a spare NVIC line, the interrupt body's sched_post_isr(), the exit's one "
       "decision (sched_isr_exit_choice()), the frame the line's entry fabricates into the "
       "thread-mode trampoline, the drain running the (counting) handler, NMI back to the "
       "interrupted code"),
    Op("interrupt post, queued", "irq_queued", "immediate",
       "a handler pends a spare line whose body posts to a task below it (the post waits: "
       "rule 3), the exit's decision finds nothing to run, and the handler's return runs the "
       "message (rule 5): Thread-Metric's interrupt scenario as message tasks run it, minus "
       "the immediate dispatch that carries it"),
    Op("exit dispatch with nothing to run", "irq_nopost", "empty",
       "the same interrupt with a body that posts nothing: the line's dispatch and the exit's "
       "decision, under the interrupt mask, that finds nothing to run "
       "(sched_isr_exit_choice()), so no trampoline or NMI"),
    Op("bare interrupt (Super-Simple-Tasker floor)", "irq_direct", "empty",
       "the same line with a body that runs without the kernel's hooks: raise, the port's "
       "line dispatch, a one-line body; the hardware does the rest"),
    Op("mem_alloc + mem_free", "mem", "empty",
       "mem_alloc(32) and mem_free() on a quiet heap, owner bookkeeping and statistics"),
    Op("slab_alloc + slab_free", "slab", "empty",
       "slab_alloc() (zeroing 16 bytes) and slab_free() with its double-free check"),
)

TM_TESTS = (
    ("cooperative", "five equal-priority workers take turns from the queue in FIFO order: "
                    "each runs to completion and sends itself its next turn, which waits "
                    "behind the other four (on the stack: queued), as a thread relinquishes "
                    "to the next of its level"),
    ("preemptive", "five tasks of rising priority pass a token round a ring, each send "
                   "preempting at once (nested); the top one's send to the bottom one waits"),
    ("interrupt", "a task pends a spare line; the interrupt posts back to that task (equal "
                  "priority: it waits, no preemption)"),
    ("interrupt_preemption", "a task pends a line; the interrupt posts to a higher task, which "
                             "preempts at interrupt exit and sends back"),
    ("message", "a task sends a 16-byte item to a message queue (msgq.h) and receives it "
                "back, as Thread-Metric's thread does (timeout 0: it never waits); a kernel "
                "without threads has no message queues and runs 16-byte messages down to a "
                "lower task (queued, payload copied) and back up (nested) instead"),
    ("synchronisation", "a task try-takes and gives a binary semaphore (sem_try_wait(), "
                        "sem_post()); a kernel without threads has no semaphores and runs a "
                        "lock-server task's message handshake (acquire, grant, release) "
                        "instead"),
    ("memory", "a task allocates and frees a 128-byte block of a fixed-block pool "
               "(pool_alloc(), pool_free())"),
)

# The cooperative hand-over's parts behind its proposed target (docs/costs.md,
# "The queued hand-over"), counted by motet-profile.so on
# bench_tm_nolog and along the same path in floor_cm's disassembly: the floor of the
# kernel's part, and the worker's own code (its count and its next turn's send; the
# benchmark checks the turn order in the first rounds and at the interval's end).
COOP_HANDOVER_FLOOR = 82
COOP_WORKER_CODE = 19

# The scenarios whose task version uses message queues or semaphores, which
# a kernel without threads does not have: bench_tm.c runs a message-task
# version of them there.
TM_OTHER_WITHOUT_THREADS = ("message", "synchronisation")

# The thread versions (bench_tm_threads.c), by Thread-Metric's definitions,
# with the figures measured outside the project in the same harness setup
# (issue 17: Cortex-M3 under QEMU -icount shift=0, log off): FreeRTOS 11, and
# ThreadX 6.4's block pool for memory.
TMT_TESTS = (
    ("cooperative", 54, "five threads of one level, each counting and yielding in turn"),
    ("preemptive", 262, "five threads of rising levels: each resumes the next higher (which "
                        "runs at once) and suspends itself"),
    ("interrupt", 122, "a thread pends a spare line; the interrupt posts a semaphore the "
                       "thread then takes"),
    ("interrupt_preemption", 337, "a low thread pends a line; the interrupt resumes a higher "
                                  "thread, which runs at the interrupt's exit and suspends"),
    ("message", 194, "one thread sends a 16-byte message to a queue and receives it back"),
    ("synchronisation", 120, "one thread takes and gives a semaphore"),
    ("memory", 59, "one thread allocates and frees a 128-byte block from a pool (against "
                   "ThreadX's block pool; FreeRTOS 11 has none)"),
)


THREAD_PAIRS = (
    ("post_wait_equal", "thread -> thread via semaphore, equals",
     "A posts B's semaphore (B ready, no preemption among equals) and waits on its own "
     "(switch to B); B posts back and waits (switch to A): two posts, two waits, two "
     "switches"),
    ("post_preempt", "thread -> higher thread via semaphore",
     "A's post switches to the higher B at once; B posts back and waits (switch to A); A's "
     "wait finds the count: two posts, two waits, two switches"),
    ("isr_wake", "interrupt post wakes a higher thread",
     "A pends a line whose body posts B's semaphore; the exit dispatch, on A's stack, "
     "switches to B, whose wait switches back; NMI returns to A: interrupt, trampoline, "
     "two switches"),
)


def _bench_dir(bdir):
    return Path(bdir) / "bench" / "cortex-m"


def _image(bdir, name):
    path = _bench_dir(bdir) / name
    if not path.is_file():
        raise BenchError(f"{path} was not built (configure with -DMOTET_PORT=cortex-m and "
                         f"build)")
    return path


def _run_image(path, shift):
    status, out = run_captured(path, timeout=DEFAULT_TIMEOUT_S, icount_shift=shift, echo=False)
    text = out.decode(errors="replace")
    if status != 0:
        raise BenchError(f"{path.name} (icount shift {shift}) failed with status {status}:\n"
                         f"{text[-3000:]}")
    return text


def _build(bdir):
    """Bring the images up to date if `bdir` is a configured build tree,
    under its lock as every build of a tree (build.rebuild_captured())."""
    try:
        from . import build
    except ImportError:  # run as a script (ctest, --bench): motetlib from tools/
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from motetlib import build
    res = build.rebuild_captured(bdir)
    if res is not None and res.returncode != 0:
        raise BenchError(f"build failed in {bdir}:\n{res.stdout[-3000:]}{res.stderr[-3000:]}")


def _instructions(clocks, shift):
    return clocks * NS_PER_CLOCK / (1 << shift)


def _fmt(value):
    """An integer when the value is one within the measuring grain (0.08 for the
    loops, whose clocks are 40 instructions apart over 1,000 calls)."""
    return f"{value:.0f}" if abs(value - round(value)) <= 0.1 else f"{value:.1f}"


def loop_ops(text):
    """The `op <name> <n> <clocks>` lines of bench_kernel or floor_cm -> {op: instructions
    per call}, the loop's fixed costs cancelled between the two counts."""
    loops = {}
    for m in re.finditer(r"^op (\w+) (\d+) (\d+)$", text, re.M):
        loops.setdefault(m[1], {})[int(m[2])] = int(m[3])
    per_op = {}
    for op, runs in loops.items():
        (n1, c1), (n2, c2) = sorted(runs.items())
        per_op[op] = _instructions(c2 - c1, LOOP_SHIFT) / (n2 - n1)
    return per_op


def kernel_ops(text):
    """bench_kernel output -> ({op: instructions per call}, timer instructions per expiry)."""
    per_op = loop_ops(text)
    steals = sorted((int(k), int(c), int(i)) for k, c, i in
                    re.findall(r"^steal timer (\d+) (\d+) (\d+)$", text, re.M))
    if len(per_op) < len(OPS) or len(steals) != 2:
        raise BenchError(f"bench_kernel printed too little:\n{text[-2000:]}")
    (k1, c1, i1), (k2, c2, i2) = steals
    timer = (_instructions(c2 - c1, LOOP_SHIFT) - 4 * (i2 - i1)) / (k2 - k1)
    return per_op, timer


# The floor image (floor_cm.c): the rules' operations alone, measured as
# bench_kernel measures Motet; the figures compared, by their OPS names.
FLOOR_OPS = ("immediate local dispatch", "queued dispatch", "message round trip",
             "interrupt post, queued")
# The targets for these figures (log off), where it sets one.
TARGETS = {"immediate local dispatch": 60}


def floor_ops(text):
    """floor_cm output -> {figure: instructions}, as for Motet's OPS of the same name."""
    per_op = loop_ops(text)
    by_name = {op.name: op for op in OPS}
    try:
        return {name: per_op[by_name[name].op] - per_op[by_name[name].baseline]
                for name in FLOOR_OPS}
    except KeyError as e:
        raise BenchError(f"floor_cm printed too little ({e}):\n{text[-2000:]}") from None


def _render_floor(ops, floor, w):
    off = CONFIGS[1][0]
    by_name = {op.name: op for op in OPS}
    w("### The floor")
    w("")
    w("bench/cortex-m/floor_cm.c: the operations the dispatch rules need for these figures "
      "(a gate byte against the running priority, the frame in the control block pushed and "
      "popped under the interrupt lock, the handler's arguments, the queue check after it, a "
      "block from a free list joining its level's FIFO and bitmap; for an interrupt's post, "
      "the port's line dispatch for a body without the kernel's hooks and the test at its "
      "exit), written straight in one "
      "file with no kernel around them: no lookup by pid, payload, ownership, log, thread, "
      "migration or kill state, argument checks or error paths. The same driver, tasks, "
      "counting handlers and timed loops as bench_kernel.c, so the benchmark's own "
      "instructions (the call and its check, the handler, its pid read) are in both.")
    w("")
    w(f"| figure | Motet ({off}) | floor | above the floor | target |")
    w("|---|---:|---:|---:|---:|")
    for name in FLOOR_OPS:
        op = by_name[name]
        motet = ops[off][op.op] - ops[off][op.baseline]
        target = f"<= {TARGETS[name]}" if name in TARGETS else ""
        w(f"| {name} | {_fmt(motet)} | {_fmt(floor[name])} | {_fmt(motet - floor[name])} "
          f"({(motet - floor[name]) / floor[name]:.0%}) | {target} |")
    w("")
    below = [n for n in FLOOR_OPS if n in TARGETS and TARGETS[n] < floor[n]]
    if below:
        w("Below the floor, so out of reach of any structure that keeps the rules: "
          + ", ".join(f"{n} (target {TARGETS[n]}, floor {_fmt(floor[n])})" for n in below)
          + ".")
        w("")


def latencies(text):
    """bench_latency output -> {name: instructions}; repeats must agree within one."""
    raw = {}
    for name, clocks in re.findall(r"^(read|irq|irq_direct|timer) (\d+)$", text, re.M):
        raw.setdefault(name, []).append(int(clocks))
    if set(raw) != {"read", "irq", "irq_direct", "timer"}:
        raise BenchError(f"bench_latency printed too little:\n{text[-2000:]}")
    # Between two reads a whole number of instructions ran, and at this shift
    # the clock pins it down to +-0.32: round each sample.
    instr = {k: [round(_instructions(c, LATENCY_SHIFT)) for c in v] for k, v in raw.items()}
    read = min(instr["read"])
    out = {}
    for name in ("irq", "irq_direct", "timer"):
        values = [v - read for v in instr[name]] if name != "timer" else instr[name]
        if max(values) - min(values) > 1:
            raise BenchError(f"bench_latency: {name} varies across repeats: {values}")
        out[name] = sum(values) / len(values)
    return out


def thread_metric(text):
    """bench_tm output -> {test: (iterations, instructions per iteration, stack bytes)}."""
    out = {}
    for name, n, clocks, stack in re.findall(r"^tm (\w+) (\d+) (\d+) (\d+)$", text, re.M):
        out[name] = (int(n), _instructions(int(clocks), LOOP_SHIFT) / int(n), int(stack))
    if set(out) != {t for t, _ in TM_TESTS}:
        raise BenchError(f"bench_tm printed too little:\n{text[-2000:]}")
    return out


def thread_metric_threads(text):
    """bench_tm_threads output -> {test: (iterations, instructions per iteration)}."""
    out = {}
    for name, n, clocks in re.findall(r"^tmt (\w+) (\d+) (\d+)$", text, re.M):
        out[name] = (int(n), _instructions(int(clocks), LOOP_SHIFT) / int(n))
    if set(out) != {t for t, _, _ in TMT_TESTS}:
        raise BenchError(f"bench_tm_threads printed too little:\n{text[-2000:]}")
    return out


def thread_figures(text):
    """bench_threads output -> {figure: instructions} and stack lines."""
    loops = {}
    for name, n, clocks in re.findall(r"^thr (\w+) (\d+) (\d+)$", text, re.M):
        loops.setdefault(name, {})[int(n)] = int(clocks)
    steals = sorted((int(k), int(c), int(i)) for k, c, i in
                    re.findall(r"^steal sleep (\d+) (\d+) (\d+)$", text, re.M))
    allowance = re.search(r"^allowance (\d+) (\d+) (\d+)$", text, re.M)
    exitstack = re.search(r"^exitstack (\d+) (\d+)$", text, re.M)
    stacks = {name: (int(hw), int(size))
              for name, hw, size in re.findall(r"^stack (\w+) (\d+) (\d+)$", text, re.M)}
    if (set(loops) != {p for p, _, _ in THREAD_PAIRS} or len(steals) != 2 or not allowance
            or not exitstack):
        raise BenchError(f"bench_threads printed too little:\n{text[-2000:]}")
    out = {}
    for name, runs in loops.items():
        (n1, c1), (n2, c2) = sorted(runs.items())
        out[name] = _instructions(c2 - c1, LOOP_SHIFT) / (n2 - n1)
    (k1, c1, i1), (k2, c2, i2) = steals
    out["sleep"] = (_instructions(c2 - c1, LOOP_SHIFT) - 4 * (i2 - i1)) / (k2 - k1)
    extra, per_level, minimum = (int(v) for v in allowance.groups())
    own, high = (int(v) for v in exitstack.groups())
    return {"figures": out, "stacks": stacks, "extra": extra, "per_level": per_level,
            "min": minimum, "exit_own": own, "exit_high": high}


def test_stacks(bdir):
    """{image: (stack high-water bytes, stack size)} of every kernel unit-test
    image and of hello. (The port's own tests repaint the stack as part of
    testing the painting, so their final mark covers only the last test.)"""
    bdir = Path(bdir)
    images = [p for p in sorted((bdir / "tests").glob("test_*")) if p.is_file() and not p.suffix]
    images.append(bdir / "apps" / "hello" / "hello")
    out = {}
    for path in images:
        if not path.is_file():
            continue
        m = re.search(r"stack high-water (\d+) of (\d+) bytes", _run_image(path, LOOP_SHIFT))
        if m:
            out[path.name] = (int(m[1]), int(m[2]))
    return out


# ---- footprint ---------------------------------------------------------------------

def _size_tool():
    path = shutil.which("arm-none-eabi-size")
    if path is None:
        raise BenchError("arm-none-eabi-size not found (binutils-arm-none-eabi)")
    return path


def archive_sizes(archive):
    """{object: (text, data, bss)} of an archive (Berkeley format)."""
    res = subprocess.run([_size_tool(), str(archive)], capture_output=True, text=True)
    if res.returncode != 0:
        raise BenchError(f"size {archive}: {res.stderr.strip()}")
    out = {}
    for line in res.stdout.splitlines()[1:]:
        f = line.split()
        if len(f) >= 6 and f[0].isdigit():
            out[f[5].removesuffix(".obj").removesuffix(".o")] = tuple(int(x) for x in f[:3])
    return out


_MAP_SECTION = re.compile(r"^ (\.\S+|COMMON)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+))?$")
_MAP_CONT = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$")


def map_sizes(map_path, library):
    """{object: [rom, ram]} of the objects of `library` linked into an image,
    from its GNU ld map: .text/.rodata count as ROM, .data as both, .bss as RAM."""
    text = Path(map_path).read_text(errors="replace")
    start = text.find("Linker script and memory map")
    if start < 0:
        raise BenchError(f"{map_path}: not a GNU ld map")
    out = {}
    pending = None
    for line in text[start:].splitlines():
        m = _MAP_SECTION.match(line)
        if m and m[2] is None:
            pending = m[1]
            continue
        if m:
            name, size, origin = m[1], int(m[3], 16), m[4]
        else:
            c = _MAP_CONT.match(line) if pending else None
            pending, name = None, pending
            if not c:
                continue
            size, origin = int(c[2], 16), c[3]
        lib = re.match(rf".*{re.escape(library)}\((.+?)\)$", origin)
        if not lib or size == 0:
            continue
        entry = out.setdefault(lib[1].removesuffix(".obj").removesuffix(".o"), [0, 0])
        if name.startswith((".text", ".rodata")):
            entry[0] += size
        elif name.startswith(".data"):
            entry[0] += size
            entry[1] += size
        elif name.startswith((".bss", "COMMON")):
            entry[1] += size
    return out


def _components(sizes, rom_ram):
    """Group per-object sizes by COMPONENTS: [(component, rom, ram)]."""
    rows = []
    seen = set()
    for component, files in COMPONENTS:
        present = [f for f in files if f in sizes]
        seen.update(present)
        if present:
            rom = sum(rom_ram(sizes[f])[0] for f in present)
            ram = sum(rom_ram(sizes[f])[1] for f in present)
            rows.append((component, rom, ram))
    for f in sorted(set(sizes) - seen):
        rows.append((f, *rom_ram(sizes[f])))
    return rows


def _archive_rom_ram(tdb):
    text, data, bss = tdb
    return text + data, data + bss


def footprint(bdir):
    """Per-component ROM/RAM of both kernels, the port, and linked images."""
    bdir = Path(bdir)
    kernel = {}
    for config, suffix in CONFIGS:
        archive = bdir / "kernel" / f"libmotet_kernel{suffix}.a"
        if not archive.is_file():
            raise BenchError(f"{archive} was not built")
        kernel[config] = archive_sizes(archive)
    port = archive_sizes(bdir / "ports" / "cortex-m" / "libmotet_port.a")
    images = []
    for label, image, lib in (("hello (log on)", bdir / "apps" / "hello" / "hello",
                               "libmotet_kernel.a"),
                              ("bench_tm (log on)", _bench_dir(bdir) / "bench_tm",
                               "libmotet_kernel.a"),
                              ("bench_tm (log off)", _bench_dir(bdir) / "bench_tm_nolog",
                               "libmotet_kernel_nolog.a")):
        map_path = Path(f"{image}.map")
        if map_path.is_file():
            linked = map_sizes(map_path, lib)
            images.append((label, sum(v[0] for v in linked.values()),
                           sum(v[1] for v in linked.values())))
    return kernel, port, images


# ---- the report --------------------------------------------------------------------

def _heap_size():
    """The default MOTET_HEAP_SIZE of config.h, or None."""
    try:
        text = (ROOT / "kernel" / "include" / "motet" / "config.h").read_text()
    except OSError:
        return None
    m = re.search(r"#define MOTET_HEAP_SIZE (\d+)", text)
    return int(m[1]) if m else None


def _tool_version(cmd):
    try:
        res = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        return "not found"
    lines = (res.stdout or res.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def _tm_table(w, configs, figures, extra, rows):
    """A Thread-Metric table: iterations and instructions per iteration for each
    configuration, then the column `extra` and the scenario; rows are
    (name, extra cell, what the scenario is)."""
    w("| scenario | " + " | ".join(f"iterations ({c}) | instructions/iteration ({c})"
                                   for c in configs) + f" | {extra} | scenario |")
    w("|---|" + "---:|---:|" * len(configs) + "---:|---|")
    for name, cell, what in rows:
        cells = []
        for c in configs:
            n, per = figures[c][name][:2]
            cells += [f"{n:,}", _fmt(per)]
        w(f"| {name} | " + " | ".join(cells) + f" | {cell} | {what} |")


def _render_tm_threads(tmt, w):
    configs = [c for c, _ in CONFIGS]
    w("### Thread-Metric suite, threads")
    w("")
    w(f"The same suite with threads, by Thread-Metric's definitions "
      f"(bench/cortex-m/bench_tm_threads.c), each scenario for {TM_INTERVAL_MS} ms of virtual "
      f"time and checked while it runs. The threads have no analyser figure, so each has the "
      f"port's minimum stack and its guard, checked at every switch. Reference: FreeRTOS 11 "
      f"(memory: ThreadX 6.4's block pool), measured outside the project with the real "
      f"Thread-Metric suite, Cortex-M3 under QEMU `-icount shift=0`, log off. The log-off "
      f"image has the statistics off too (`MOTET_STATS=0`: no switch counter), as the peers "
      f"run without their trace and statistics hooks.")
    w("")
    _tm_table(w, configs, tmt, "reference", TMT_TESTS)
    w("")


def _render_threads(thr, w):
    configs = [c for c, _ in CONFIGS]
    w("### Threads")
    w("")
    w("Threads run on PSP, the kernel stack and every interrupt body on MSP "
      "(ports/cortex-m/context.c). bench_threads.c, shift 0, each pair timed over 1,000 and "
      "2,000 iterations in thread A (figure = the difference / 1,000), every iteration "
      "checked: B ran, and exactly two context switches happened. A switch is half an "
      "iteration's figure at most, since each iteration also posts and waits twice.")
    w("")
    w("| figure | " + " | ".join(f"instructions/iteration ({c})" for c in configs)
      + " | per switch (log on) | what an iteration is |")
    w("|---|" + "---:|" * len(configs) + "---:|---|")
    for name, label, what in THREAD_PAIRS:
        vals = [thr[c]["figures"][name] for c in configs]
        w(f"| {label} | " + " | ".join(_fmt(v) for v in vals) + f" | {_fmt(vals[0] / 2)} | "
          f"{what} |")
    vals = [thr[c]["figures"]["sleep"] for c in configs]
    w("| sleep one tick and wake | " + " | ".join(_fmt(v) for v in vals) + " | | "
      "`thread_sleep(1)` (a kernel timer), the switch to the kernel stack spinning below, "
      "the compare interrupt, the expiry waking the thread, the exit dispatch switching back "
      "to it; by stolen time: (instructions elapsed - 4 x spin-loop iterations) over 400 "
      "extra sleeps |")
    w("")
    t = thr[configs[0]]
    below = t["exit_high"] - t["exit_own"]
    rest = t["extra"] % t["per_level"]  # the MPU stack guard's bytes (ports/cortex-m/guard.c)
    guard = f", and {rest} B for the MPU stack guard" if rest else ""
    w("Thread stack high-water marks (log on; every thread stack is painted at creation, "
      f"`thread_stack_high_water()`), against the allowance: `PORT_THREAD_STACK_EXTRA` = "
      f"{t['extra']} B ({t['extra'] // t['per_level']} interrupt levels of {t['per_level']} "
      f"B each{guard}) on top of a thread's own frames, `PORT_THREAD_STACK_MIN` = {t['min']} B "
      f"for a thread of unknown need (these threads have that).")
    w("")
    w("| thread | high-water bytes | stack bytes |")
    w("|---|---:|---:|")
    for name, (hw, size) in t["stacks"].items():
        w(f"| {name} | {hw} | {size} |")
    w("")
    w(f"What one interrupt's exit dispatch leaves on a thread's stack, measured: a thread "
      f"whose own frames reach {t['exit_own']} B pends the isr_wake line 16 times (each exit "
      f"switches to the higher thread and back); its high-water mark is {t['exit_high']} B, "
      f"so **{below} B** lay below its frame: the 32-byte hardware frame, then in the same "
      f"bytes below it the fabricated frame and the trampoline's calls up to the switch; "
      f"{t['per_level']} B are allowed per level.")
    w("")


def _render_nothreads(ops, timers, lat, tm, nothr, w):
    on = CONFIGS[0][0]
    n_ops, n_timer = nothr["ops"]
    w("### What thread support costs the task path")
    w("")
    w("The port's default kernel has threads (`MOTET_PORT_THREADS`), so the figures above "
      "include the scheduler's thread hooks even where no thread exists. The same images "
      "linked with `motet_kernel_nothreads` (threads compiled out, event log on):")
    w("")
    w(f"| figure | threads in ({on}) | threads out ({on}) | difference |")
    w("|---|---:|---:|---:|")
    rows = [(op.name, ops[on][op.op] - ops[on][op.baseline], n_ops[op.op] - n_ops[op.baseline],
             False) for op in OPS]
    rows.append(("timer expiry to handler", timers[on], n_timer, False))
    rows += [(f"latency: {k}", lat[on][k], nothr["lat"][k], False)
             for k in ("irq", "irq_direct", "timer")]
    rows += [(f"thread-metric {name} (instructions/iteration)", tm[on][name][1],
              nothr["tm"][name][1], name in TM_OTHER_WITHOUT_THREADS) for name, _ in TM_TESTS]
    for name, with_thr, without, other in rows:
        diff = "another scenario" if other else _fmt(with_thr - without)
        w(f"| {name} | {_fmt(with_thr)} | {_fmt(without)} | {diff} |")
    w("")
    w(f"Without threads the kernel has no message queues and no semaphores, so "
      f"{' and '.join(TM_OTHER_WITHOUT_THREADS)} run their message-task versions there "
      f"(the scenario table above says how): those rows compare two different scenarios.")
    w("")
    _render_tm_nothreads(tm, nothr, w)


def _render_tm_nothreads(tm, nothr, w):
    """The task versions as a task-only application builds them, threads compiled out,
    beside the headline figures (threads in)."""
    on, off = CONFIGS[0][0], CONFIGS[1][0]
    w("The Thread-Metric task versions as a task-only application builds them, threads "
      "compiled out (bench_tm_nothreads, bench_tm_nothreads_nolog), beside the figures of "
      "the suite's table above (threads in, the port's default), in instructions per "
      "iteration:")
    w("")
    w(f"| scenario | threads in ({on}) | threads out ({on}) | threads in ({off}) | "
      f"threads out ({off}) | difference ({off}) |")
    w("|---|---:|---:|---:|---:|---:|")
    for name, _ in TM_TESTS:
        with_on, without_on = tm[on][name][1], nothr["tm"][name][1]
        with_off, without_off = tm[off][name][1], nothr["tm_nolog"][name][1]
        diff = ("another scenario" if name in TM_OTHER_WITHOUT_THREADS
                else _fmt(with_off - without_off))
        w(f"| {name} | {_fmt(with_on)} | {_fmt(without_on)} | {_fmt(with_off)} | "
          f"{_fmt(without_off)} | {diff} |")
    w("")


def render(ops, timers, lat, tm, stacks, foot, thr=None, nothr=None, tmt=None, floor=None):
    configs = [c for c, _ in CONFIGS]
    out = []
    w = out.append
    w("## Cortex-M port (QEMU mps2-an385): kernel operations in instructions")
    w("")
    w("Generated by `tools/motetlib/port_cortex_m.py --bench BUILD_DIR` (function `bench()`), "
      "from the images of bench/cortex-m built for `-DMOTET_PORT=cortex-m`.")
    w("")
    w("Instructions executed on an emulated Cortex-M3 under QEMU `-icount` (one instruction, "
      "one unit of virtual time), read off the board's 25 MHz timer, which QEMU does not "
      "pace by the host: identical from run to run. Hardware exception entry and return "
      "execute no instructions, so they are **not** in these figures; on silicon each entry "
      "costs 12 cycles and each return about 10, which an interrupt row whose exit runs "
      "something would add twice (the interrupt, whose return enters the trampoline, and "
      "NMI); one with nothing to run, once.")
    w("")
    w("| operation | " + " | ".join(f"instructions ({c})" for c in configs)
      + " | what it includes |")
    w("|---|" + "---:|" * len(configs) + "---|")
    for op in OPS:
        vals = [ops[c][op.op] - ops[c][op.baseline] for c in configs]
        w(f"| {op.name} | " + " | ".join(_fmt(v) for v in vals) + f" | {op.includes} |")
    w("| timer expiry to handler | " + " | ".join(_fmt(timers[c]) for c in configs)
      + " | a periodic timer's compare interrupt, the port's deadline check, delta-list "
        "expiry and re-arm, the post to TIMEOUT0, the exit dispatch, the (counting) handler and "
        "the return: instructions taken from a busy loop per expiry |")
    w("")
    if floor:
        _render_floor(ops, floor, w)
    w("### Latencies: instructions to the first statement of the handler")
    w("")
    w("| from | to | " + " | ".join(f"instructions ({c})" for c in configs) + " |")
    w("|---|---|" + "---:|" * len(configs))
    w("| `port_cm_irq_raise()` of a line whose body posts | the posted task's handler, run at "
      "interrupt exit | " + " | ".join(_fmt(lat[c]["irq"]) for c in configs) + " |")
    w("| the same, body without the kernel | the body (SST floor) | "
      + " | ".join(_fmt(lat[c]["irq_direct"]) for c in configs) + " |")
    w("| a timer's deadline (the compare due) | its TIMEOUT0 handler's counter read | "
      + " | ".join(_fmt(lat[c]["timer"]) for c in configs) + " |")
    w("")
    w("### Thread-Metric-style suite")
    w("")
    w(f"Thread-Metric counts how often a scenario completes in a fixed interval. Here each "
      f"runs for {TM_INTERVAL_MS} ms of virtual time ({TM_INTERVAL_MS * 10**6:,} instructions "
      f"at one per ns) with message tasks in place of threads; 'instructions/iteration' is "
      f"the interval divided by the count, the figure that carries over to another clock. "
      f"An iteration is Thread-Metric's unit of work as message tasks do it, each task "
      f"counting its runs as each of Thread-Metric's threads counts; the benchmark checks "
      f"the rules the scenario exercises in each task's first runs and at the interval's "
      f"end, as the thread versions do (bench/cortex-m/bench_tm.c), and the build runs it "
      f"as a test. Stack: the shared stack's high-water mark during the scenario (painted "
      f"before each).")
    w("")
    _tm_table(w, configs, tm, "stack bytes (log on)",
              [(name, tm[configs[0]][name][2], what) for name, what in TM_TESTS])
    w("")
    if floor:
        coop_floor = floor["queued dispatch"]
        freertos = dict((name, figure) for name, figure, _ in TMT_TESTS)["cooperative"]
        w("A cooperative iteration is one queued hand-over: a send that must wait (the sender "
          "is on the stack) and, once the sender has returned, the dequeue and the run of the "
          "next turn. Its floor is the floor image's queued dispatch, "
          f"{_fmt(coop_floor)} instructions (section \"The floor\"): a block from the free "
          "list filled in and appended to its level's FIFO, the level's bit, and the drain's "
          "pop, frame push, indirect call and frame pop. A thread kernel's yield moves a "
          "thread within its ready list and switches stacks, with no message in between "
          f"(FreeRTOS 11: {freertos}). The floor of the message's shape is "
          f"{_fmt(coop_floor / freertos)} times FreeRTOS's yield, so no structure that "
          "keeps a message between the turns is ahead of it. The target proposed for message "
          "tasks (docs/costs.md, \"The queued hand-over\") "
          "holds the kernel's part of the hand-over to its floor + 15 % and adds the worker's "
          "own code, which this floor image does not run: "
          f"{COOP_HANDOVER_FLOOR} + {round(COOP_HANDOVER_FLOOR * 0.15)} + {COOP_WORKER_CODE} = "
          f"{COOP_HANDOVER_FLOOR + round(COOP_HANDOVER_FLOOR * 0.15) + COOP_WORKER_CODE} "
          f"instructions (the hand-over's floor {COOP_HANDOVER_FLOOR}, counted along its path "
          f"in floor_cm; the worker's code {COOP_WORKER_CODE}, its count and its next turn's "
          "send, by motet-profile.so).")
        w("")
        w("An interrupt iteration is an interrupt whose post waits and, once the task has "
          "returned, the dequeue and the run of the message: one queued hand-over from an "
          "interrupt. Its floor is the floor image's interrupt post, queued, "
          f"{_fmt(floor['interrupt post, queued'])} instructions (the Super-Simple-Tasker "
          "line dispatch, the post into a level's FIFO, the exit's test, the dequeue and run; "
          "section \"The floor\"), plus the scenario's own task code; a thread kernel's "
          "interrupt gives a semaphore the running thread then takes, with no message and no "
          "second dispatch. An interrupt-preemption iteration adds the higher task's send "
          "back to the interrupted one, which waits: a second queued hand-over, where "
          "Thread-Metric's higher thread suspends itself.")
        w("")
    if thr:
        _render_threads(thr, w)
    if tmt:
        _render_tm_threads(tmt, w)
    if nothr:
        _render_nothreads(ops, timers, lat, tm, nothr, w)
    w("### Shared stack high-water marks")
    w("")
    w("Stack painting: reset fills the stack (16 KB, at the bottom of RAM, so that an "
      "overflow faults) with a pattern; `port_halt()` prints the deepest word that changed. "
      "Interrupt frames and the exit dispatch's frames are included: everything but threads "
      "runs on the one stack (MSP); a thread's stack (PSP) is one of its own, painted and "
      "measured by the kernel (the unit tests' thread stacks are not in these figures).")
    w("")
    w("| program | stack bytes used |")
    w("|---|---:|")
    for name, (used, _size) in stacks.items():
        w(f"| {name} | {used} |")
    w("")
    w("### Footprint")
    w("")
    kernel, port, images = foot
    w("ROM (text + rodata + data) and RAM (data + bss) per kernel component, from "
      "`arm-none-eabi-size` of the kernel archives (every object, whether an application "
      "links it or not), built `-O2 -mcpu=cortex-m3 -mthumb` with the defaults of "
      "config.h. RAM includes the static pools: the 4,096-byte heap (memory), the slab "
      "caches (scheduler, time), the 64-entry event ring (event log).")
    w("")
    w("| component | ROM (log on) | RAM (log on) | ROM (log off) | RAM (log off) |")
    w("|---|---:|---:|---:|---:|")
    per_config = {c: {r[0]: r[1:] for r in _components(kernel[c], _archive_rom_ram)}
                  for c in configs}
    names = list(dict.fromkeys(n for c in configs for n in per_config[c]))
    totals = {c: [0, 0] for c in configs}
    for n in names:
        cells = []
        for c in configs:
            rom, ram = per_config[c].get(n, (0, 0))
            totals[c][0] += rom
            totals[c][1] += ram
            cells += [f"{rom:,}", f"{ram:,}"]
        w(f"| {n} | " + " | ".join(cells) + " |")
    w("| **kernel total** | " + " | ".join(f"**{totals[c][0]:,}** | **{totals[c][1]:,}**"
                                          for c in configs) + " |")
    port_rom = sum(t + d for t, d, _ in port.values())
    port_ram = sum(d + b for _, d, b in port.values())
    w(f"| Cortex-M port (ports/cortex-m) | {port_rom:,} | {port_ram:,} | {port_rom:,} | "
      f"{port_ram:,} |")
    for label, rom, ram in ANCHORS:
        w(f"| *anchor: {label}* | *{rom:,}* | *{ram:,}* | | |")
    w("")
    heap = _heap_size()
    if heap:
        w(f"Most of the kernel's RAM is the heap (MOTET_HEAP_SIZE, {heap:,} bytes by default); "
          f"without it the kernel keeps {totals[configs[0]][1] - heap:,} bytes (log on) and "
          f"{totals[configs[1]][1] - heap:,} bytes (log off) of static RAM for its slab caches, "
          f"tables and event ring, sized by config.h. The anchors are the papers' figures for "
          f"16-bit MSP430 code and their own configurations; the stack is extra everywhere "
          f"(see the high-water marks above).")
        w("")
    w("Kernel objects as linked into whole images (linker map; `--gc-sections` drops what "
      "the image does not call):")
    w("")
    w("| image | kernel ROM | kernel RAM |")
    w("|---|---:|---:|")
    for label, rom, ram in images:
        w(f"| {label} | {rom:,} | {ram:,} |")
    w("")
    w("### Method")
    w("")
    w("- Counting: `port_cycles()` reads the 25 MHz CMSDK TIMER1 (QEMU has no DWT cycle "
      "counter). Under `-icount shift=S` one instruction is 2^S ns and one timer clock 40 ns, "
      "so instructions = clocks x 40 / 2^S.")
    w("- Operations (bench_kernel.c, shift 0): a driver task calls each operation 16 times to "
      "warm up, then 1,000 and 2,000 times, reading the clock around each loop; the figure is "
      "the difference of the two loops divided by 1,000, less its baseline (the empty call, "
      "or the immediate dispatch that carries a chain). The clock's 40-instruction grain "
      "becomes 0.08 instructions per operation. Each target handler counts its runs and the "
      "driver checks them while still on the stack, so a dispatch that queued when it "
      "should have nested fails the run instead of giving a figure.")
    w("- Timer expiry (shift 0): a periodic one-tick (100 us) timer expires 200, then 1,000 "
      "times into a priority-5 task while the driver spins in a loop of exactly four "
      "instructions; per expiry = (instructions elapsed - 4 x loop iterations) over the "
      "800 extra expiries.")
    w(f"- Latencies (bench_latency.c, shift {LATENCY_SHIFT}): at 128 ns per instruction the "
      "40 ns clock ticks at least three times per instruction, so two clock reads give the "
      "exact number of instructions between them. The interrupt rows subtract the distance "
      "between two back-to-back reads; the timer row counts from the deadline tick (the "
      "compare fires within one clock of it) to the handler's read, that read's entry "
      "included. Eight repeats must agree within one instruction.")
    w("- The interrupt path: after the body, the exit's one decision under the interrupt mask "
      "(`sched_isr_exit_choice()`: nothing, the drain, or the thread side); with something to "
      "run, the interrupt's own entry (PendSV only when it returns to another interrupt) "
      "pushes an exception frame that returns into a thread-mode trampoline, which calls "
      "what was chosen and then pends NMI, whose handler drops the trampoline's frame and "
      "returns through the interrupted code's own frame (ports/cortex-m/irq.c).")
    w("- Tick: 100 us (the 25 MHz clock / 2,500, in software). Interval and timer figures "
      "use it; at shift 0 a tick is 100,000 instructions.")
    w("")
    w("### Environment")
    w("")
    w(f"- emulator: {_tool_version(['qemu-system-arm', '--version'])}, machine {MACHINE}, "
      f"`-icount shift=S,align=off,sleep=off`")
    w(f"- compiler: {_tool_version(['arm-none-eabi-gcc', '--version'])}, "
      "`-O2 -mcpu=cortex-m3 -mthumb -ffunction-sections -fdata-sections`, newlib-nano")
    w("- kernel configuration: defaults of kernel/include/motet/config.h")
    w("")
    return "\n".join(out)


def bench(build_dir, output=None):
    """Run every Cortex-M benchmark in `build_dir`, write the report; returns its rows
    [(operation, {config: instructions})] (empty on error, reported on stderr)."""
    bdir = Path(build_dir)
    try:
        _build(bdir)
        ops, timers, lat, tm, thr, tmt = {}, {}, {}, {}, {}, {}
        for config, suffix in CONFIGS:
            ops[config], timers[config] = kernel_ops(
                _run_image(_image(bdir, f"bench_kernel{suffix}"), LOOP_SHIFT))
            lat[config] = latencies(_run_image(_image(bdir, f"bench_latency{suffix}"),
                                               LATENCY_SHIFT))
            tm[config] = thread_metric(_run_image(_image(bdir, f"bench_tm{suffix}"),
                                                  LOOP_SHIFT))
            thr[config] = thread_figures(_run_image(_image(bdir, f"bench_threads{suffix}"),
                                                    LOOP_SHIFT))
            tmt[config] = thread_metric_threads(
                _run_image(_image(bdir, f"bench_tm_threads{suffix}"), LOOP_SHIFT))
        nothr = {
            "ops": kernel_ops(_run_image(_image(bdir, "bench_kernel_nothreads"), LOOP_SHIFT)),
            "lat": latencies(_run_image(_image(bdir, "bench_latency_nothreads"), LATENCY_SHIFT)),
            "tm": thread_metric(_run_image(_image(bdir, "bench_tm_nothreads"), LOOP_SHIFT)),
            "tm_nolog": thread_metric(_run_image(_image(bdir, "bench_tm_nothreads_nolog"),
                                                 LOOP_SHIFT)),
        }
        floor = floor_ops(_run_image(_image(bdir, "floor_cm"), LOOP_SHIFT))
        stacks = test_stacks(bdir)
        foot = footprint(bdir)
    except (BenchError, RunnerError) as e:
        print(f"cortex-m bench: error: {e}", file=sys.stderr)
        return []
    text = render(ops, timers, lat, tm, stacks, foot, thr, nothr, tmt, floor)
    out = Path(output) if output else REPORT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("<!-- SPDX-License-Identifier: MIT -->\n" + text)
    rows = [(op.name, {c: ops[c][op.op] - ops[c][op.baseline] for c, _ in CONFIGS})
            for op in OPS]
    rows.append(("timer expiry to handler", {c: timers[c] for c, _ in CONFIGS}))
    for name in ("irq", "irq_direct", "timer"):
        rows.append((f"latency: {name}", {c: lat[c][name] for c, _ in CONFIGS}))
    for name in FLOOR_OPS:
        rows.append((f"floor: {name}", {c: floor[name] for c, _ in CONFIGS}))
    for name, _ in TM_TESTS:
        rows.append((f"thread-metric: {name} (instructions/iteration)",
                     {c: tm[c][name][1] for c, _ in CONFIGS}))
    for name, _, _ in TMT_TESTS:
        rows.append((f"thread-metric threads: {name} (instructions/iteration)",
                     {c: tmt[c][name][1] for c, _ in CONFIGS}))
    for name in [p for p, _, _ in THREAD_PAIRS] + ["sleep"]:
        rows.append((f"threads: {name} (instructions/iteration)",
                     {c: thr[c]["figures"][name] for c, _ in CONFIGS}))
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}" + "".join(f"{c:>12}" for c, _ in CONFIGS))
    for name, vals in rows:
        print(f"{name:<{width}}" + "".join(f"{_fmt(vals[c]):>12}" for c, _ in CONFIGS))
    print(f"cortex-m bench: wrote {out}")
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="port_cortex_m.py",
        description="Run a Motet Cortex-M image under QEMU mps2-an385 with -icount; exit "
                    "with the program's status (124 on timeout).")
    p.add_argument("elf", help="the image (an ELF linked for ports/cortex-m)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help="wall-clock seconds before QEMU is killed (default: %(default)s)")
    p.add_argument("--icount-shift", type=int, default=DEFAULT_ICOUNT_SHIFT,
                   help="QEMU -icount shift: 2^N ns per instruction (default: %(default)s)")
    p.add_argument("--bench", action="store_true",
                   help="ELF is a build directory: run the benchmarks and write the report")
    p.add_argument("--output", default=None,
                   help="with --bench: the report (default: docs/benchmarks-cortex-m.md)")
    args = p.parse_args(argv)
    try:
        if args.bench:
            rows = bench(args.elf, args.output)
            return 0 if rows else 1
        return run(args.elf, args.timeout, args.icount_shift)
    except (RunnerError, BenchError) as e:
        print(f"cortex-m: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
