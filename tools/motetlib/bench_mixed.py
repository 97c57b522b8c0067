# SPDX-License-Identifier: MIT
"""The SSL application on the mixed device (devices/ssl-mixed.toml: a
Cortex-M3 compute module under QEMU, four ATmega128 sensing modules in the
simavr harness) beside the native five-module device (devices/ssl-device.toml,
the processors' cost models), both on the demo's 14 s scenario; written as
section "mixed" of docs/benchmarks.md.

    python3 -m motetlib.bench_mixed [--build-dir DIR] [--output FILE]   (from tools/)
    ./motet bench --only mixed

What it reports, all from the hub's report of each run (hub.py):
- per module: busy and asleep (an emulated module's from its own cycles),
  energy (the device file's power figures);
- frame latency per link, from the sender's interface holding a frame to
  the receiver's kernel accepting it (RX_DONE after its CRC check): the
  ATmega128s to the Cortex-M3 (the SC verdicts and bands) and back (the
  vote's decisions), in microseconds of device time and in the cycles of
  the ATmega128 (8 MHz) and of the Cortex-M3's 25 MHz timer clock; beside
  the same links of the native device;
- the wall-clock speed of the simulation: simulated seconds per wall
  second, with the machine's load average while it ran (the figure depends
  on it: five emulator processes and the hub share the cores);
- the RAM of a sensing module's image (the ATmega128 build of
  apps/ssl/ssl_device): its static data by item from the linker map, the
  kernel stack `motet stack` bounds for it, and the RAM it runs with
  (tools/motetlib/avr_ram.py).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

from . import avr_ram, build, cmdline, device as devmod, report, run_device, ssl_demo

ROOT = build.ROOT
MIXED = ROOT / "devices" / "ssl-mixed.toml"
NATIVE = ROOT / "devices" / "ssl-device.toml"
SCENARIO = ROOT / "apps" / "ssl" / "scenarios" / "demo.toml"
AVR_MHZ, CM_TIMER_MHZ = 8, 25
SENSING_STACK = ROOT / "apps" / "ssl" / "ssl_device_avr.stack"
INTERNAL_SRAM = 4096  # the ATmega128's, without external SRAM
SMALL_ITEM = 32  # bytes: smaller items are summed in one row
TARGET_WALL_S = 60.0  # the 14 s scenario, on a 2-core machine (issue #18)


def run_one(device, bdir):
    """Run `device` on the demo scenario; (report, radio lines, wall s,
    load averages before and after)."""
    dev = devmod.load(device)
    lines = []
    load0 = os.getloadavg()
    t0 = time.monotonic()
    status, rep = run_device.run(dev, bdir, until=ssl_demo.run_until(SCENARIO),
                                 extra=["--scenario", str(SCENARIO)], out=lines.append,
                                 progress=False)
    wall = time.monotonic() - t0
    if status != 0 or rep is None:
        raise RuntimeError(f"{device.name}: the run failed (status {status}):\n"
                           + "\n".join(lines[-30:]))
    return dev, rep, lines, wall, (load0, os.getloadavg())


def accuracy(lines):
    found, alerts = ssl_demo.parse_radio(lines)
    errors = [ssl_demo.angle_error(d["angle"], d["truth"]) for d in found
              if d["truth"] is not None]
    rms = math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else float("nan")
    return found, alerts, rms


def link_rows(rep, dev, native_rep):
    """Rows of the latency table: (link, mixed figures, native figures)."""
    kinds = {m.id: m.kind for m in dev.modules}
    native = {(l["src"], l["dst"]): l for l in native_rep["links"]}
    rows = []
    for link in rep["links"]:
        src, dst = link["src"], link["dst"]
        if {kinds[src], kinds[dst]} != {"avr", "cortex-m"}:
            continue
        other = native.get((src, dst))
        rows.append((src, dst, kinds[src], link, other))
    return rows


def sensing_ram(bdir):
    """The sensing image's RAM: (items, static bytes, analysed stack
    bytes, RAM it runs with)."""
    elf = build.port_build_dir(bdir, "avr") / "apps" / "ssl" / "ssl_device.elf"
    rows = avr_ram.items(Path(f"{elf}.map"))
    static = avr_ram.port_avr.static_ram(avr_ram.port_avr.section_sizes(elf))
    bound = avr_ram.stack_bound(elf, [SENSING_STACK])
    if bound.problems:
        raise RuntimeError(f"{elf}: the stack analysis refused: {'; '.join(bound.problems)}")
    return rows, static, bound.depth, avr_ram.ram_bytes(elf)


def ram_lines(ram):
    rows, static, stack, runs_with = ram
    small = [n for _, n in rows if n < SMALL_ITEM]
    heap = sum(n for name, n in rows if name.startswith("heap:"))
    out = ["", "### RAM of a sensing module (the ATmega128 image)", "",
           "apps/ssl/ssl_device built for the AVR port: its static data by item, from the "
           "linker map (on the AVR, constants not kept in program memory are copied into RAM at "
           "boot), the kernel stack `motet stack` bounds for it (apps/ssl/ssl_device_avr.stack: "
           "every task of the description, nested as the kernel's dispatch allows, and the "
           "interrupts), and the RAM it runs with. Source: tools/motetlib/avr_ram.py, also the "
           "test ssl_device_avr_ram.", "",
           "| item | bytes |", "|---|---:|"]
    out += [f"| {name} | {n} |" for name, n in rows if n >= SMALL_ITEM]
    out += [f"| {len(small)} items under {SMALL_ITEM} B each | {sum(small)} |",
            f"| **static RAM** | **{static}** |", f"| analysed kernel stack | {stack} |", "",
            f"Static RAM and the analysed stack: {static + stack} B, of the {runs_with} B the "
            f"image runs with (4 KB of internal SRAM and 8 KB of external SRAM, its stack from "
            f"0x2FFF). Against the ATmega128's {INTERNAL_SRAM} B alone: the heap ({heap} B) "
            f"and the stack bound already need {heap + stack} B."]
    return out


def section(mixed, native, ram):
    dev, rep, lines, wall, loads = mixed
    ndev, nrep, nlines, nwall, _ = native
    end = rep["end_s"]
    found, alerts, rms = accuracy(lines)
    nfound, nalerts, nrms = accuracy(nlines)
    speed = end / wall
    out = ["## The SSL device on emulated chips (devices/ssl-mixed.toml)", "",
           "The demo's 14 s scenario (apps/ssl/scenarios/demo.toml) on the mixed device: the "
           "compute module a Cortex-M3 (QEMU mps2-an385, -icount), the four sensing modules "
           "ATmega128s at 8 MHz (simavr harness), the tasks placed by apps/ssl/ssl_device.toml; "
           "beside it the native five-module device (devices/ssl-device.toml, ARM7 and MSP430 "
           "cost models). On the emulated modules a handler costs the cycles it executes. "
           "Source: tools/motetlib/bench_mixed.py (`motet bench --only mixed`).", "",
           f"Directions: {len(found)} found on the mixed device, RMS error {rms:.2f} degrees; "
           f"{len(nfound)} on the native one, RMS {nrms:.2f}. Fire alerts: "
           + ", ".join(f"{a['t']:.3f} s, {a['latency'] * 1e3:.2f} ms" for a in alerts)
           + " (native: "
           + ", ".join(f"{a['t']:.3f} s, {a['latency'] * 1e3:.2f} ms" for a in nalerts) + ").",
           "", "### Modules: busy, asleep and energy", "",
           "| module | mixed: chip | busy | asleep | energy | native: model | busy | asleep "
           "| energy |",
           "|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for spec, nspec in zip(dev.modules, ndev.modules):
        m, n = rep["modules"][str(spec.id)], nrep["modules"][str(nspec.id)]
        nend = nrep["end_s"]
        out.append(f"| m{spec.id} {spec.name} | {spec.kind} {spec.cpu_mhz:g} MHz | "
                   f"{100 * m['busy_s'] / end:.2f} % | {100 * m['sleep_s'] / end:.2f} % | "
                   f"{m['energy_mj']:.1f} mJ | {ssl_demo.module_cpu(nspec)} {nspec.cpu_mhz:g} MHz"
                   f" | {100 * n['busy_s'] / nend:.2f} % | {100 * n['sleep_s'] / nend:.2f} % | "
                   f"{n['energy_mj']:.1f} mJ |")
    out += ["",
            "An ATmega128's busy time is its own cycles: the 512-point FFT and SC of a block "
            "take about 140 ms of its 8 MHz (section ssl-avr), against the MSP430 model's "
            "55 ms at 6 MHz. The Cortex-M3's busy and asleep are its own clocks too: its port "
            "shows the lock-step each WFI and the clocks it slept (docs/bus.md, \"Emulated "
            "modules\"); HT and the vote take it well under 1 % of the run.", "",
            "### Frame latency between the ATmega128s and the Cortex-M3", "",
            "From the sender's interface holding the frame to the receiver's kernel accepting "
            "it (RX_DONE, after the CRC check and the delivery to its task): the TDMA slot "
            "wait, the wire, a busy receiver, and the receiving driver's interrupt in its "
            "real cycles (on the native device, its bus_cycles_per_frame and per byte). "
            "Frames: the SC verdicts (16 B) and bands (672 B) up, the vote's decisions "
            "(16 B, multicast) and HT's directions to the radio (24 B, m1 to m2) down. The "
            "largest figure down is the description at boot, which waits until the ATmega128 "
            "has booted and given its interface a buffer (18 ms). A band's frame is sealed "
            "(its CRC-16 over 684 bytes, about 24 cycles a byte by the table in flash: 2 ms "
            "at 8 MHz) as sc queues it, in sc's context; it is sealed again in the interrupt "
            "that ends the frame before it only if a frame of its link overtook it "
            "(kernel/src/bus.c, kick()), and a direction arriving at m2 then waits for that "
            "interrupt. The device's ack timeout (50 ms) leaves room for it.", "",
            "| link | frames | mean | min | max | mean, AVR cycles | mean, CM3 timer clocks "
            "| native: mean | min | max |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for src, dst, kind, link, other in link_rows(rep, dev, nrep):
        native_cells = (f"{other['mean_us']:.1f} us | {other['min_us']:.1f} us | "
                        f"{other['max_us']:.1f} us" if other else "- | - | -")
        arrow = "AVR to CM3" if kind == "avr" else "CM3 to AVR"
        out.append(f"| m{src} to m{dst} ({arrow}) | {link['frames']} | {link['mean_us']:.1f} us |"
                   f" {link['min_us']:.1f} us | {link['max_us']:.1f} us | "
                   f"{link['mean_us'] * AVR_MHZ:.0f} | {link['mean_us'] * CM_TIMER_MHZ:.0f} | "
                   f"{native_cells} |")
    load_note = (f"load average {loads[0][0]:.1f} before and {loads[1][0]:.1f} after "
                 f"(1 minute), {os.cpu_count()} cores")
    verdict = "met" if wall <= TARGET_WALL_S else "missed"
    out += ["", "### Speed of the simulation", "",
            f"The mixed device simulated {end:.2f} s in {wall:.1f} s of wall time: "
            f"{speed:.3f} simulated seconds per wall second ({load_note}); the native device "
            f"took {nwall:.1f} s. Target: the 14 s scenario in at most {TARGET_WALL_S:.0f} s "
            f"on a 2-core machine: {verdict} on this run.",
            "", "Where the time goes: the hub grants a computing emulated core no more than "
            "its next own TDMA slot plus the smallest frame's wire time (tens of "
            "microseconds), one round trip through the hub each: the four ATmega128s, "
            "computing half of each block, take most of them. A core asleep with nothing "
            "due costs the hub nothing until its next timer or a frame for it, which is "
            "where the Cortex-M3 spends nearly all of the run."]
    out += ram_lines(ram)
    return "\n".join(out) + "\n"


def bench(bdir=None, output=None):
    """Build, run both devices, write the section. Exit status."""
    for device in (MIXED, NATIVE):
        if run_device.build_programs(bdir, devmod.load(device)) != 0:
            return 1
    bdir = build.build_dir(bdir)
    try:
        ram = sensing_ram(bdir)
        native = run_one(NATIVE, bdir)
        mixed = run_one(MIXED, bdir)
    except (RuntimeError, OSError, avr_ram.stackcheck.StackError) as e:
        print(f"bench mixed: {e}", file=sys.stderr)
        return 1
    text = section(mixed, native, ram)
    print(text)
    report.write_section("mixed", text, Path(output) if output else report.REPORT)
    return 0


def main(argv=None):
    p = cmdline.ArgumentParser(prog="python3 -m motetlib.bench_mixed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default=None, help="default: $MOTET_BUILD_DIR or build")
    p.add_argument("--output", default=None, help="default: docs/benchmarks.md")
    args = p.parse_args(argv)
    return bench(args.build_dir, args.output)


if __name__ == "__main__":
    sys.exit(main())
