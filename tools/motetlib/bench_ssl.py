# SPDX-License-Identifier: MIT
"""The SSL application's figures: accuracy, alert latency, and Motet's
overhead in instructions (callgrind); written to docs/benchmarks-ssl.md.

    python3 -m motetlib.bench_ssl [--build-dir DIR] [--output FILE]   (from tools/)

Accuracy and latency are plain native runs: the twelve-angle scenario of
tests/scenario/test_ssl.py at several SNRs (standalone build), and three
fires on the msp430 and arm7 cost models (Motet build). The rest of this
text is about the overhead.

The five-module figures are runs of devices/ssl-device.toml (the paper's
figure 8 placement, apps/ssl/ssl_device.toml) on the same two scenarios,
in simulated time: latency per block, each module's share of busy time,
the bus traffic and what the bus driver costs each module. They are not an
overhead in the paper's sense (see render_device()).

The same signal chain runs as the Motet single-module build (apps/ssl/ssl,
and ssl_nolog with the event log compiled out) and as one plain C program
(apps/ssl/ssl_standalone). Each runs under `valgrind --tool=callgrind` on a
scenario cut at two lengths, N1 and N2 blocks after the same start; the
difference of the two profiles divided by N2 - N1 is the cost of one block
(start-up, loading the description, training the noise estimate and exit
cancel exactly). Two scenarios: a talker present in every block ("sound":
every block goes through HT) and background noise alone ("noise": FFT and
SC only), the two columns of the paper's tables II and V.

Where the instructions go. Callgrind gives each function's own (self) cost
with the source file of every instruction, inlined code included (so the
event log's append inlined into dispatch.c, kernel/src/log_ring.h, counts as
event logging). Files are put in categories (CATEGORIES); the C library's
own instructions are charged separately, except those the simulator
causes: the simulator (sim/*.c and the libm calls inside it) is measured as
the inclusive cost of the calls to its entry points, and left out of both
programs, since it stands for hardware (ADCs, a temperature sensor) that
costs the modules nothing.

Overhead = what the Motet build executes per block beyond the standalone
build, split into the kernel's messaging, event logging, memory operations
and timers (the paper's breakdown), the native port's emulation of
interrupts and the simulated clock (no counterpart on a microcontroller),
and the remaining differences (task glue, the C library). The denominator
is the standalone build's own work per block (everything but the
simulator), the analogue of the paper's 250.6 ms.
"""

import collections
import math
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import build, cmdline, device as devmod, eventlog, report, run_device

N1, N2 = 8, 24           # blocks measured after the warm-up
WARMUP_S = 1.5           # training (1 s) and the talker's onset
BLOCK_S = 0.25           # apps/ssl/ssl_single.toml
PROGRAMS = (("motet", "ssl"), ("motet, log off", "ssl_nolog"), ("standalone", "ssl_standalone"))
SCENARIOS = {
    "sound": "[[source]]\nangle = 60\nstart = 1.25\nduration = 1000\nkind = \"speech\"\n",
    "noise": "",
}
# Simulator entry points: their inclusive cost is the simulated hardware.
SIM_ENTRIES = ("sim_mic_block", "sim_temp_read", "sim_true_angle")

# (category, path regex), first match wins; paths are callgrind's file names.
CATEGORIES = (
    ("event logging", r"/kernel/(src/log(\.c|_ring\.h)|include/motet/log\.h)$"),
    ("memory", r"/kernel/src/(mem_heap|slab)\.c$"),
    ("timers", r"/kernel/src/timer(\.c|_clock\.h)$"),
    ("messaging", r"/kernel/(src|include)/"),
    ("native port", r"/ports/native/"),
    ("simulated time (cost model)", r"/apps/ssl/(dsp/cost\.c|board_sim\.c)$"),
    ("simulator", r"/apps/ssl/sim/"),
    ("DSP", r"/apps/ssl/dsp/"),
    ("application glue", r"/apps/ssl/"),
)
# Written as sections "ssl" and "ssl-device" (tools/motetlib/report.py) of
# this file.
DEFAULT_OUTPUT = report.REPORT
KERNEL = ("messaging", "event logging", "memory", "timers")
HOST = ("native port", "simulated time (cost model)")
REST = ("application glue", "C library")
TARGET_PERCENT = 0.3
PAPER = {"messaging": 1.4, "event logging": 0.863, "memory": 0.137, "total": 250.6}


class BenchError(RuntimeError):
    pass


@dataclass
class Profile:
    """One callgrind run: instructions by category."""
    total: int = 0
    by_category: collections.Counter = field(default_factory=collections.Counter)

    def minus(self, other, divisor):
        out = Profile((self.total - other.total) / divisor)
        for k in set(self.by_category) | set(other.by_category):
            out.by_category[k] = (self.by_category[k] - other.by_category[k]) / divisor
        return out


def category(path):
    for name, pattern in CATEGORIES:
        if re.search(pattern, path or ""):
            return name
    return "C library"


class _Names:
    """callgrind's name compression: "(id) name" defines, "(id)" refers."""

    def __init__(self):
        self.table = {"fl": {}, "fn": {}, "ob": {}}

    def get(self, kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not m:
            return text
        if m.group(2) is not None:
            self.table[kind][m.group(1)] = m.group(2)
        return self.table[kind].get(m.group(1), "?")


_KIND = {"fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl", "fn": "fn", "cfn": "fn",
         "ob": "ob", "cob": "ob"}


def parse_callgrind(text):
    """(self cost by file, inclusive cost of calls by callee, totals)."""
    names, by_file, calls = _Names(), collections.Counter(), collections.Counter()
    fl = fi = callee = pending = None
    total = None
    for line in text.splitlines():
        if not line:
            continue
        if line[0].isdigit() or line[0] in "+-*":
            parts = line.split()
            cost = int(parts[-1]) if len(parts) > 1 else 0
            if pending is not None:
                calls[pending] += cost
                pending = None
            else:
                by_file[fi or fl] += cost
            continue
        key, _, value = line.partition("=")
        if key in _KIND:
            name = names.get(_KIND[key], value)
            if key == "fl":
                fl, fi = name, None
            elif key in ("fi", "fe"):
                fi = name
            elif key == "fn":
                fi = None
            elif key == "cfn":
                callee = name
        elif key == "calls":
            pending = callee
        elif line.startswith("totals:"):
            total = int(line.split()[1])
    if total is None:
        raise BenchError("no 'totals:' line in the callgrind output")
    return by_file, calls, total


def profile_of(text):
    by_file, calls, total = parse_callgrind(text)
    prof = Profile(total)
    for path, cost in by_file.items():
        prof.by_category[category(path)] += cost
    # The simulator: its entry points' inclusive cost, libm included; the
    # libm part leaves the C library.
    sim = sum(calls[f] for f in SIM_ENTRIES)
    prof.by_category["C library"] -= sim - prof.by_category["simulator"]
    prof.by_category["simulator"] = sim
    if sum(prof.by_category.values()) != total:
        raise BenchError("categories do not add up to the total")
    return prof


def _tool(name):
    path = shutil.which(name)
    if path is None:
        raise BenchError(f"{name} not found (run `./motet setup`)")
    return path


def run_callgrind(binary, scenario, workdir, extra=()):
    out = Path(workdir) / f"callgrind.{binary.name}.{scenario.stem}"
    cmd = ["/usr/bin/env", "-i", _tool("setarch"), platform.machine(), "-R",
           _tool("valgrind"), "--tool=callgrind", f"--callgrind-out-file={out}",
           "--dump-instr=no", str(binary), "--scenario", str(scenario), *extra]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    if res.returncode != 0:
        raise BenchError(f"{binary.name} failed under callgrind (status {res.returncode}):\n"
                         f"{res.stderr[-3000:]}")
    return profile_of(out.read_text()), res.stdout


def write_scenario(workdir, kind, blocks):
    duration = WARMUP_S + blocks * BLOCK_S
    path = Path(workdir) / f"{kind}_{blocks}.toml"
    path.write_text(f"seed = 4\nduration = {duration}\n[noise]\nsnr_db = 10\n"
                    + SCENARIOS[kind])
    return path


def measure(bdir, workdir):
    """{scenario: {program: per-block Profile}}, and the reports checked equal."""
    results = {}
    for kind in SCENARIOS:
        short, long_ = write_scenario(workdir, kind, N1), write_scenario(workdir, kind, N2)
        results[kind] = {}
        outputs = {}
        for label, exe in PROGRAMS:
            binary = bdir / "apps" / "ssl" / exe
            if not binary.exists():
                raise BenchError(f"{binary} was not built")
            a, _ = run_callgrind(binary, short, workdir)
            b, out = run_callgrind(binary, long_, workdir)
            results[kind][label] = b.minus(a, N2 - N1)
            outputs[label] = _reports(out)
            print(f"bench-ssl: {kind:<6} {label:<15} {results[kind][label].total:>12.0f} "
                  "instructions/block", flush=True)
        if len({tuple(v) for v in outputs.values()}) != 1:
            raise BenchError(f"{kind}: the programs' detections differ: {outputs}")
        if kind == "sound" and len(outputs["standalone"]) < N2 - 1:
            raise BenchError(f"sound: only {len(outputs['standalone'])} blocks detected")
    return results


def _reports(stdout):
    return [m.group(0) for m in re.finditer(r"ssl block=\d+ t_ms=[\d.]+ angle=[\d.]+", stdout)]


def events_per_block(bdir, workdir):
    """Event-log records per block as the kernel's drain gives them, by type,
    in the sound scenario; the events they stand for (eventlog.expand(): a
    RUN is its SEND and its START, a task timer's TIMER its SEND too); and
    the messages among those events (their SENDs)."""
    scenario = write_scenario(workdir, "sound", N2)
    log = Path(workdir) / "events.log"
    subprocess.run([str(bdir / "apps" / "ssl" / "ssl"), "--scenario", str(scenario),
                    "--log", str(log)], capture_output=True, check=True)
    lo, hi = (WARMUP_S + N1 * BLOCK_S) * 1e6, (WARMUP_S + N2 * BLOCK_S) * 1e6
    counts = collections.Counter()
    events = messages = 0
    for line in log.read_text().splitlines():
        rec = eventlog.parse_line(line)
        if isinstance(rec, eventlog.Event) and lo < rec.time_us <= hi:
            counts[rec.type] += 1
            expanded = eventlog.expand(rec)
            events += len(expanded)
            messages += sum(1 for ev in expanded if ev.type == "SEND")
    blocks = N2 - N1
    return {k: v / blocks for k, v in counts.items()}, events / blocks, messages / blocks


# ---- accuracy and alert latency (native runs, no callgrind) ----------------

ANGLES = (0, 45, 90, 135, 180, 225, 270, 315, 17.3, 128.8, 241.6, 333.3)
SNRS = (20.0, 10.0, 5.0, 0.0)
SOURCE_S, GAP_S, FIRST_S = 2.0, 0.5, 1.5
SIDE_M, FS, C = 0.20, 16000.0, 343.0
TOLERANCE_DEG = math.degrees((C / FS) / (math.sqrt(2) * SIDE_M))  # tests/scenario/test_ssl.py


def angles_scenario(workdir, snr, seed=3):
    lines = [f"seed = {seed}", f"duration = {FIRST_S + len(ANGLES) * (SOURCE_S + GAP_S)}",
             "[noise]", f"snr_db = {snr}"]
    for i, a in enumerate(ANGLES):
        kind = "speech" if i % 2 == 0 else "noise"
        lines += ["[[source]]", f"angle = {a}", f"start = {FIRST_S + i * (SOURCE_S + GAP_S)}",
                  f"duration = {SOURCE_S}", f'kind = "{kind}"']
    path = Path(workdir) / f"angles_{snr:g}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _full_blocks(start):
    end, n = start + SOURCE_S, 0
    for k in range(1000):
        t = (k + 1) * BLOCK_S
        n += t - 512 / FS >= start and t <= end
    return n


def accuracy(bdir, workdir):
    """{snr: [(angle, kind, full blocks, detections, errors)]}, stray detections."""
    out, stray = {}, {}
    for snr in SNRS:
        res = subprocess.run([str(bdir / "apps" / "ssl" / "ssl_standalone"), "--scenario",
                              str(angles_scenario(workdir, snr))],
                             capture_output=True, text=True, check=True)
        found = re.findall(r"ssl block=\d+ t_ms=[\d.]+ angle=([\d.]+) true=([\d.]+|-)",
                           res.stdout)
        stray[snr] = sum(1 for _, t in found if t == "-")
        rows = []
        for i, a in enumerate(ANGLES):
            errs = [abs((float(g) - a + 180) % 360 - 180) for g, t in found
                    if t != "-" and abs(float(t) - a) < 0.05]
            rows.append((a, "speech" if i % 2 == 0 else "noise",
                         _full_blocks(FIRST_S + i * (SOURCE_S + GAP_S)), errs))
        out[snr] = rows
    return out, stray


def alert_latency(bdir, workdir):
    """{cpu: [latency_us]} for three fires, noise only (msp430) or a talker (arm7)."""
    fires = "".join(f"[[fire]]\ntime = {t}\nrise = 20\ntau = 3\n" for t in (3.0, 15.0, 27.0))
    talker = "[[source]]\nangle = 100\nstart = 1.25\nduration = 100\nkind = \"noise\"\n"
    out = {}
    for cpu, extra in (("msp430", ""), ("arm7", talker)):
        path = Path(workdir) / f"fire_{cpu}.toml"
        path.write_text("seed = 11\nduration = 36\n[noise]\nsnr_db = 20\n" + extra + fires)
        res = subprocess.run([str(bdir / "apps" / "ssl" / "ssl"), "--scenario", str(path),
                              "--cpu", cpu], capture_output=True, text=True, check=True)
        out[cpu] = [int(x) for x in re.findall(r"fire alert .*latency_us=(\d+)", res.stdout)]
    return out


# ---- the five-module device (simulated time) --------------------------------

DEVICE = build.ROOT / "devices" / "ssl-device.toml"
DEVICE_DESCRIPTION = build.ROOT / "apps" / "ssl" / "ssl_device.toml"


def _task_pids():
    doc = tomllib.loads(DEVICE_DESCRIPTION.read_text())
    return {t["name"]: 0x10 + i for i, t in enumerate(doc["task"])}


def _window():
    return (WARMUP_S + N1 * BLOCK_S) * 1e6, (WARMUP_S + N2 * BLOCK_S) * 1e6


def _sc_done(records, sc_pid, lo, hi):
    """{capture end: when SC finished that block} on one sensing module:
    the END of each of SC's spectrum handlers (port P0) in (lo, hi]."""
    out = {}
    for r in records:
        if r.type == "END" and r.pid == sc_pid and r.arg == 8 and lo < r.time_us <= hi + 250e3:
            block_end = int(r.time_us // (BLOCK_S * 1e6) * BLOCK_S * 1e6)
            if lo < block_end <= hi:
                out[block_end] = r.time_us
    return out


def _bus_costs(dev, logs, lo, hi):
    """Per module: (frames sent, bytes sent, driver time in us) in (lo, hi],
    from the BUS records (bit 15 of arg: received) and the device's
    per-frame and per-byte CPU costs."""
    out = {}
    for spec in dev.modules:
        sent = nbytes = 0
        cpu_ns = 0
        for r in logs[spec.id]:
            if r.type != "BUS" or not lo < r.time_us <= hi:
                continue
            size = r.arg & 0x7FFF
            cpu_ns += spec.frame_ns + size * spec.byte_ns
            if not r.arg & 0x8000:
                sent += 1
                nbytes += size
        out[spec.id] = (sent, nbytes, cpu_ns / 1e3)
    return out


def _device_run(dev, bdir, scenario, log_dir):
    lines = []
    status, rep = run_device.run(dev, bdir, log_dir=log_dir, out=lines.append,
                                 extra=["--scenario", str(scenario)], progress=False)
    if status != 0:
        raise BenchError(f"the device run failed ({scenario.name}):\n" + "\n".join(lines[-30:]))
    return lines, rep


def device_figures(bdir, workdir):
    """{scenario: figures} of the five-module device on the sound and noise
    scenarios (simulated time, blocks N1..N2 after the warm-up). Busy time
    per block is the difference of two runs, N1 and N2 blocks long, as for
    the instruction counts: start-up and training cancel."""
    dev = devmod.load(DEVICE)
    pids = _task_pids()
    lo, hi = _window()
    blocks = N2 - N1
    out = {}
    for kind in SCENARIOS:
        _, short = _device_run(dev, bdir, write_scenario(workdir, kind, N1),
                               Path(workdir) / f"device-{kind}-short")
        log_dir = Path(workdir) / f"device-{kind}"
        lines, rep = _device_run(dev, bdir, write_scenario(workdir, kind, N2), log_dir)
        logs = {m.id: [r for r in eventlog.read(log_dir / f"m{m.id}.log")
                       if isinstance(r, eventlog.Event)] for m in dev.modules}
        found = [(float(t), float(lat)) for t, lat in re.findall(
            r"radio: ssl block=\d+ t_ms=([\d.]+) .* latency_ms=([\d.]+)", "\n".join(lines))
            if lo < float(t) * 1e3 <= hi]
        sc = [_sc_done(logs[m], pids[f"sc{c}"], lo, hi) for c, m in enumerate((2, 3, 4, 5))]
        noise_lat = [(max(d[t] for d in sc) - t) / 1e3 for t in sc[0] if all(t in d for d in sc)]
        busy = {m.id: (rep["modules"][str(m.id)]["busy_s"] - short["modules"][str(m.id)]["busy_s"])
                * 1e3 / blocks for m in dev.modules}
        out[kind] = {"detections": found, "sc_latency": noise_lat, "busy_ms": busy,
                     "bus": _bus_costs(dev, logs, lo, hi), "blocks": blocks,
                     "names": {m.id: m.name for m in dev.modules}}
        print(f"bench-ssl: device {kind}: {len(found)} detections in {blocks} blocks", flush=True)
    return out


def _stats(values):
    if not values:
        return "-"
    return f"{sum(values) / len(values):.1f} (max {max(values):.1f})"


def render_device(fig):
    out = []
    w = out.append
    w("### Five modules (simulated time)")
    w("")
    w("devices/ssl-device.toml with the paper's figure 8 placement (apps/ssl/ssl_device.toml): "
      "vote and HT on the compute module m1 (arm7 cost model, 60 MHz), microphone c with its "
      "mic and SC tasks on sensing module m(2+c) (msp430, 6 MHz), the radio on m2, the "
      "temperature chain on m3. The scenarios of the overhead measurement, blocks "
      f"{N1}..{N2} after the warm-up. *to the result*: sound, from the end of a block's "
      "capture to HT's direction at the radio; noise, from the end of the capture to the last "
      "of the four SCs finishing (no HT): the two columns of the paper's table V, which "
      "measured 392.0 and 287.0 ms with its 100 ms FFT.")
    w("")
    w("| scenario | blocks | located | to the result, ms: mean (max) |")
    w("|---|---:|---:|---:|")
    for kind, f in fig.items():
        lat = [x for _, x in f["detections"]] if kind == "sound" else f["sc_latency"]
        w(f"| {kind} | {f['blocks']} | {len(f['detections'])} | {_stats(lat)} |")
    w("")
    w(f"Per module and block: busy time (the difference of two runs, {N1} and {N2} blocks "
      f"long, over {N2 - N1}), frames and bytes it sent, and the bus driver's CPU time for "
      "the frames it sent and received (per-frame and per-byte cycles of the device file: "
      "the paper's polled copy with the CRC).")
    w("")
    for kind, f in fig.items():
        w(f"#### {kind}")
        w("")
        w("| module | busy ms/block | frames sent/block | bytes sent/block | bus driver ms/block "
          "| of its busy time |")
        w("|---|---:|---:|---:|---:|---:|")
        for mid, name in f["names"].items():
            sent, nbytes, cpu_us = f["bus"][mid]
            busy = f["busy_ms"][mid]
            drv = cpu_us / 1e3 / f["blocks"]
            w(f"| m{mid} {name} | {busy:.2f} | {sent / f['blocks']:.1f} | "
              f"{nbytes / f['blocks']:.0f} | {drv:.3f} | {100 * drv / busy:.2f} % |")
        w("")
    w("Why no overhead percentage here: Motet's own instructions are not charged to "
      "simulated time on the native port (a handler's time is what its cost model declares), "
      "so the five-module latencies above are those of the signal chain plus the bus; Motet's "
      "overhead over the standalone build is the instruction count of the single module "
      "(section \"SSL application (native)\"), where the kernel does the same work per block "
      "on one module. A five-module figure in "
      "the paper's sense (table V: 0.6 %) needs the kernel's cycles on the modules' own "
      "processors, i.e. the emulated ports.")
    w("")
    return out


def summarise(per_block):
    """Derived figures for one scenario."""
    motet, nolog, alone = (per_block[p] for p, _ in PROGRAMS)
    work = alone.total - alone.by_category["simulator"]
    diff = {c: motet.by_category[c] - alone.by_category[c]
            for c in set(motet.by_category) | set(alone.by_category)}
    kernel = sum(motet.by_category[c] for c in KERNEL)
    overall = motet.total - alone.total - (motet.by_category["simulator"]
                                           - alone.by_category["simulator"])
    return {"work": work, "diff": diff, "kernel": kernel, "overall": overall,
            "host": sum(diff.get(c, 0) for c in HOST), "rest": sum(diff.get(c, 0) for c in REST),
            "log_delta": motet.total - nolog.total,
            "kernel_nolog": sum(nolog.by_category[c] for c in KERNEL)}


def _pct(x, work):
    return f"{100.0 * x / work:.3f} %"


def render_accuracy(acc, lat):
    rows, stray = acc
    out = []
    w = out.append
    w("### Accuracy")
    w("")
    w(f"Twelve sources one after the other (2 s each, 0.5 s apart; speech-like and noise "
      f"bursts alternating), at {', '.join(f'{a:g}' for a in ANGLES)} degrees, 3 m from a "
      f"0.20 m square, 16 kHz, seed 3; a block every {BLOCK_S * 1000:.0f} ms. *found*: "
      "blocks with a detection / blocks lying wholly inside the source; errors in degrees. "
      "*stray*: detections while no single source sounded (false alarms). Tolerance of the "
      f"scenario test: {TOLERANCE_DEG:.2f} degrees (one sample of delay on the diagonal, "
      "tests/scenario/test_ssl.py).")
    w("")
    w("| SNR | found | stray | mean abs. error | RMS error | max abs. error |")
    w("|---:|---:|---:|---:|---:|---:|")
    for snr, r in rows.items():
        errs = [e for row in r for e in row[3]]
        full = sum(row[2] for row in r)
        rms = math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else float("nan")
        mean = sum(errs) / len(errs) if errs else float("nan")
        w(f"| {snr:g} dB | {len(errs)} / {full} | {stray[snr]} | {mean:.2f} | {rms:.2f} | "
          f"{max(errs, default=float('nan')):.1f} |")
    w("")
    w("Per source at 10 dB:")
    w("")
    w("| angle | kind | found | max abs. error |")
    w("|---:|---|---:|---:|")
    for a, kind, full, errs in rows[10.0]:
        w(f"| {a:g} | {kind} | {len(errs)} / {full} | {max(errs, default=float('nan')):.1f} |")
    w("")
    w("### Fire alert latency")
    w("")
    w("Three fires (a 20 C rise, time constant 3 s), temperature sampled at 4 Hz 10 ms into "
      "each block. Latency: from the sensor's sampling instant to the radio's report, in "
      "simulated time on the single module. *msp430*: the sensing module's processor, "
      "background noise only: each reading arrives during a microphone task's FFT (about "
      "50 ms there) and preempts it. *arm7*: the compute module, a talker present: the "
      "reading preempts an FFT of the SSL chain. Deadline (the paper's): 10 ms.")
    w("")
    w("| processor | alerts | latency (us) |")
    w("|---|---:|---|")
    for cpu, values in lat.items():
        w(f"| {cpu} | {len(values)} | {', '.join(str(v) for v in values)} |")
    w("")
    return out


def render_overhead(results):
    out = []
    w = out.append
    w("### Overhead")
    w("")
    w("Instructions per 512-sample block (4 channels), x86-64, the difference of two "
      f"callgrind runs of {N1} and {N2} blocks divided by {N2 - N1}. *sound*: a talker in "
      "every block (FFT, SC, vote, HT, radio); *noise*: background noise only (FFT, SC, "
      "vote). The simulator is left out of every figure.")
    w("")
    for kind, per_block in results.items():
        s = summarise(per_block)
        w(f"#### {kind}")
        w("")
        w(f"Standalone work per block: **{s['work']:.0f}** instructions "
          "(DSP, glue, printing).")
        w("")
        w("| category | motet | motet, log off | standalone | overhead | of the work |")
        w("|---|---:|---:|---:|---:|---:|")
        cats = [c for c, _ in CATEGORIES if c != "simulator"] + ["C library"]
        for c in cats:
            vals = [per_block[p].by_category[c] for p, _ in PROGRAMS]
            d = s["diff"].get(c, 0)
            w(f"| {c} | " + " | ".join(f"{v:.0f}" for v in vals) + f" | {d:.0f} | "
              + _pct(d, s["work"]) + " |")
        w(f"| **kernel: messaging + logging + memory + timers** | {s['kernel']:.0f} | "
          f"{s['kernel_nolog']:.0f} | 0 | {s['kernel']:.0f} | **{_pct(s['kernel'], s['work'])}** |")
        w(f"| native port + simulated time | | | | {s['host']:.0f} | "
          f"{_pct(s['host'], s['work'])} |")
        w(f"| task glue + C library | | | | {s['rest']:.0f} | {_pct(s['rest'], s['work'])} |")
        w(f"| everything the Motet build adds | | | | {s['overall']:.0f} | "
          f"{_pct(s['overall'], s['work'])} |")
        w("")
        w(f"Event log, measured as the whole-program difference log on - log off: "
          f"{s['log_delta']:.0f} instructions per block ({_pct(s['log_delta'], s['work'])}).")
        w("")
    return out


def render_paper():
    total = PAPER["total"]
    parts = ", ".join(f"{k} {PAPER[k]} ms ({100 * PAPER[k] / total:.2f} %)"
                      for k in ("messaging", "event logging", "memory"))
    return [f"For comparison, the paper (table II, one MSP430 module, sound): {parts} of "
            f"{total} ms, 0.94 % in all; target for Motet: at most {TARGET_PERCENT} % "
            "(kernel row).", ""]


def render_events(events, logged, sends, results):
    """`events`: drained records per block by type; `logged`: the events
    they stand for; `sends`: the messages among those."""
    out = []
    w = out.append
    w("#### Per operation (sound)")
    w("")
    w("Event-log records per block, as the kernel's drain gives them (a RUN stands for "
      "a SEND and a START, a task timer's TIMER for its SEND too):")
    w("")
    w("| " + " | ".join(sorted(events)) + " |")
    w("|" + "---:|" * len(events))
    w("| " + " | ".join(f"{events[k]:.1f}" for k in sorted(events)) + " |")
    w("")
    cat = results["sound"]["motet"].by_category
    heap_ops = events.get("ALLOC", 0) + events.get("FREE", 0)
    w(f"- messaging: {cat['messaging'] / sends:.0f} instructions per message "
      f"({sends:.0f} messages: send, dispatch, return, queue when needed)")
    w(f"- timers: {cat['timers'] / events.get('TIMER', 1):.0f} per expiry "
      f"({events.get('TIMER', 0):.0f} expiries: four microphones and the thermometer)")
    w(f"- event logging: {cat['event logging'] / logged:.0f} per event ({logged:.0f} events "
      f"as `motet log` shows them, from {sum(events.values()):.0f} drained records)")
    w(f"- memory: {cat['memory']:.0f} instructions for {heap_ops:.0f} ALLOC/FREE records "
      "and the spectra's MSG_HEAP hand-overs (mem_set_owner(): one for a message run at "
      "once, straight to its receiver; two for a queued one, to the kernel at the send and "
      "to the receiver at sched_take_msg())")
    w("")
    return out


def render(results, events, logged, sends, acc, lat, env):
    """The body of section "ssl"."""
    out = ["## SSL application (native): accuracy, alert latency, overhead",
           "",
           "Generated by `python3 -m motetlib.bench_ssl` (run in tools/; "
           "tools/motetlib/bench_ssl.py, method in its docstring). Analysis and the "
           "comparison with the paper: apps/ssl/README.md.",
           ""]
    out += render_accuracy(acc, lat)
    out += render_overhead(results)
    out += render_paper()
    out += render_events(events, logged, sends, results)
    out += ["#### Environment", ""] + [f"- {k}: {v}" for k, v in env] + [""]
    return "\n".join(out)


def environment():
    def version(cmd):
        try:
            res = subprocess.run(cmd, capture_output=True, text=True)
        except FileNotFoundError:
            return "not found"
        lines = (res.stdout or res.stderr).strip().splitlines()
        return lines[0] if lines else "unknown"
    return [("machine", platform.machine()), ("compiler", version(["gcc", "--version"])),
            ("valgrind", version(["valgrind", "--version"])),
            ("build", "the default CMake build (RelWithDebInfo: -O2 -g)"),
            ("kernel configuration", "apps/ssl/ssl_kernel_config.h over the defaults")]


def render_device_section(device):
    """The body of section "ssl-device"."""
    out = ["## SSL application on the five-module device (simulated time)", "",
           "Generated by `python3 -m motetlib.bench_ssl` (or `--device-only`; run in tools/, "
           "tools/motetlib/bench_ssl.py).", ""]
    return "\n".join(out + render_device(device)[2:])


def bench(bdir=None, output=None, device_only=False):
    """Build the native tree, measure, write 'ssl-device' (and 'ssl'); exit status."""
    targets = ["ssl_device"] + ([] if device_only else [exe for _, exe in PROGRAMS])
    status = build.build(bdir, build.DEFAULT_PORT, targets=targets)
    if status != 0:
        return status
    bdir = build.build_dir(bdir)
    path = Path(output) if output else DEFAULT_OUTPUT
    try:
        with tempfile.TemporaryDirectory(prefix="motet-bench-ssl-") as work:
            device = device_figures(bdir, work)
            if not device_only:
                acc = accuracy(bdir, work)
                lat = alert_latency(bdir, work)
                results = measure(bdir, work)
                events, logged, sends = events_per_block(bdir, work)
    except (BenchError, subprocess.CalledProcessError) as e:
        print(f"bench-ssl: error: {e}", file=sys.stderr)
        return 1
    out = report.write_section("ssl-device", render_device_section(device), path)
    if not device_only:
        text = render(results, events, logged, sends, acc, lat, environment())
        out = report.write_section("ssl", text, path)
        for kind, per_block in results.items():
            s = summarise(per_block)
            print(f"bench-ssl: {kind}: kernel overhead {_pct(s['kernel'], s['work'])} of "
                  f"{s['work']:.0f} instructions/block (target {TARGET_PERCENT} %), everything "
                  f"{_pct(s['overall'], s['work'])}")
    print(f"bench-ssl: wrote {out}")
    return 0


def main(argv=None):
    p = cmdline.ArgumentParser(prog="bench_ssl", description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", default=None)
    p.add_argument("--output", default=None,
                   help="report file to write sections 'ssl' and 'ssl-device' of "
                        "(default docs/benchmarks.md)")
    p.add_argument("--device-only", action="store_true",
                   help="only the five-module figures (section 'ssl-device'), no callgrind")
    args = p.parse_args(argv)
    return bench(args.build_dir, args.output, device_only=args.device_only)


if __name__ == "__main__":
    sys.exit(main())
