# SPDX-License-Identifier: MIT
"""`motet plan`, the command: the model and the MILP of planner.py solved
for an application on a device, and what it prints.

Output: the placement, per module its predicted energy, utilisation and
RAM; per chain its latency against its deadline; per task why it is where
it is (pinned, or what moving it alone to each other module would break
or cost); the description with the new module numbers (-o, or printed).
An infeasible problem is explained: which module's RAM or CPU cannot hold
what is pinned to it (or what the movable tasks need against what is
free), or which chain no placement can bring within its deadline and the
shortest latency any placement reaches.
"""

from __future__ import annotations

import itertools
import os
import shlex
import sys
from pathlib import Path

from . import appplace, cmdline, device as devmod, profile as profmod
from .planner import (SOLVER_SECONDS, Figures, PlanError, Problem, Solution, evaluate, solve,
                      violations)


# ---- explanations ---------------------------------------------------------------

def explain_infeasible(p: Problem) -> list[str]:
    """Why no placement meets every constraint."""
    free = solve(p, deadlines=False)
    if free is None:
        return _explain_overfull(p)
    best, at = {}, {}
    for i, ch in enumerate(p.chains):
        if ch.deadline_us is not None:
            sol = solve(p, deadlines=False, chain_objective=i)
            best[i] = evaluate(p, sol.where, sol.standby).latency_us[i]
            at[i] = sol.where
    groups = {}  # the worst path of each (source, end) that no placement brings in time
    for i, lat in best.items():
        ch = p.chains[i]
        if lat > ch.deadline_us:
            groups.setdefault((ch.tasks[0], ch.tasks[-1]), []).append(i)
    lines = []
    for paths in groups.values():
        i = max(paths, key=lambda i: best[i])
        ch = p.chains[i]
        more = f"; {len(paths) - 1} more paths from {ch.tasks[0]} to {ch.tasks[-1]} too" \
            if len(paths) > 1 else ""
        placed = ", ".join(f"{t} m{at[i][t]}" for t in ch.tasks)
        lines.append(f"chain {ch.label}: deadline {ch.deadline_us / 1e3:g} ms, but the "
                     f"shortest latency any placement reaches is {best[i] / 1e3:.1f} ms "
                     f"(with {placed}){more}")
    if not lines:
        lines.append("each chain alone can meet its deadline, but not all together; the "
                     "shortest latency of each:")
        for i, lat in best.items():
            lines.append(f"  {p.chains[i].label}: {lat / 1e3:.1f} ms (deadline "
                         f"{p.chains[i].deadline_us / 1e3:g} ms)")
    return lines


def _explain_overfull(p: Problem) -> list[str]:
    """Why no placement fits RAM and CPU: what is pinned where, the tasks
    that fit no module beside it, else the movable tasks' needs in all
    (each fits somewhere, but they cannot be split among the modules)."""
    lines = ["no placement fits the modules' RAM and CPU, deadlines aside:"]
    cap_us = p.max_util * p.period_us
    ram_left, cpu_left = {}, {}
    for m in p.modules:
        pinned = [t for t, pm in p.pins.items() if pm == m]
        cpu = sum(p.task_busy_us(t, m) for t in pinned)
        ram = sum(p.ram(t) for t in pinned)
        c = p.spec[m].processor
        ram_left[m], cpu_left[m] = c.ram_bytes - ram, cap_us - cpu
        lines.append(f"  m{m} {p.spec[m].name} ({c.name}): pinned {', '.join(pinned) or '-'}"
                     f": RAM {ram} of {c.ram_bytes} B, busy {cpu / 1e3:.1f} of "
                     f"{cap_us / 1e3:.1f} ms per period")
    movable = [t for t in p.tasks if t not in p.pins]
    alone = len(lines)
    for t in p.tasks:
        if not any(p.ram(t) <= p.spec[m].processor.ram_bytes and
                   p.task_busy_us(t, m) <= cap_us for m in p.allowed[t]):
            lines.append(f"  task {t} ({p.ram(t)} B) fits no module it may run on alone")
        elif t in movable and not any(p.ram(t) <= ram_left[m] and
                                      p.task_busy_us(t, m) <= cpu_left[m] for m in p.allowed[t]):
            lines.append(f"  task {t} ({p.ram(t)} B) fits no module it may run on beside "
                         "what is pinned there")
    if len(lines) == alone and movable:
        free = sum(max(0, ram_left[m]) for m in p.modules)
        least = sum(min(p.task_busy_us(t, m) for m in p.allowed[t]) for t in movable)
        idle = sum(max(0.0, cpu_left[m]) for m in p.modules)
        lines.append(f"  the movable tasks need {sum(p.ram(t) for t in movable)} B of RAM in "
                     f"all; {free} B are free beside what is pinned, but no split of them fits")
        lines.append(f"  and at least {least / 1e3:.1f} ms of CPU per period (each on its "
                     f"fastest module; bus frames aside); {idle / 1e3:.1f} ms are free")
    return lines


MAX_WOKEN = 8  # modules whose idle/standby choices _in_time tries in all combinations


def _in_time(p: Problem, where: dict) -> Figures:
    """evaluate() of `where`, each module resting as costs least energy,
    unless that makes a chain late (waking from standby delays the chains
    through a module) and keeping some modules idle would not: then the
    cheapest such choice."""
    fig = evaluate(p, where)
    if not violations(p, where, fig):
        return fig
    asleep = [m for m in p.modules if fig.standby[m]]
    tries = [asleep] if len(asleep) > MAX_WOKEN else [
        awake for k in range(1, len(asleep) + 1) for awake in itertools.combinations(asleep, k)]
    best = None
    for awake in tries:
        f = evaluate(p, where, {m: fig.standby[m] and m not in awake for m in p.modules})
        if not violations(p, where, f) and (best is None or f.total_uj < best.total_uj):
            best = f
    return best or fig


def why(p: Problem, where: dict, fig: Figures) -> dict:
    """Per task, why it is on its module: pinned, or what moving it alone
    to each other module would break or cost (with the modules resting as
    keeps the chains in time, if any choice does)."""
    out = {}
    for t in p.tasks:
        if t in p.pins:
            out[t] = f"pinned ({p.pin_why[t]})"
            continue
        reasons = []
        for m in p.modules:
            if m == where[t]:
                continue
            if m in p.not_allowed[t]:
                reasons.append(f"m{m}: {p.not_allowed[t][m]}")
                continue
            moved = dict(where, **{t: m})
            f2 = _in_time(p, moved)
            broken = violations(p, moved, f2)
            if broken:
                reasons.append(f"m{m}: {'; '.join(broken)}")
            else:
                reasons.append(f"m{m}: +{f2.total_uj - fig.total_uj:.1f} uJ per period")
        out[t] = "alone elsewhere: " + " | ".join(reasons) if reasons else "the only module"
    return out


# ---- the report -------------------------------------------------------------------

def report(p: Problem, sol: Solution) -> list[str]:
    where = sol.where
    fig = evaluate(p, where, sol.standby)
    d_ms = p.period_us / 1e3
    lines = [f"{p.app.path} on {p.dev.path}, period {d_ms:g} ms, profile {p.prof.path}"]
    if d_ms != p.prof.period_ms:
        lines.append(f"(period {d_ms:g} ms, but the profile's messages per period are of "
                     f"{p.prof.period_ms:g} ms: they are taken as they are, so a task on its "
                     "own timer is charged as at that period, and the description's own "
                     "periods are not changed)")
    if not sol.optimal:
        lines.append(f"(the solver's {SOLVER_SECONDS} s ran out: the best placement found, "
                     "not proven the least energy)")
    lines += ["", "Placement:"]
    for m in p.modules:
        s = p.spec[m]
        here = [t for t in p.tasks if where[t] == m]
        lines.append(f"  m{m} {s.name:<10} {s.processor.name:<9} {', '.join(here) or '-'}")
    lines += ["", "Predicted per module and period (energy: active, then idle or standby "
              "for the rest; the radio's bytes on its module):",
              f"  {'module':<14} {'busy ms':>9} {'util':>7} {'RAM B':>13} {'rest':>8} "
              f"{'energy uJ':>10}"]
    for m in p.modules:
        s = p.spec[m]
        ram = f"{fig.ram[m]}/{s.processor.ram_bytes}"
        lines.append(f"  m{m} {s.name:<11} {fig.busy_us[m] / 1e3:>9.2f} "
                     f"{fig.busy_us[m] / p.period_us:>7.1%} {ram:>13} "
                     f"{'standby' if fig.standby[m] else 'idle':>8} {fig.energy_uj[m]:>10.1f}")
    lines.append(f"  {'bus wire':<14} {'':>9} {'':>7} {'':>13} {'':>8} {fig.wire_uj:>10.1f}")
    lines.append(f"  {'total':<14} {'':>9} {'':>7} {'':>13} {'':>8} {fig.total_uj:>10.1f}")
    lines += ["", "Chains (latency: the chain's own work, the work preempting it on the "
              "modules it visits and its own priority's where it starts, wake-ups, bus; worst "
              "path per source and end):"]
    worst = {}
    for i, ch in enumerate(p.chains):
        key = (ch.tasks[0], ch.tasks[-1], ch.deadline_us)
        if key not in worst or fig.latency_us[i] > fig.latency_us[worst[key]]:
            worst[key] = i
    for i in worst.values():
        ch = p.chains[i]
        lat = fig.latency_us[i]
        dl = "" if ch.deadline_us is None else (
            f"  deadline {ch.deadline_us / 1e3:g} ms, slack {(ch.deadline_us - lat) / 1e3:.1f} ms"
            + ("  (binds)" if ch.deadline_us - lat < 0.02 * ch.deadline_us else ""))
        lines.append(f"  {ch.label}: {lat / 1e3:.1f} ms{dl}")
    lines += ["", "Why each task is where it is:"]
    for t, text in why(p, where, fig).items():
        lines.append(f"  {t} on m{where[t]}: {text}")
    if p.converted:
        lines += ["", "WARNING, not measured (--assume-instructions): pinned tasks never "
                  "measured on their module's kind, charged their instructions on the measured "
                  "kind at this kind's CPI: " +
                  ", ".join(f"{t} ({a} -> {b})" for t, (a, b) in p.converted.items())]
    assumed = sorted({h.route.label for h in p.hops if h.assumed and h.messages})
    if assumed:
        lines += ["", "Bytes never measured (an empty frame assumed): " + ", ".join(assumed)]
    return lines


def _assignments(values, what, form, convert):
    out = {}
    for v in values or ():
        name, sep, val = v.partition("=")
        if not sep or not name:
            raise PlanError(f"{what} {v!r}: expected {form}")
        try:
            out[name] = convert(val)
        except ValueError:
            raise PlanError(f"{what} {v!r}: {val!r} is not a number") from None
        if isinstance(out[name], float) and not 0 < out[name] < 3.6e6:
            raise PlanError(f"{what} {v!r}: must be above 0 and below an hour")
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = cmdline.ArgumentParser(
        prog="motet plan",
        description="Place an application's movable tasks on a device's modules for the least "
                    "energy per period within each chain's deadline, RAM and CPU (model: "
                    "tools/motetlib/planner.py).")
    ap.add_argument("app", metavar="APP.toml")
    ap.add_argument("device", metavar="DEVICE.toml")
    ap.add_argument("--profile", metavar="P", help="task costs (default: APP's directory, "
                    "<APP stem>.profile.toml; make one with `motet profile`)")
    ap.add_argument("--deadline", action="append", metavar="TASK=MS",
                    help="every chain from a task nothing sends to, to TASK, ends within MS "
                         "milliseconds (repeatable)")
    ap.add_argument("--pin", action="append", metavar="TASK=MODULE",
                    help="put TASK on MODULE and keep it there (repeatable); a task the "
                         "description does not let move stays where it says unless pinned "
                         "elsewhere (its sensor on another device's module)")
    ap.add_argument("--period", type=float, metavar="MS",
                    help="the period (default: the profile's)")
    ap.add_argument("--max-util", type=float, default=1.0, metavar="F",
                    help="each module busy at most F of the period (default 1)")
    ap.add_argument("--radio", metavar="TASK", help="the task that sends on the radio "
                    "(default: the one running the program named radio)")
    ap.add_argument("--assume-instructions", action="store_true",
                    help="charge a pinned task its instructions on a kind it was measured on, "
                         "at its module's CPI, where the profile has no figure for that "
                         "module's kind (named as a warning in the plan; without it: an error)")
    ap.add_argument("-o", "--output", metavar="OUT.toml",
                    help="write the placed description here (default: print it)")
    ap.add_argument("--regions", metavar="OUT.png",
                    help="also draw the CoMOS paper's figure 1 for two processor kinds and "
                         "check the plan against it (tools/motetlib/regions.py)")
    ap.add_argument("--kinds", metavar="P,Q",
                    help="the two processor kinds of --regions (default: the device's two)")
    ap.add_argument("--table", metavar="TASK=MS,MS...",
                    help="instead of one placement, solve one per deadline of the set on "
                         "TASK's chains and write them as a table for re-placement at run "
                         "time (tools/motetlib/replan.py)")
    args = ap.parse_args(argv)
    if args.table:
        return _table_main(args, argv)
    try:
        if not 0 < args.max_util <= 1:
            raise PlanError(f"--max-util {args.max_util:g}: must be above 0 and at most 1")
        if args.period is not None and not 0 < args.period < 3.6e6:
            raise PlanError(f"--period {args.period:g}: must be above 0 and below an hour")
        if args.kinds and not args.regions:
            raise PlanError(f"--kinds {args.kinds}: it chooses the kinds of --regions, which "
                            "is not given")
        app = appplace.load(args.app)
        dev = devmod.load(args.device)
        ppath = args.profile or Path(args.app).with_name(Path(args.app).stem + ".profile.toml")
        if args.profile is None and not Path(ppath).exists():
            raise PlanError(f"no profile {ppath}: make one with `./motet profile {args.app} "
                            f"{args.device} --period-ms MS -o {ppath}`, or give --profile")
        prof = profmod.load(ppath, app)
        deadlines = _assignments(args.deadline, "--deadline", "TASK=MS", float)
        pins = _assignments(args.pin, "--pin", "TASK=MODULE", int)
        prob = Problem(app, dev, prof, args.period, deadlines, pins, args.max_util, args.radio,
                       args.assume_instructions)
        sol = solve(prob)
        if sol is None:
            print("plan: no placement meets every constraint:", file=sys.stderr)
            for line in explain_infeasible(prob):
                print(f"  {line}", file=sys.stderr)
            return 1
        for line in report(prob, sol):
            _print(line)
        if args.regions:
            from . import regions
            try:
                fast, slow = regions.choose_kinds(prob, args.kinds.split(",") if args.kinds
                                                  else None)
            except regions.RegionError as e:
                raise PlanError(str(e)) from None
            _print()
            for line in regions.check(prob, sol, fast, slow):
                _print(line)
            title = (f"{app.name} on {dev.name}: period {prob.period_us / 1e3:g} ms"
                     + "".join(f", deadline {a} ms" for a in args.deadline or ()))
            try:
                regions.draw(prob, sol, fast, slow, args.regions, title)
            except OSError as e:
                raise PlanError(f"cannot write {args.regions}: {e.strerror}") from None
            _print(f"plan: wrote {args.regions}")
        header = (f"Placed by: ./motet plan {shlex.join(argv)}\n"
                  f"Predicted energy {evaluate(prob, sol.where, sol.standby).total_uj:.1f} uJ "
                  f"per {prob.period_us / 1e3:g} ms period (tools/motetlib/planner.py).")
        text = appplace.placed(app, sol.where, header)
    except (PlanError, appplace.AppError, devmod.DeviceError, profmod.ProfileError) as e:
        print(f"plan: error: {e}", file=sys.stderr)
        return 2
    return _write_output(text, args.output)


def _write_output(text, path):
    """Write the plan's file to `path`, or print it; the exit status."""
    if path:
        try:
            Path(path).write_text(text)
        except OSError as e:
            print(f"plan: error: cannot write {path}: {e.strerror}", file=sys.stderr)
            return 2
        _print(f"\nplan: wrote {path}")
    else:
        _print("\n" + text, end="")
    return 0


def _table_main(args, argv):
    """`motet plan --table TASK=MS,MS...`: the re-placement table."""
    from . import replan
    try:
        task, _, values = args.table.partition("=")
        try:
            deadlines = [float(v) for v in values.split(",")]
        except ValueError:
            deadlines = []
        if not task or not deadlines or not all(0 < d < 3.6e6 for d in deadlines):
            raise PlanError(f"--table {args.table!r}: expected TASK=MS[,MS...], each deadline "
                            "above 0 ms")
        if args.deadline or args.pin or args.regions:
            raise PlanError("--table takes no --deadline, --pin or --regions")
        app = appplace.load(args.app)
        dev = devmod.load(args.device)
        ppath = args.profile or Path(args.app).with_name(Path(args.app).stem + ".profile.toml")
        prof = profmod.load(ppath, app)
        if task not in prof.tasks:
            raise PlanError(f"--table: '{task}' is not a task of {app.name}")
        table = replan.make_table(app, dev, prof, task, deadlines, args.period)
        text = replan.write_table(table, f"Re-placement table of {app.name} on {dev.name}, "
                                         f"made ahead of time by: ./motet plan "
                                         f"{shlex.join(argv)}\nFormat: tools/motetlib/replan.py.")
    except (PlanError, appplace.AppError, devmod.DeviceError, profmod.ProfileError) as e:
        print(f"plan: error: {e}", file=sys.stderr)
        return 2
    for r in table.rows:
        where = ", ".join(f"{t} m{m}" for t, m in r.where.items() if m != app.task(t).module)
        _print(f"deadline {r.deadline_ms:g} ms on {task}: {r.total_uj:.1f} uJ per period; "
               f"moved from the description: {where or 'none'}")
    return _write_output(text, args.output)


def _print(*args, **kw):
    try:
        print(*args, **kw)
    except BrokenPipeError:  # e.g. piped into head: say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
