# SPDX-License-Identifier: MIT
"""The tree-position energy benchmark (MANTIS kernel paper, section 3) on the
ATmega128 under motet-simavr: bench/avr-energy/energy.c.

For each kernel configuration, sensing-job length l_s and tree position n,
this generates a Poisson packet process of rate (2^n - 1) f_s (fixed seed)
as an --irq-file for INT0, runs the image until a pulse on INT1 ends the
experiment, and computes from the harness's edge file and JSON summary:

  E_t   mean and standard deviation of arrival (INT0 pulse) to packet-job
        end (PB0 edge), in order: packets are served in arrival order;
  I_t   cycles asleep / all cycles, in percent;
  I_k^max  the paper's equation 2, 100 (1 - f_s/s_cpu (l_s + l_p (2^n - 1)));
  I_k   the same bound for the work this run really had (the sensing and
        packet jobs it counted, over its length): Poisson counts differ
        from their mean, so I_k - I_t is the kernel's own overhead.

Beside the kernel configurations runs the no-OS floor (floor.c, the same
jobs on plain avr-libc): its I_k - I_t is what even an image without any
operating system loses, so the verdicts can say which part of the 0.3 pp
target a kernel can reach at all.

`motet bench --only energy` runs the full sweep on a build configured at
4 MHz (the paper's clock) and writes section "energy" of
docs/benchmarks.md with plots under docs/plots/; `smoke` (ctest
energy_smoke) runs a few hundred packets and checks that nothing was lost.
"""
import bisect
import json
import math
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from . import build, cmdline, plot, progress, report
from .port_avr import find_harness, read_trace

FS = 1.0  # sensing frequency f_s, Hz (the paper leaves it open; 1/s keeps n = 8 feasible)
LP = 4000  # packet-job cycles l_p
LS = (4000, 400000)  # sensing-job cycles l_s: 1 ms and 100 ms at 4 MHz
MIN_GAP = 1000  # cycles between two pulses on INT0 (see arrivals())
START = 100_000  # first possible arrival, past boot
SEED = 2026
VARIANTS = {  # image name -> label
    "tasks": "Motet tasks (stack preemption)",
    "prio": "threads, fixed priority",
    "rr": "threads, fixed priority + RR",
    "fifo": "threads, FIFO (TinyOS-like)",
    "mantis": "threads, MANTIS original",
    "retos": "threads, RETOS boosting",
    "retos_one": "threads, RETOS boosting, one level",
    "vop": "threads, value of preemption",
    "floor": "no OS (floor)",
}
PREEMPTIVE = ("tasks", "prio", "rr", "mantis", "retos", "retos_one", "vop")
# The same workload without Motet (floor.c): what any kernel loses at least.
# It has a column everywhere but no verdict of its own against the targets.
FLOOR = "floor"
TARGET_PP = 0.3  # I_t within this many percentage points of I_k^max
PLOTS = build.ROOT / "docs" / "plots"


def arrivals(n, freq, periods, seed=SEED):
    """Cycles of the Poisson packet arrivals of position n over `periods`
    sensing periods. Gaps below MIN_GAP are stretched to it: an external
    interrupt latches one edge at a time, and two pulses that close would
    be one packet to the chip (a 0.25 ms floor, shifting no mean by more
    than the gap: at n = 8 the mean gap is 15,686 cycles at 4 MHz)."""
    rate = (2 ** n - 1) * FS / freq  # per cycle
    rng = random.Random(seed * 100 + n)
    end = START + periods * freq / FS
    t, out = START, []
    while True:
        t += max(MIN_GAP, int(rng.expovariate(rate)))
        if t >= end:
            return out
        out.append(t)


def ik_max(n, ls, freq):
    return 100.0 * (1.0 - FS / freq * (ls + LP * (2 ** n - 1)))


def pair_packets(pulses, taken):
    """Which injected pulses the chip received: ([pulse cycle per taken
    interrupt], lost count). `taken` are the cycles of the PB2 toggles in
    the INT0 interrupt, a fixed prologue after its entry; the prologue is
    the shortest pulse-to-toggle delay seen. An external interrupt latches
    one edge: a pulse that comes while an earlier one still waits for its
    interrupt (interrupts off) merges with it, so each entry stands for the
    earliest pulse still waiting, and every other pulse before the entry is
    lost."""
    before = [bisect.bisect_right(pulses, c) for c in taken]
    prologue = min((c - pulses[k - 1] for c, k in zip(taken, before) if k), default=0)
    got, lost, i = [], 0, 0
    for c in taken:
        if i < len(pulses) and pulses[i] <= c:
            got.append(pulses[i])
            i += 1
            while i < len(pulses) and pulses[i] < c - prologue:
                lost += 1
                i += 1
    return got, lost


def run_point(harness, elf, n, ls, freq, packets, seed=SEED):
    """One experiment; a dict of its figures (status != 0: not valid)."""
    lam = (2 ** n - 1) * FS
    periods = max(3, math.ceil(packets / lam))
    arr = arrivals(n, freq, periods, seed)
    end = int(START + periods * freq / FS + freq / FS / 2)  # past the last jobs
    with tempfile.TemporaryDirectory() as tmp:
        irq = Path(tmp) / "irq.txt"
        irq.write_text("".join(f"INT0 {c}\n" for c in arr) + f"INT1 {end}\n")
        edges, js = Path(tmp) / "edges.txt", Path(tmp) / "run.json"
        cmd = [harness, "-q", "-f", str(freq), "--irq-file", irq, "-p", "B0,B1,B2",
               "-o", edges, "-j", js, "-c", str(end + freq), elf]
        res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        summary = json.loads(js.read_text()) if js.exists() else {}
        ev = read_trace(edges) if edges.exists() else {}
    pulses = [c for c, lvl in ev.get("INT0", []) if lvl == 1]
    starts, lost = pair_packets(pulses, [c for c, _ in ev.get("B2", [])])
    ends = [c for c, _ in ev.get("B0", [])]
    senses = len(ev.get("B1", []))
    lat = [e - s for s, e in zip(starts, ends)]
    ok = res.returncode == 0 and len(ends) <= len(starts) and all(x > 0 for x in lat)
    # A packet served out of order or lost would show as a latency below l_p.
    ok = ok and all(x >= LP for x in lat)
    cycles, asleep = summary.get("cycles", 0), summary.get("asleep", 0)
    mean = sum(lat) / len(lat) if lat else float("nan")
    var = sum((x - mean) ** 2 for x in lat) / len(lat) if lat else float("nan")
    work = senses * ls + len(ends) * LP
    return {
        "n": n, "ls": ls, "status": res.returncode, "ok": ok, "packets": len(ends),
        "injected": len(pulses), "lost": lost, "senses": senses, "cycles": cycles,
        "et_ms": mean / freq * 1e3, "sd_ms": math.sqrt(var) / freq * 1e3,
        "it": 100.0 * asleep / cycles if cycles else float("nan"),
        "ik": 100.0 * (1 - work / cycles) if cycles else float("nan"),
        "ikmax": ik_max(n, ls, freq), "stderr": res.stderr.strip()[-300:],
    }


def sweep(bdir, harness, freq, variants, positions, packets, jobs=None):
    """{(variant, ls): [point per n]} of every run, in parallel."""
    tasks = [(v, ls, n) for v in variants for ls in LS for n in positions]
    elf = lambda v, ls: bdir / "bench" / "avr-energy" / f"energy_{v}_ls{ls}.elf"
    done = progress.run_all("energy: simavr runs",
                            {t: (run_point, harness, elf(t[0], t[1]), t[2], t[1], freq, packets)
                             for t in tasks}, jobs)
    out = {}
    for (v, ls, n), point in done.items():
        out.setdefault((v, ls), []).append(point)
    return out


def _f(x, d=2):
    return "—" if x != x else f"{x:.{d}f}"


def render(results, freq, packets, variants):
    ms = lambda c: c / freq * 1e3
    lines = [
        "The tree-position benchmark of the MANTIS kernel paper (section 3), on "
        f"the ATmega128 at {freq / 1e6:g} MHz under motet-simavr "
        "(`bench/avr-energy/energy.c`, `tools/motetlib/bench_energy.py`). A node at "
        f"tree position n runs a sensing job of l_s cycles every 1/f_s (f_s = {FS:g} Hz, "
        "a periodic kernel timer) and a packet job of l_p = 4,000 cycles per packet; "
        "packets are INT0 pulses injected by the harness at Poisson times of rate "
        f"(2^n − 1) f_s (seed {SEED}, gaps at least {MIN_GAP} cycles), and outrank "
        "sensing. E_t is arrival (the pulse) to the end of the packet job (a GPIO "
        "edge), for the pulses whose interrupt was taken (PB2 toggles at its entry): a "
        "pulse that comes while the previous one still waits for its interrupt is one "
        "edge to the chip, a lost packet, counted below; I_t is the share of cycles the "
        "core sleeps. I_k^max is equation 2 "
        "of the paper; I_k is the same bound for the work each run really had "
        "(its Poisson packet count is not exactly the mean), so **I_k − I_t is the "
        "kernel's overhead** and I_k^max − I_t includes the sampling noise of the "
        f"packet count. The column {VARIANTS[FLOOR]} is the same workload without "
        "Motet (`bench/avr-energy/floor.c`, plain avr-libc: INT0 only counts the "
        "packet; the main loop runs the packet jobs, then the sensing job, and sleeps "
        "in idle mode; a packet during the sensing job raises INT4 in software, which "
        "serves it above the sensing job): its I_k − I_t is about the least any kernel "
        "can lose. "
        "Every image has the same work() busy loop, whose 32-bit arithmetic the "
        "compiler folds away only when the two jobs are equally long (l_s = 4,000): "
        "about 30 cycles per packet more at l_s = 400,000, in every column. "
        f"About {packets} packets per point (at least 3 sensing "
        "periods). simavr does not charge the 4-cycle interrupt response nor the "
        "wake-up from sleep (docs/simavr-harness.md): add 4–8 cycles per packet "
        "for a chip.",
        "",
    ]
    bad = [p for k, pts in results.items() for p in pts if not p["ok"]]
    if bad:
        lines += [f"**{len(bad)} runs not valid** (status ≠ 0: lost packet or timeout, or "
                  "a packet served out of order); their figures are shown but not trusted: "
                  + ", ".join(f"{p.get('variant', '?')} n={p['n']} l_s={p['ls']} "
                              f"status {p['status']}" for p in bad[:8]), ""]
    lost = [p for k, pts in results.items() for p in pts if p.get("lost")]
    lines += ["Packets lost (a pulse merged with the one before it, interrupts being off "
              "when it came): " + (", ".join(
                  f"{VARIANTS.get(p.get('variant'), '?')} n={p['n']} l_s={p['ls']:,}: "
                  f"{p['lost']} of {p['injected']}" for p in lost) or "none") + ".", ""]
    for ls in LS:
        lines += [f"### l_s = {ls:,} cycles ({ms(ls):g} ms)", "",
                  "E_t mean ± standard deviation (ms):", "",
                  "| n | " + " | ".join(VARIANTS[v] for v in variants) + " |",
                  "|---|" + "---:|" * len(variants)]
        for i, p0 in enumerate(results[(variants[0], ls)]):
            row = [str(p0["n"])]
            for v in variants:
                p = results[(v, ls)][i]
                row.append(f"{_f(p['et_ms'], 3)} ± {_f(p['sd_ms'], 3)}"
                           + ("" if p["ok"] else " ✗"))
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", "I_t (%) and, in brackets, I_k − I_t (kernel overhead, "
                  "percentage points):", "",
                  "| n | I_k^max | " + " | ".join(VARIANTS[v] for v in variants) + " |",
                  "|---|---:|" + "---:|" * len(variants)]
        for i, p0 in enumerate(results[(variants[0], ls)]):
            row = [str(p0["n"]), _f(p0["ikmax"])]
            for v in variants:
                p = results[(v, ls)][i]
                row.append(f"{_f(p['it'])} ({_f(p['ik'] - p['it'])})")
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    lines += _verdicts(results, variants, freq)
    lines += ["", "Plots: " + ", ".join(
        f"![{name}](plots/{name}.svg)" for name in _plot_names()), ""]
    return "\n".join(lines)


def _plot_names():
    return [f"energy-{kind}-ls{ls}" for ls in LS for kind in ("it", "et")]


def overhead_per_packet(p):
    """Cycles not spent on the jobs nor asleep, per packet served: the run's
    whole overhead (sensing and boot included) charged to its packets."""
    if not p["packets"] or p["ik"] != p["ik"]:
        return float("nan")
    return (p["ik"] - p["it"]) / 100.0 * p["cycles"] / p["packets"]


def target_cycles_per_packet(n, freq):
    """The TARGET_PP of all cycles, per packet at position n's mean rate."""
    return TARGET_PP / 100.0 * freq / ((2 ** n - 1) * FS)


def _floor_verdict(results, freq, best_over):
    pts = [p for ls in LS for p in results[(FLOOR, ls)]]
    gap = max(abs(p["ikmax"] - p["it"]) for p in pts)
    worst = max(pts, key=lambda p: (p["ik"] - p["it"], p["n"]))
    over = worst["ik"] - worst["it"]
    per = overhead_per_packet(worst)
    at_n = [p for ls in LS for p in results[(FLOOR, ls)] if p["n"] == worst["n"]]
    per_ls = ", ".join(f"{overhead_per_packet(p):.0f} at l_s = {p['ls']:,}" for p in at_n)
    budget = target_cycles_per_packet(worst["n"], freq)
    reach = ("within reach: a kernel may add at most "
             f"{budget - per:.0f} cycles per packet to the floor's there"
             if over <= TARGET_PP else
             "**out of reach of any kernel** written in C: the floor, without one, "
             "loses more already")
    return [f"- {VARIANTS[FLOOR]}: largest |I_k^max − I_t| {gap:.2f} pp, largest overhead "
            f"I_k − I_t {over:.3f} pp (n = {worst['n']}, l_s = {worst['ls']:,}); cycles per "
            f"packet at n = {worst['n']}: {per_ls} (the run's overhead over its packets, "
            "simavr's count; a chip adds 4–8 more); the best Motet configuration's largest "
            f"overhead is {best_over - over:.3f} pp above it.",
            f"- The {TARGET_PP:g} pp target at n = {worst['n']} is {budget:.0f} cycles per "
            f"packet ({(2 ** worst['n'] - 1) * FS:g} packets/s at {freq / 1e6:g} MHz): "
            f"{reach}."]


def _verdicts(results, variants, freq):
    out = ["### Against the targets", ""]
    best, best_gap, best_over = None, None, None
    kernels = [v for v in variants if v != FLOOR]
    for v in kernels:
        pts = [p for ls in LS for p in results[(v, ls)]]
        gap = max(abs(p["ikmax"] - p["it"]) for p in pts)
        over = max(p["ik"] - p["it"] for p in pts)
        out.append(f"- {VARIANTS[v]}: largest |I_k^max − I_t| {gap:.2f} pp, "
                   f"largest kernel overhead I_k − I_t {over:.3f} pp.")
        if best_gap is None or gap < best_gap:
            best, best_gap, best_over = v, gap, over
    verdict = "met" if best_gap <= TARGET_PP else "NOT met"
    out.append(f"- Target I_t within {TARGET_PP:g} pp of I_k^max at every n (best Motet "
               f"configuration, {VARIANTS[best]}): **{verdict}** ({best_gap:.2f} pp).")
    if FLOOR in variants:
        out += _floor_verdict(results, freq, best_over)
    # Independence, made measurable: E_t may not grow by more than 1 % of
    # the growth of l_s (a run-to-completion scheduler adds about half a
    # sensing job to every packet that arrives during one).
    grow_ms = (LS[1] - LS[0]) / freq * 1e3
    for v in kernels:
        d = max(abs(a["et_ms"] - b["et_ms"]) for a, b in
                zip(results[(v, LS[0])], results[(v, LS[1])]))
        share = 100.0 * d / grow_ms
        if v in PREEMPTIVE:
            verdict = "met" if share < 1.0 else "NOT met"
            out.append(f"- E_t independent of l_s ({VARIANTS[v]}): largest difference between "
                       f"l_s = {LS[0]:,} and {LS[1]:,} over n {d:.3f} ms, {share:.2f} % of the "
                       f"{grow_ms:g} ms growth of l_s (target below 1 %): **{verdict}**.")
        else:
            out.append(f"- For comparison, {VARIANTS[v]} (no preemption): {d:.3f} ms, "
                       f"{share:.1f} % of the growth of l_s.")
    return out


def plots(results, variants):
    """Idle time as what each kernel loses: I_k - I_t, the share of the CPU
    (percentage points) the kernel kept awake beyond the work itself, the
    no-OS floor included (all idle times are near the same level, so on a
    0-100 % axis their differences vanish); and E_t per variant."""
    PLOTS.mkdir(parents=True, exist_ok=True)
    for ls in LS:
        series = [(VARIANTS[v], [(p["n"], p["ik"] - p["it"]) for p in results[(v, ls)]
                                 if p["ik"] == p["ik"] and p["it"] == p["it"]])
                  for v in variants]
        plot.write(PLOTS / f"energy-it-ls{ls}.svg",
                   f"Kernel overhead in idle time, l_s = {ls:,} cycles", "tree position n",
                   "I_k − I_t (percentage points)", series, zero=True)
        series = [(VARIANTS[v], [(p["n"], p["et_ms"]) for p in results[(v, ls)]
                                 if p["et_ms"] == p["et_ms"]]) for v in variants]
        plot.write(PLOTS / f"energy-et-ls{ls}.svg",
                   f"Packet time E_t, l_s = {ls:,} cycles", "tree position n",
                   "E_t (ms)", series)


def _freq(elf_dir):
    cache = (elf_dir / "CMakeCache.txt").read_text()
    for line in cache.splitlines():
        if line.startswith("MOTET_AVR_F_CPU:"):
            return int(line.split("=", 1)[1])
    return 8_000_000


def _tag(results):
    for (v, _), pts in results.items():
        for p in pts:
            p["variant"] = v
    return results


def bench(bdir=None, packets=2000, variants=tuple(VARIANTS), positions=range(1, 9),
          harness=None, prebuilt=None):
    """Full sweep: build at 4 MHz (or take the AVR build `prebuilt`), run,
    write section "energy"; exit status."""
    if prebuilt:
        pdir = Path(prebuilt)
    else:
        base = build.build_dir(bdir)
        pdir = base.with_name(f"{base.name}-avr-4mhz")
        if build.build(pdir, "avr", extra=["-DMOTET_AVR_F_CPU=4000000"]) != 0:
            return 1
    freq = _freq(pdir)
    exe = harness or find_harness(str(pdir / "tools" / "motet-simavr"))
    results = _tag(sweep(pdir, exe, freq, list(variants), list(positions), packets))
    text = render(results, freq, packets, list(variants))
    plots(results, list(variants))
    report.write_section("energy", text)
    print(text)
    return 0 if all(p["ok"] for pts in results.values() for p in pts) else 1


def floor_overload(bdir, harness, freq):
    """Run the floor with packets four times faster than it serves them, so
    that more than its count holds (255) wait: the harness's exit status,
    which must be 2 (a packet not taken)."""
    pulses = [START + i * MIN_GAP for i in range(400)]
    end = pulses[-1] + 2 * len(pulses) * LP  # past the last packet job
    elf = Path(bdir) / "bench" / "avr-energy" / f"energy_{FLOOR}_ls{LS[0]}.elf"
    with tempfile.TemporaryDirectory() as tmp:
        irq = Path(tmp) / "irq.txt"
        irq.write_text("".join(f"INT0 {c}\n" for c in pulses) + f"INT1 {end}\n")
        cmd = [harness, "-q", "-f", str(freq), "--irq-file", irq, "-c", str(end + freq), elf]
        return subprocess.run([str(c) for c in cmd], capture_output=True).returncode


def smoke(bdir, harness, packets=150):
    """A short run for ctest: tasks, three thread policies and the no-OS
    floor at n = 1, 4, 8; every run must end cleanly with every packet
    served in order, and the floor must report an overload."""
    bdir = Path(bdir)
    freq = _freq(bdir)
    results = _tag(sweep(bdir, harness, freq, ["tasks", "prio", "fifo", "mantis", FLOOR],
                         [1, 4, 8], packets))
    status = 0
    for (v, ls), pts in sorted(results.items()):
        for p in pts:
            print(f"{v:7} l_s={ls:6} n={p['n']}: {p['packets']}/{p['injected']} packets, "
                  f"E_t {_f(p['et_ms'], 3)} ms, I_t {_f(p['it'])} % "
                  f"(I_k {_f(p['ik'])}, I_k^max {_f(p['ikmax'])})"
                  + ("" if p["ok"] else f"  FAILED status {p['status']} {p['stderr']}"))
            if not p["ok"] or p["packets"] == 0 or p["ik"] - p["it"] < -0.05:
                status = 1
    overload = floor_overload(bdir, harness, freq)
    print(f"{FLOOR:7} overload (400 packets, {MIN_GAP} cycles apart): status {overload}, "
          "expected 2 (a packet not taken)")
    return status if overload == 2 else 1


def main(argv=None):
    p = cmdline.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir")
    p.add_argument("--harness")
    p.add_argument("--packets", type=int, default=2000)
    p.add_argument("--smoke", action="store_true", help="short run of an existing AVR build")
    p.add_argument("--prebuilt", help="run the images of this AVR build instead of building")
    a = p.parse_args(argv)
    if a.smoke:
        return smoke(a.build_dir, a.harness or find_harness(None))
    return bench(a.build_dir, a.packets, harness=a.harness, prebuilt=a.prebuilt)


if __name__ == "__main__":
    sys.exit(main())
