# SPDX-License-Identifier: MIT
"""The CoMOS paper's figure 1 for two processor kinds: which one should run
a periodic, non-splittable job of L million instructions with period and
deadline D, and the plan's choices checked against it.

`motet plan APP.toml DEVICE.toml --regions OUT.png` draws it for the
device's two processor kinds (or --kinds P,Q), p the one with the higher
MIPS. Energy of one period, the other processor resting in standby:

    on p: L/M_p + min(P_I^p (D - L/N_p), P_S^p (D - L/N_p - T_W^p) + E_W^p) + P_S^q D
    on q: L/M_q + min(P_I^q (D - L/N_q), P_S^q (D - L/N_q - T_W^q) + E_W^q) + P_S^p D

(feasible when L/N <= D; standby only when the slack covers T_W), so that
the idle/standby boundary is line c. The coloured regions are these energies compared
point by point; the lines are the appendix's, which assume q's standby and
transition free (P_S^q = E_W^q = 0):

    a: D = L/N_p                  below: no processor is fast enough
    b: D = L/N_q                  below: only p is
    c: D = L/N_p + T_be^p         above: p goes to standby after the job
    d: D = ((1/M_q - 1/M_p)/P_I^p + 1/N_p) L
                                  below c: below d p (idle) wins, above q
    e: L = E_W^p / (1/M_q - 1/M_p)
                                  above c: left of e q wins, right p

Each movable task of the plan (and each pinned one, for comparison) is a
point: L its instructions per period on q (its cycles there over q's CPI,
or p's when it was only measured there) and D the tightest deadline of a
chain it is on, else the period. The check says where the region would put
it and where the plan did; they differ when what the one-job picture leaves
out matters: the bus traffic a move adds or saves, a module woken anyway by
other tasks, RAM, and the latency of the whole chain.
"""

from __future__ import annotations

import math


class RegionError(Exception):
    pass


def choose_kinds(p, kinds=None):
    """(fast, slow) Processor of the two kinds, fast the higher MIPS."""
    procs = {}
    for m in p.dev.modules:
        procs.setdefault(m.processor.name, m.processor)
    names = kinds or sorted(procs)
    if len(names) != 2 or any(n not in procs for n in names):
        raise RegionError(f"--regions needs two processor kinds of {p.dev.path} (it has "
                          f"{', '.join(sorted(procs))}; choose with --kinds P,Q)")
    a, b = (procs[n] for n in names)
    return (a, b) if a.mips >= b.mips else (b, a)


def energy_j(run, rest, l_mi, d_s):
    """Energy of a period: the job on `run`, `rest` in standby; None if
    `run` cannot finish it by the deadline."""
    t = l_mi / run.mips
    if t > d_s:
        return None
    slack = d_s - t
    idle = run.idle_mw * 1e-3 * slack
    sleep = run.standby_uj(slack * 1e6)
    rest_j = idle if sleep is None else min(idle, sleep * 1e-6)
    return l_mi / run.mipj + rest_j + rest.standby_mw * 1e-3 * d_s


def best(fast, slow, l_mi, d_s):
    """'p' (fast), 'q' (slow) or None (neither makes the deadline)."""
    ep, eq = energy_j(fast, slow, l_mi, d_s), energy_j(slow, fast, l_mi, d_s)
    if ep is None and eq is None:
        return None
    if eq is None or (ep is not None and ep < eq):
        return "p"
    return "q"


def lines(fast, slow):
    """The appendix's lines as functions of L (MI) -> D (s), and e's L."""
    inv = 1 / slow.mipj - 1 / fast.mipj
    p_idle = fast.idle_mw * 1e-3
    out = {"a": lambda l: l / fast.mips,
           "b": lambda l: l / slow.mips,
           "c": lambda l: l / fast.mips + fast.breakeven_s,
           "d": lambda l: (inv / p_idle + 1 / fast.mips) * l if p_idle > 0 else math.inf}
    e = fast.transition_uj * 1e-6 / inv if inv > 0 else math.inf
    return out, e


def points(p, sol, fast, slow):
    """[(task, L in MI, D in s, kind the plan chose, pinned)] per task."""
    out = []
    for t in p.tasks:
        cost = p.prof.tasks[t]
        kind = slow.name if slow.name in p.cycles[t] else fast.name
        if kind not in p.cycles[t]:
            continue
        proc = slow if kind == slow.name else fast
        l_mi = cost.messages * p.cycles[t][kind] / proc.cpi / 1e6
        ds = [ch.deadline_us for ch in p.chains if ch.deadline_us and t in ch.tasks]
        d_s = (min(ds) if ds else p.period_us) / 1e6
        out.append((t, l_mi, d_s, p.kind(sol.where[t]), t in p.pins))
    return out


def check(p, sol, fast, slow):
    """Lines comparing the region's choice with the plan's, per task."""
    name = {"p": fast.name, "q": slow.name, None: "neither (too short a deadline)"}
    out = [f"Regions of the paper's figure 1 for p = {fast.name} ({fast.mips:.1f} MIPS, "
           f"{fast.mipj:.0f} MIPJ, T_be {fast.breakeven_s * 1e3:.2f} ms) and q = {slow.name} "
           f"({slow.mips:.1f} MIPS, {slow.mipj:.0f} MIPJ); L per period, D its tightest "
           "deadline:"]
    _, e = lines(fast, slow)
    out.append(f"  line e at L = {e:.3f} MI; line c at D = L/N_p + "
               f"{fast.breakeven_s * 1e3:.2f} ms")
    for t, l_mi, d_s, kind, pinned in points(p, sol, fast, slow):
        region = name[best(fast, slow, l_mi, d_s)]
        verdict = "pinned" if pinned else ("agrees" if region == kind else "differs")
        out.append(f"  {t:<8} L {l_mi:8.4f} MI  D {d_s * 1e3:7.1f} ms  region: {region:<9} "
                   f"plan: {kind:<9} {verdict}")
    return out


def draw(p, sol, fast, slow, path, title):
    """The regions, the lines a-e and the tasks as a PNG at `path`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    pts = points(p, sol, fast, slow)
    lo_l = min([x[1] for x in pts if x[1] > 0] + [1e-3]) / 10
    hi_l = max([x[1] for x in pts] + [1.0]) * 10
    lo_d = min([x[2] for x in pts] + [1e-3]) / 100
    hi_d = max([x[2] for x in pts] + [1.0]) * 10
    ls = np.logspace(math.log10(lo_l), math.log10(hi_l), 300)
    ds = np.logspace(math.log10(lo_d), math.log10(hi_d), 300)
    code = {None: 0, "p": 1, "q": 2}
    grid = np.array([[code[best(fast, slow, lv, dv)] for lv in ls] for dv in ds])
    fig, ax = plt.subplots(figsize=(8, 6), dpi=100)
    colours = matplotlib.colors.ListedColormap(["#eeeeee", "#f4c27a", "#9cc9e8"])
    ax.pcolormesh(ls, ds * 1e3, grid, cmap=colours, vmin=0, vmax=2, shading="auto")
    fns, e = lines(fast, slow)
    for (key, fn), at in zip(fns.items(), (0.55, 0.7, 0.15, 0.85)):
        ys = np.array([fn(lv) for lv in ls]) * 1e3
        ax.plot(ls, ys, lw=1.2, label=f"line {key}")
        i = int(at * (len(ls) - 1))
        ax.annotate(key, (ls[i], ys[i]), xytext=(-10, 2), textcoords="offset points",
                    fontsize=11, weight="bold")
    if math.isfinite(e) and lo_l < e < hi_l:
        ax.axvline(e, color="k", lw=1.2, ls="--", label="line e")
        ax.annotate("e", (e, hi_d * 1e3 / 3), fontsize=11, weight="bold")
    together = {}  # points that would print over each other share one label
    for t, l_mi, d_s, kind, pinned in pts:
        key = (round(math.log10(max(l_mi, 1e-12)), 1), d_s, kind, pinned)
        together.setdefault(key, []).append((t, l_mi))
    stacked = {}  # labels near the same spot go one above the other
    for (near, d_s, kind, pinned), tasks in together.items():
        l_mi = tasks[0][1]
        row = stacked[round(near), d_s] = stacked.get((round(near), d_s), -1) + 1
        marker = "s" if kind == fast.name else "o"
        ax.scatter([l_mi], [d_s * 1e3], marker=marker, color="k" if not pinned else "grey",
                   zorder=3)
        ax.annotate(", ".join(t for t, _ in tasks), (l_mi, d_s * 1e3),
                    xytext=(4, 4 + 11 * row), textcoords="offset points", fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(lo_d * 1e3, hi_d * 1e3)
    ax.set_xlim(lo_l, hi_l)
    ax.set_xlabel("L: million instructions per period")
    ax.set_ylabel("D: period and deadline, ms")
    ax.set_title(title, fontsize=9)
    handles, labels = ax.get_legend_handles_labels()
    patches = [matplotlib.patches.Patch(color=c, label=lab) for c, lab in
               (("#f4c27a", f"p = {fast.name} uses less energy"),
                ("#9cc9e8", f"q = {slow.name} uses less energy"),
                ("#eeeeee", "neither meets D"))]
    ax.legend(handles=patches + handles, fontsize=7, loc="lower right")
    ax.text(0.01, 0.99, f"square: placed on {fast.name}, circle: on {slow.name}, grey: pinned",
            transform=ax.transAxes, fontsize=7, va="top")
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
