# SPDX-License-Identifier: MIT
"""Task migration benchmark: latency against the state size (0 B to 4 KB)
and the number of modules (2 to 8), in simulated time under the bus model
of docs/bus.md, and in instructions (callgrind) on the two modules that
migrate; compared with the CoMOS paper's 3.5 ms + 0.013 ms per byte on two
6 MHz MSP430 modules. Writes the "migration" section of docs/benchmarks.md
and docs/plots/migration-*.svg.

    python3 -m motetlib.bench_migrate [--build-dir DIR] [--quick] [--no-instructions]

The device is made here: N modules, every one an MSP430-class module of
devices/five-module.toml (6 MHz; the bus driver's polled copy: 300 cycles
per frame and 20 per byte, CRC included), on the same bus (8 MB/s, TDMA
slots of 10 us), exact clocks. apps/migrate/migrate_bench.toml moves the
sink between modules 0 and 1 every 100 ms, ten times, with nothing else on
the bus. Latency, as the paper defines it: from the request's arrival at
the source (its FROZEN line) to the end of deserialisation at the
destination (ATTACHED); also to the moment the task runs there (LIVE),
and to the moment the source knows END went through and multicasts
CONFIRM (its LEFT line), after which the other modules release what they
held back.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from . import build, cmdline, device as devmod, plot, report, run_device

ROOT = build.ROOT
SECTION = "migration"
PLOTS = ROOT / "docs" / "plots"
STATE_SIZES = (0, 64, 256, 512, 1024, 2048, 3072, 4096)
MODULE_COUNTS = (2, 3, 4, 5, 6, 7, 8)
SIZE_FOR_COUNTS = 256
PAPER_BASE_MS, PAPER_PER_BYTE_MS = 3.5, 0.013
MOVES = 10
LINE = re.compile(r"^m(\d+)\| \[\s*(\d+\.\d{3}) ms\] (.*)$")
MIG = re.compile(r"mig 0x10 (FROZEN|ATTACHED|LIVE|LEFT|RESUMED) m(\d+)")
# The migrator's entry points: its task and its bus hooks (migrate.h).
ENTRIES = ("migrator", "migrate_bus_rx", "migrate_bus_own", "migrate_bus_tx_end",
           "migrate_bus_hold", "migrate_bus_forward", "migrate_bus_cast")
LIBC_COPY = re.compile(r"^(__)?mem(cpy|set|move|cmp)")


class BenchError(Exception):
    pass


def device(n):
    """n MSP430-class modules on the bus of devices/five-module.toml."""
    mods = "\n".join(f"""
[[module]]
id = {i}
cpu_mhz = 6
bus_cycles_per_frame = 300
bus_cycles_per_byte = 20
clock = {{ ppm = 0.0, hz = 32768 }}
""" for i in range(n))
    text = f"""
[device]
name = "migrate-bench-{n}"
program = "apps/migrate/migrate"
args = ["--app", "migrate_bench"]
loader = 0
max_ppm = 0
handler_us = 0  # the migrator's and the bus's cost alone, as measured before

[bus]
bandwidth = 8000000
slot_us = 10
ack_timeout_us = 20000
{mods}"""
    return devmod.exact_clocks(devmod.parse(text, f"<migrate-bench-{n}>"))


def run_quiet(dev, bdir, until, extra, watchdog_s=run_device.hubmod.Hub.WATCHDOG_S):
    lines = []
    status, report_ = run_device.run(dev, bdir, until=until, extra=extra, out=lines.append,
                                     progress=False, watchdog_s=watchdog_s)
    if status != 0 or report_ is None:
        raise BenchError("device run failed:\n" + "\n".join(lines[-30:]))
    return lines


def latencies(lines):
    """[(to ATTACHED, to LIVE, to confirmed)] in ms for each migration of
    the run."""
    events = []
    for line in lines:
        m = LINE.match(line)
        found = MIG.search(m.group(3)) if m else None
        if found:
            events.append((float(m.group(2)), found.group(1)))
    out, start, seen = [], None, {}
    for t, what in sorted(events):
        if what == "FROZEN":
            start, seen = t, {}
        elif what in ("ATTACHED", "LIVE", "LEFT") and start is not None:
            seen[what] = t - start
            if len(seen) == 3:
                out.append((seen["ATTACHED"], seen["LIVE"], seen["LEFT"]))
                start = None
        elif what == "RESUMED":
            raise BenchError(f"a migration failed: {lines[-20:]}")
    return out


def measure_latency(bdir, n, state):
    runs = latencies(run_quiet(device(n), bdir, MOVES * 0.1 + 0.1, ["--state", str(state)]))
    if len(runs) != MOVES:
        raise BenchError(f"{n} modules, {state} B: {len(runs)} migrations, not {MOVES}")
    return (statistics.mean(a for a, _, _ in runs), statistics.mean(b for _, b, _ in runs),
            min(a for a, _, _ in runs), max(a for a, _, _ in runs),
            statistics.mean(c for _, _, c in runs))


def fit(points):
    """Least-squares line through (x, y): (intercept, slope)."""
    xs, ys = [x for x, _ in points], [y for _, y in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


# ---- instructions ----

def callgrind_kernel_ir(path):
    """Instructions of a callgrind profile in kernel code (files under
    kernel/) and in the C library's block copies the kernel calls: the
    self cost of each function, calls excluded (their cost is the callee's)."""
    names, files = {}, {}
    total = 0
    fl = fn = ""
    skip = False

    def ref(table, text):
        m = re.match(r"\((\d+)\)(?: (.*))?", text)
        if not m:
            return text
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "")

    for line in Path(path).read_text(errors="replace").splitlines():
        if line.startswith(("fl=", "fi=", "fe=")):
            fl = ref(files, line[3:])
        elif line.startswith("fn="):
            fn = ref(names, line[3:])
        elif line.startswith(("cfl=", "cfi=")):
            ref(files, line[4:])
        elif line.startswith("cfn="):
            ref(names, line[4:])
        elif line.startswith("calls="):
            skip = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if skip:
                skip = False
                continue
            parts = line.split()
            if len(parts) >= 2 and ("/kernel/" in fl or LIBC_COPY.match(fn)):
                total += int(parts[1])
    return total


def wrapper(tmp, exe):
    """A module program that runs the real one under callgrind, collecting
    only inside the migrator (one profile per module)."""
    toggles = " ".join(f"--toggle-collect={f}" for f in ENTRIES)
    script = Path(tmp) / "migrate-callgrind"
    script.write_text(f"""#!/bin/sh
mod=x
prev=
for a in "$@"; do [ "$prev" = "--module" ] && mod=$a; prev=$a; done
exec valgrind --tool=callgrind --collect-atstart=no {toggles} \\
  --callgrind-out-file={tmp}/cg.$mod.out {exe} "$@"
""")
    script.chmod(0o755)
    return script


def measure_instructions(bdir, n, state, short=0.55, long=1.05):
    """Instructions per migration on the two migrating modules together and
    on one bystander: the difference of a run with 5 and one with 10
    migrations (start-up cancels out)."""
    exe = Path(bdir) / "apps" / "migrate" / "migrate"
    counts = {}
    for until in (short, long):
        with tempfile.TemporaryDirectory(prefix="motet-cg-") as tmp:
            prog = wrapper(tmp, exe)
            dev = device(n)
            mods = tuple(devmod.dataclasses.replace(m, program=str(prog)) for m in dev.modules)
            dev = devmod.dataclasses.replace(dev, modules=mods)
            # Under callgrind a module computes some 50 times slower: the
            # hub's watchdog (a CPU-time bound) is off.
            run_quiet(dev, bdir, until, ["--state", str(state), "--quiet"], watchdog_s=0)
            counts[until] = {m: callgrind_kernel_ir(Path(tmp) / f"cg.{m}.out") for m in range(n)}
    moves = round((long - short) * 10)
    delta = {m: (counts[long][m] - counts[short][m]) / moves for m in range(n)}
    return delta[0] + delta[1], (delta[2] if n > 2 else None)


# ---- report ----

def render(sizes, counts, instr, env):
    b0, slope = fit([(s, a) for s, (a, *_) in sizes.items()])
    lines = [
        "## Task migration",
        "",
        "Written by `python3 -m motetlib.bench_migrate` (tools/motetlib/bench_migrate.py); "
        "protocol and guarantees: docs/migration.md.",
        "",
        "**Set-up.** N modules, each an MSP430-class module of `devices/five-module.toml` "
        "(6 MHz), on its bus (8 MB/s, TDMA slots of 10 us), exact clocks; "
        "`apps/migrate/migrate_bench.toml` moves a task between modules 0 and 1 every 100 ms, "
        f"{MOVES} times per point, on an otherwise quiet bus. Latency as the paper defines it: "
        "from the request's arrival at the source to the end of deserialisation at the "
        "destination; *to live* adds the forwarding of held messages and END, until the task "
        "runs at the destination; *to confirmed* ends when the source has END's "
        "acknowledgement and multicasts CONFIRM (docs/migration.md), the point from which the "
        "other modules release what they held back and the source frees its copies.",
        "",
        "**What the bus model assumes** (docs/bus.md): every frame costs its sender and its "
        "receiver the polled copy of the paper's drivers, 300 cycles + 20 cycles per byte "
        "(CRC included), at 6 MHz (so 3.3 us per byte at each end); the wire adds 0.125 us "
        "per byte; a frame waits for its sender's TDMA slot and for a free receiver; the "
        "kernel's own code costs **no** simulated time (the native port charges only declared "
        "work). The simulated latency is therefore the bus's share alone; the kernel's work is "
        "counted separately, in instructions.",
        "",
        "### Latency against state size (2 modules)",
        "",
        "| state (B) | to deserialised (ms) | min .. max (ms) | to live (ms) | "
        "to confirmed (ms) | paper (ms) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for s, (a, live, lo, hi, conf) in sizes.items():
        lines.append(f"| {s} | {a:.3f} | {lo:.3f} .. {hi:.3f} | {live:.3f} | {conf:.3f} | "
                     f"{PAPER_BASE_MS + PAPER_PER_BYTE_MS * s:.2f} |")
    lines += [
        "",
        f"Fit: **{b0:.2f} ms + {slope * 1000:.2f} us per byte** "
        f"(paper: {PAPER_BASE_MS} ms + {PAPER_PER_BYTE_MS * 1000:.0f} us per byte; 1 KB: "
        f"{b0 + slope * 1024:.2f} ms here, {PAPER_BASE_MS + PAPER_PER_BYTE_MS * 1024:.2f} ms in "
        "the paper). Per byte, the model charges 2 x 20 cycles at 6 MHz (6.7 us) plus the wire "
        "(0.125 us); the state crosses the bus once. The paper's 13 us per byte also "
        "includes the MSP430 running the serialisation and deserialisation copies and the "
        "kernel, which this model does not charge: roughly half its per-byte cost is the bus "
        "driver, as here. The base here is the protocol's frames (REQUEST, FREEZE, one REPLY "
        "per module, the image's header, ATTACHED) at the bus driver's per-frame cost and TDMA "
        "waits; the paper's 3.5 ms base is mostly MSP430 code. State 0 is a task that hands "
        "over no state at all; from 64 B on, the test task's own 41 bytes of fields are part "
        "of it. The simulation is deterministic: the ten migrations of a point differ only by "
        "where the TDMA round stands when each frame is ready.",
        "",
        "![latency against state size](plots/migration-state.svg)",
        "",
        f"### Latency against module count ({SIZE_FOR_COUNTS} B of state)",
        "",
        "| modules | to deserialised (ms) | to live (ms) | to confirmed (ms) |",
        "|---:|---:|---:|---:|",
    ]
    for n, (a, live, _, _, conf) in counts.items():
        lines.append(f"| {n} | {a:.3f} | {live:.3f} | {conf:.3f} |")
    c0, cslope = fit([(n, a) for n, (a, *_) in counts.items()])
    lines += [
        "",
        f"Each further module adds **{cslope * 1000:.0f} us**: its reply to FREEZE, one more "
        "frame the source must take, one after another, as in the paper (300 cycles + 20 per "
        "byte at 6 MHz, about 100 us), and one more slot in every TDMA round.",
        "",
        "![latency against module count](plots/migration-modules.svg)",
        "",
    ]
    if instr:
        lines += [
            "### Instructions on the migrating modules",
            "",
            "x86-64 instructions (callgrind, native port, the build's flags: "
            f"{env}) executed per migration in the migrator (its task and its bus hooks) and "
            "the kernel code they call (scheduler, heap, timers, the bus manager's queue and "
            "frame encoding with its CRC, block copies), source and destination together, and "
            "on one bystander. Not counted: the native port's own bus I/O (socket messages to "
            "the hub), the bus manager's checking of a received frame before it reaches the "
            "migrator, and the task's own serialisation handlers. "
            "Each figure is the difference of a run with 10 and one with 5 migrations, divided "
            "by 5.",
            "",
            "| modules | state (B) | source + destination | one bystander |",
            "|---:|---:|---:|---:|",
        ]
        for (n, s), (both, peer) in sorted(instr.items()):
            lines.append(f"| {n} | {s} | {both:,.0f} | {'-' if peer is None else f'{peer:,.0f}'} |")
        pts = [(s, both) for (n, s), (both, _) in instr.items() if n == 2]
        if len(pts) >= 2:
            i0, islope = fit(pts)
            lines += ["", f"Fit (2 modules): {i0:,.0f} instructions + {islope:.1f} per byte "
                      "of state: the per-byte part is mostly the bitwise CRC-16 of the image's "
                      "frames at the source (the bus manager's `appdesc_crc16()`), then the copies "
                      "into and out of the frames."]
        lines.append("")
    return "\n".join(lines) + "\n"


def plots(sizes, counts):
    measured = [(s, a) for s, (a, *_) in sizes.items()]
    live = [(s, b) for s, (_, b, *_) in sizes.items()]
    paper = [(s, PAPER_BASE_MS + PAPER_PER_BYTE_MS * s) for s in (0, max(sizes))]
    plot.write(PLOTS / "migration-state.svg", "Migration latency against state size (2 modules)",
               "task state (bytes)", "latency (ms)",
               [("to deserialised (simulated bus)", measured), ("to live", live),
                ("paper: 3.5 ms + 0.013 ms/B (MSP430)", paper)],
               dashed=("paper: 3.5 ms + 0.013 ms/B (MSP430)",))
    plot.write(PLOTS / "migration-modules.svg",
               f"Migration latency against module count ({SIZE_FOR_COUNTS} B of state)",
               "modules on the bus", "latency (ms)",
               [("to deserialised", [(n, a) for n, (a, *_) in counts.items()]),
                ("to live", [(n, b) for n, (_, b, *_) in counts.items()])])


def bench(bdir=None, quick=False, instructions=True, out=print):
    bdir = build.build_dir(bdir)
    sizes_list = (0, 1024, 4096) if quick else STATE_SIZES
    counts_list = (2, 5, 8) if quick else MODULE_COUNTS
    sizes = {}
    for s in sizes_list:
        sizes[s] = measure_latency(bdir, 2, s)
        out(f"migration: 2 modules, {s} B: {sizes[s][0]:.3f} ms")
    counts = {}
    for n in counts_list:
        counts[n] = sizes[SIZE_FOR_COUNTS] if n == 2 and SIZE_FOR_COUNTS in sizes else \
            measure_latency(bdir, n, SIZE_FOR_COUNTS)
        out(f"migration: {n} modules, {SIZE_FOR_COUNTS} B: {counts[n][0]:.3f} ms")
    instr = {}
    if instructions and shutil.which("valgrind"):
        for n, s in ((2, 0), (2, 1024), (2, 4096), (5, 0), (8, 0)):
            instr[(n, s)] = measure_instructions(bdir, n, s)
            out(f"migration: {n} modules, {s} B: {instr[(n, s)][0]:,.0f} instructions")
    elif instructions:
        out("migration: valgrind is not installed: no instruction counts")
    plots(sizes, counts)
    report.write_section(SECTION, render(sizes, counts, instr, "-O2 RelWithDebInfo"))
    return sizes, counts, instr


def main(argv=None):
    p = cmdline.ArgumentParser(prog="bench_migrate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default=None, help="build directory (default: $MOTET_BUILD_DIR "
                                                     "or build)")
    p.add_argument("--quick", action="store_true", help="three points per axis")
    p.add_argument("--no-instructions", action="store_true", help="skip callgrind")
    args = p.parse_args(argv)
    try:
        bench(args.build_dir, quick=args.quick, instructions=not args.no_instructions)
    except BenchError as e:
        print(f"bench_migrate: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
