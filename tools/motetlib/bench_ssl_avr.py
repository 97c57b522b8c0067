# SPDX-License-Identifier: MIT
"""A sensing module's share of the SSL chain on the ATmega128, in cycles
under simavr; written as section "ssl-avr" of docs/benchmarks.md.

    python3 -m motetlib.bench_ssl_avr [--build-dir DIR]   (from tools/)
    ./motet bench --only ssl-avr

DIR is an AVR build tree (default build-avr beside the native one). The
images are bench/avr-ssl/bench_avr_ssl.c: sampling a 512-sample block, the
Hann window, the Q15 512-point real FFT, SC and the verdict (with the
vote's decision back), as plain calls (standalone) and as Motet tasks
driven by a periodic timer (event log on and compiled out). The three must
vote the same blocks sound.

The harness stamps the marker pins' edges to the cycle; its flat profile,
gated on a pin, gives the cycles each function took while the pin was
high. Per block: standalone, (window(A3) - window(A1)) / (N2 - N1); Motet,
the same with each window less the cycles of the driver's spin loop in it
(stolen time). Memory: (window(A4) - window(A2)) / MEM_N, one mem_alloc of
the spectrum and its mem_free.
"""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from . import build, cmdline, report
from .port_avr import (BenchError, _harness_run, harness_or_exit, read_profile,
                       read_profile_pcs, read_trace, windows)

N1, N2, MEM_N = 8, 16, 32  # as in bench_avr_ssl.c
VARIANTS = ("standalone", "motet", "motet_nolog")
PINS = "A1,A2,A3,A4"
SPIN = "spin_until_set"
INTERRUPT_ENTRY = 4  # cycles a real ATmega128 adds per interrupt, simavr 1.6 none
PAPER_PCT, TARGET_PCT = 0.94, 0.3


def _window(events, pin):
    w = windows(events.get(pin, []))
    if len(w) != 1:
        raise BenchError(f"pin {pin}: {len(w)} windows, expected 1")
    return w[0]


# The kernel's work in a block, by operation: the functions each runs in.
# A kernel function not named here is reported as "other kernel code", so
# nothing is left out of the table.
OPERATIONS = (
    ("timer interrupt and expiry", ("__vectors", "__vector_12", "TIMER1_COMPA_vect_run",
                                    "timer_isr_compare",
                                    "timer_service", "timer_now_irq_off", "port_compare_set",
                                    "list_link_wait", "timer_clock_wrapped",
                                    "sched_post_timer_expiry", "queue_timer_block",
                                    "sched_isr_exit")),
    ("dispatch: run a handler, return, take the next", ("dispatch_run", "frame_run",
                                                        "drain_held_off", "dispatch_drain",
                                                        "dispatch_end_drain", "drain_rare",
                                                        "run_slot_held_off",
                                                        "dispatch_run_payload")),
    ("send: checks, lookup, queueing", ("sched_send_borrowed", "sched_send_heap", "send_along",
                                        "send_heap_along", "send_waiting", "sched_send_to",
                                        "send_to_waiting")),
    ("heap: alloc, hand-over, take, free", ("mem_alloc", "mem_alloc_owned", "mem_free",
                                            "free_block", "mem_set_owner", "mem_pass",
                                            "mem_hand_over", "payload_to_kernel", "sched_take",
                                            "sched_take_msg", "send_drop_payload",
                                            "sched_current_pid")),
    ("event records written by a call", ("log_record",)),
)
# The calling convention's instructions: saved registers, calls and
# returns; a jump only where it enters a function (a tail call), not a
# branch inside one (_disassembly()).
CONVENTION = {"push", "pop", "call", "rcall", "icall", "ret", "reti", "tail-jump"}


def _profile(exe, elf, pin, work):
    """({function: cycles}, per-instruction rows) while `pin` was high."""
    path = Path(work) / f"profile-{elf.stem}-{pin}.txt"
    pcs = Path(work) / f"profile-pc-{elf.stem}-{pin}.txt"
    status, out, err = _harness_run(exe, elf, ["--profile", str(path), "--profile-pc", str(pcs),
                                               "--profile-gate", pin])
    if status != 0:
        raise BenchError(f"{elf.name} failed under the profiler (status {status}):\n{out}{err}")
    return read_profile(path), read_profile_pcs(pcs)


def _disassembly(elf):
    """({address: mnemonic}, {function: entry address}) of an AVR image."""
    text = subprocess.run(["avr-objdump", "-d", str(elf)], capture_output=True, text=True,
                          check=True).stdout
    ops, entries = {}, {}
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            entries[m.group(2)] = int(m.group(1), 16)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*\t(\S+)", line)
        if m:
            op = m.group(2)
            # objdump names a jump's target <func> at an entry, <func+0x..> inside
            if op in ("jmp", "rjmp") and re.search(r"<[^+>]+>$", line):
                op = "tail-jump"
            ops[int(m.group(1), 16)] = op
    return ops, entries


def _operations(elf, pcs1, pcs3, app):
    """Per block, for each kernel operation (OPERATIONS, then any other
    kernel function): cycles, cycles in the calling convention's
    instructions, and {function: calls} from the executions of its entry."""
    ops, entries = _disassembly(elf)
    per_block = {}
    for sign, rows in ((-1, pcs1), (1, pcs3)):
        for addr, cycles, runs, func in rows:
            c = per_block.setdefault(func, {"cycles": 0, "convention": 0, "calls": 0})
            c["cycles"] += sign * cycles / (N2 - N1)
            if ops.get(addr) in CONVENTION:
                c["convention"] += sign * cycles / (N2 - N1)
            if addr == entries.get(func):
                c["calls"] += sign * runs / (N2 - N1)
    named = {f for _, funcs in OPERATIONS for f in funcs}
    other = tuple(f for f, c in per_block.items()
                  if f not in named and not app.match(f) and round(c["cycles"]) > 0)
    table = []
    for name, funcs in OPERATIONS + (("other kernel code", other),):
        rows = [(f, per_block[f]) for f in funcs if f in per_block]
        table.append({"operation": name,
                      "cycles": sum(c["cycles"] for _, c in rows),
                      "convention": sum(c["convention"] for _, c in rows),
                      "calls": {f: c["calls"] for f, c in rows if round(c["calls"]) > 0}})
    return table


def measure(exe, elf, work):
    """Per-block figures of one image (cycles) and the blocks it voted sound."""
    trace, summary = Path(work) / f"{elf.stem}.edges", Path(work) / f"{elf.stem}.json"
    status, out, err = _harness_run(exe, elf, ["--trace", PINS, "-o", str(trace),
                                               "--json", str(summary)])
    if status != 0 or "done" not in out:
        raise BenchError(f"{elf.name} failed (status {status}):\n{out}{err}")
    events = read_trace(trace)
    first, second = _window(events, "A1"), _window(events, "A3")
    res = {"sound": [int(b) for b in re.findall(r"^sound (\d+)$", out, re.M)],
           "stack": json.loads(summary.read_text()).get("stack_used"), "mem": None}
    if "A2" in events:  # the Motet builds: stolen time, heap loop
        (p1, pcs1), (p3, pcs3) = _profile(exe, elf, "A1", work), _profile(exe, elf, "A3", work)
        first -= p1.get(SPIN, 0)
        second -= p3.get(SPIN, 0)
        res["mem"] = (_window(events, "A4") - _window(events, "A2")) / MEM_N
        res["kernel_top"] = _kernel_top(p1, p3)
        res["operations"] = _operations(elf, pcs1, pcs3, APP_FUNCTIONS)
    res["work"] = (second - first) / (N2 - N1)
    return res


# The application's and the C library's functions: the rest is the kernel's
# (the interrupt vectors are the kernel's port, listed in OPERATIONS).
APP_FUNCTIONS = re.compile(r"^(fft_|sc_|vote_|trig_|max_component|sample_block|mic_task|sc_task|"
                           r"vote_task|send_block|note_decision|driver_task|main$|__(?!vector)\w+|"
                           r"mem(move|cpy|set)|spin_until_set)")


def _kernel_top(p1, p3, n=6):
    """The heaviest functions per block that are not the application's."""
    per = {f: (p3.get(f, 0) - p1.get(f, 0)) / (N2 - N1) for f in set(p1) | set(p3)}
    kern = sorted(((c, f) for f, c in per.items()
                   if not APP_FUNCTIONS.match(f) and not f.startswith("__") and c > 0),
                  reverse=True)
    return kern[:n]


def _freq(bdir):
    m = re.search(r"^MOTET_AVR_F_CPU:\w+=(\d+)$", (bdir / "CMakeCache.txt").read_text(), re.M)
    return int(m.group(1)) if m else 8_000_000


def _operations_lines(res, over_on, over_off):
    """The per-operation table: where the kernel's cycles of a block go."""
    on = {o["operation"]: o for o in res["motet"]["operations"]}
    off = {o["operation"]: o for o in res["motet_nolog"]["operations"]}
    w = ["Where the Motet build's cycles go, per block, by kernel operation (the harness's "
         "profile per instruction, `--profile-pc`; *saves and calls*: the push, pop, call and "
         "return instructions of those functions and their jumps into another function (tail "
         "calls), the calling convention's share; *calls*: "
         "executions of each function's entry):\n",
         "| operation | log on | log off | saves and calls (log on) | functions (calls per "
         "block, log on) |",
         "|---|---:|---:|---:|---|"]
    total_on = total_off = conv = 0.0
    for name, o in on.items():
        o_off = off.get(name, {"cycles": 0.0})
        if not o["calls"] and round(o["cycles"]) == 0 and round(o_off["cycles"]) == 0:
            continue  # "other kernel code" when there is none
        calls = ", ".join(f"{f} {c:.0f}" for f, c in o["calls"].items()) or "-"
        w.append(f"| {name} | {o['cycles']:.0f} | {o_off['cycles']:.0f} | "
                 f"{o['convention']:.0f} | {calls} |")
        total_on += o["cycles"]
        total_off += o_off["cycles"]
        conv += o["convention"]
    w.append(f"| **kernel** | **{total_on:.0f}** | **{total_off:.0f}** | **{conv:.0f}** | |")
    w.append(f"| the tasks' glue and the rest (overhead less kernel) | {over_on - total_on:.0f} | "
             f"{over_off - total_off:.0f} | | mic, sc, vote against the standalone's calls |")
    w.append("")
    dispatch = next(o for n, o in on.items() if n.startswith("dispatch"))
    dispatch_off = off[dispatch["operation"]]["cycles"]
    w.append(f"Of the kernel's {total_on:.0f} cycles per block, {conv:.0f} "
             f"({100 * conv / total_on:.0f} %) are saved registers, calls and returns, the price "
             "of C's calling convention on an 8-bit core; of the event log's "
             f"{total_on - total_off:.0f}, {dispatch['cycles'] - dispatch_off:.0f} are in the "
             "dispatches, which write a record as a handler starts (START, or RUN for a send run "
             "at once) and one as it ends (END).\n")
    return w


def _period_fit(block_ms, period_ms=250):
    """What a block period like the paper's leaves of the module's time."""
    if block_ms <= period_ms:
        return (f"so a {period_ms} ms block period leaves the module idle "
                f"{100 * (1 - block_ms / period_ms):.0f} % of the time.")
    return (f"longer than a {period_ms} ms block period: at this clock the module cannot keep "
            "up with one (the benchmark's period is in cycles, bench_avr_ssl.c).")


def render(res, freq):
    base, on, off = (res[v]["work"] for v in VARIANTS)
    mem = res["motet_nolog"]["mem"]
    log, rest = on - off, off - base - mem
    pct = lambda x: f"{100 * x / base:.2f} %"
    ms = lambda c: f"{1000 * c / freq:.2f} ms"
    w = ["## SSL on the ATmega128: a sensing module's chain (cycles)\n"]
    w.append("A sensing module's share of the SSL chain (the paper's MSP430 modules) on an "
             f"ATmega128 at {freq / 1e6:g} MHz under simavr, per 512-sample block: sampling the "
             "block (a 16-bit xorshift standing in for the ADC reads; every other block 24 dB "
             "louder), the Hann window, the Q15 512-point real FFT, SC on the 151-bin band and "
             "the verdict. The Motet build is the application's structure (apps/ssl/"
             "tasks_ssl.c): a periodic timer starts mic, which samples into a block (mem_alloc) "
             "and hands it to fft with MSG_HEAP; fft windows and transforms it in place and "
             "hands it on to sc the same way; sc sends its verdict to a vote task on the same module, "
             "whose decision comes back and frees the spectrum (on the device the verdict and the "
             "decision cross the bus, whose driver is not measured here). Same DSP code as "
             "apps/ssl, same blocks; all three images voted the same "
             f"{len(res['standalone']['sound'])} of 32 blocks sound (checked by the script). "
             "Kernels without threads; everything in the 4 KB of internal SRAM (no external "
             "SRAM: the Motet image's static data is "
             f"{res['motet'].get('ram', '?')} B with a 1088-byte heap for the spectrum block). "
             "Sources: bench/avr-ssl/bench_avr_ssl.c, tools/motetlib/bench_ssl_avr.py.\n")
    w.append("| build | cycles per block | at the clock | over standalone |")
    w.append("|---|---:|---:|---:|")
    w.append(f"| standalone | {base:.0f} | {ms(base)} | |")
    w.append(f"| Motet | {on:.0f} | {ms(on)} | {on - base:.0f} ({pct(on - base)}) |")
    w.append(f"| Motet, event log compiled out | {off:.0f} | {ms(off)} | {off - base:.0f} "
             f"({pct(off - base)}) |")
    w.append("")
    w.append("Split of the Motet build's overhead (log on):\n")
    w.append("| part | cycles per block | of standalone |")
    w.append("|---|---:|---:|")
    w.append(f"| messaging, timer and task glue (the rest) | {rest:.0f} | {pct(rest)} |")
    w.append(f"| event logging (log on - log off) | {log:.0f} | {pct(log)} |")
    w.append(f"| memory (mem_alloc of the spectrum block + mem_free, log off) | {mem:.0f} | "
             f"{pct(mem)} |")
    w.append("")
    w += _operations_lines(res, on - base, off - base)
    top = ", ".join(f"{f} {c:.0f}" for c, f in res["motet"]["kernel_top"])
    w.append(f"Heaviest kernel functions per block (log on, harness profile): {top}. \"The "
             "rest\" is the timer interrupt and expiry that starts each block, four sends "
             "(the samples and the spectrum with MSG_HEAP, the verdict, the decision) with their dispatches and "
             "payload copies, and the handlers' checks.\n")
    w.append(f"simavr 1.6 charges no cycles for interrupt entry; a real ATmega128 adds at least "
             f"{INTERRUPT_ENTRY} per interrupt, one (the timer) per block here: "
             f"{INTERRUPT_ENTRY} cycles more per block in the Motet builds, under "
             f"{100 * INTERRUPT_ENTRY / base:.4f} % of the standalone block. Stack high-water "
             f"marks: standalone {res['standalone']['stack']} B, Motet "
             f"{res['motet']['stack']} B.\n")
    pct_on, pct_off = 100 * (on - base) / base, 100 * (off - base) / base
    verdict = lambda p: "meets" if p <= TARGET_PCT else "misses"
    w.append(f"This is the paper's own measure: its table II ({PAPER_PCT} % with a sound source) "
             "timed a subset of the SSL tasks (Mic, FFT and SC) on one sensing module, from the "
             "timer interrupt to SC's end, where SC sent its 1 kB spectrum over the bus when it "
             "heard a sound; here the verdict goes out and a decision comes back instead. The "
             f"target is {TARGET_PCT} %. The overhead is {pct_on:.3f} % with the log, which "
             f"{verdict(pct_on)} the target, and {pct_off:.3f} % without, which "
             f"{verdict(pct_off)} it. The block's computation takes "
             f"{ms(base)} at {freq / 1e6:g} MHz, " + _period_fit(on * 1000 / freq))
    return "\n".join(w) + "\n"


def bench(build_dir, output=None, harness=None):
    bdir = Path(build_dir)
    try:
        res = build.rebuild_captured(bdir)
        if res is not None and res.returncode != 0:
            raise BenchError(f"build failed in {bdir}:\n{res.stdout[-3000:]}"
                             f"{res.stderr[-3000:]}")
        exe = harness_or_exit(harness or str(bdir / "tools" / "motet-simavr"))
        results = {}
        with tempfile.TemporaryDirectory(prefix="motet-ssl-avr-") as work:
            for variant in VARIANTS:
                elf = bdir / "bench" / "avr-ssl" / f"bench_avr_ssl_{variant}.elf"
                if not elf.is_file():
                    raise BenchError(f"{elf} was not built (an AVR build tree?)")
                results[variant] = measure(exe, elf, work)
                results[variant]["ram"] = _static_ram(elf)
        base = results["standalone"]["sound"]
        for v in VARIANTS[1:]:
            if results[v]["sound"] != base:
                raise BenchError(f"{v} voted other blocks sound: {results[v]['sound']} vs {base}")
    except (BenchError, OSError, subprocess.SubprocessError) as e:
        print(f"ssl-avr bench: error: {e}", file=sys.stderr)
        return 1
    text = render(results, _freq(bdir))
    print(text)
    out = report.write_section("ssl-avr", text, Path(output) if output else report.REPORT)
    print(f"ssl-avr bench: wrote {out}")
    return 0


def _static_ram(elf):
    from .port_avr import section_sizes, static_ram
    return static_ram(section_sizes(elf))


def main(argv=None):
    p = cmdline.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", default=str(build.port_build_dir(None, "avr")))
    p.add_argument("--output", default=None)
    p.add_argument("--harness", default=None, help="path of motet-simavr")
    args = p.parse_args(argv)
    return bench(args.build_dir, args.output, args.harness)


if __name__ == "__main__":
    sys.exit(main())
