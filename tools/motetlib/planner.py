# SPDX-License-Identifier: MIT
"""`motet plan`: place an application's tasks on a device's modules for the
least energy per period within each chain's deadline.

    motet plan APP.toml DEVICE.toml [--profile P] [--deadline TASK=MS ...]
               [--pin TASK=MODULE ...] [--period MS] [--max-util F] [-o OUT.toml]

Inputs: the application description (docs/app-format.md), the device file
with its energy model (tools/motetlib/energy.py) and a profile of the
application's task costs (tools/motetlib/profile.py; default: APP's
directory, `<APP stem>.profile.toml`). A task that is not movable stays on
its module, as does one given with --pin; a task goes only to a module of
a processor kind its profile has cycles for.

The model, per period D (the profile's, or --period):

- A task t on module m keeps it busy messages(t) * cycles(t, kind of m) /
  clock(m). A route's message to a task on another module costs the sending
  and the receiving module their bus driver's cycles (bus_cycles_per_frame +
  bytes * bus_cycles_per_byte), the bus wire nj_per_frame + bytes *
  nj_per_byte, and the chain the wire time (bytes / bandwidth) plus a
  round of TDMA slots (modules * slot_us). A multicast costs its sender one
  frame if any member is elsewhere, and each module with members one
  frame received.
- Module m spends P_A * busy, and the rest of the period either idle,
  P_I * (D - busy), or in standby, P_S * (D - busy - T_W) + E_W if it has
  work (one round trip per period, which must fit: busy + T_W <= D),
  whichever is less: the CoMOS paper's appendix, whose T_be is where the
  two are equal.
  The radio's energy per byte is charged to the radio task's module.
- The latency of a chain (a path of routes from a task nothing sends to, to
  the task a --deadline names; a join such as HT waiting for four bands is
  one chain per path) is the sum, over the modules it visits, of the
  chain's own tasks' busy time per period there, the busy time of the tasks
  of a higher priority than a chain's task on that module (they preempt it
  at once; a task that no chain's task there is below does not delay it)
  and the bus driver's frames, plus each visited module's wake-up time if
  it goes to standby and the wire time of each of the chain's routes that
  crosses the bus. On the module where the chain starts, work of the
  priority of a chain's task there counts too (what the period's start
  releases there may all run first: four FFTs on one module run one after
  the other);
  elsewhere the chain arrives when such work is presumed done. An estimate
  from per-period averages (a task's cycles are the mean of its
  messages'), not a worst-case bound.
- Constraints: each module's RAM (its processor's ram_bytes against the
  tasks' ram_bytes), its utilisation busy / D <= --max-util (default 1),
  every chain within its deadline, pinned tasks where they are.

It is solved as a mixed-integer linear programme (scipy.optimize.milp,
HiGHS): a binary per task and module, the product "u and v on module m" of
each route linearised (w <= x_um, w <= x_vm, w >= x_um + x_vm - 1), the
multicast's "any member elsewhere" as a lower-bounded continuous variable,
"t delays the chain on m" as one bounded below by x_tm + x_um - 1 for each
chain task u that t outranks,
the idle-or-standby choice as a binary with big-M rows, the busy time of a
visited module as big-M rows on a "visits m" binary per chain.

The command, its report and its explanations are in plan_report.py.
"""

from __future__ import annotations

import dataclasses

from . import appplace, energy

DEFAULT_FRAME_BYTES = 12  # a frame with an empty payload: 10-byte header and CRC
MAX_CHAINS = 5000  # paths of routes: each is a latency row and a variable per module
SOLVER_SECONDS = 60


class PlanError(Exception):
    """A problem the planner cannot set up or solve; the message says why."""


# ---- the model --------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Hop:
    """A message of route `route` to task `dst` (a member, for a multicast)."""
    route: appplace.Route
    dst: str
    messages: float
    bytes: float
    assumed: bool  # bytes never measured: an empty frame assumed


@dataclasses.dataclass(frozen=True)
class Chain:
    tasks: tuple[str, ...]
    hops: tuple[Hop, ...]
    deadline_us: float | None
    priority: int

    @property
    def label(self) -> str:
        return " -> ".join(self.tasks)


class Problem:
    """Everything the MILP and the evaluation of a placement share."""

    def __init__(self, app, dev, prof, period_ms=None, deadlines=None, pins=None,
                 max_util=1.0, radio=None, assume_instructions=False):
        self.app, self.dev, self.prof = app, dev, prof
        self.period_us = (period_ms or prof.period_ms) * 1e3
        self.max_util = max_util
        self.modules = [m.id for m in dev.modules]
        self.spec = {m.id: m for m in dev.modules}
        self.tasks = [t.name for t in app.tasks]
        self.pins, self.pin_why = {}, {}
        for t in app.tasks:
            if not t.movable:
                self.pins[t.name], self.pin_why[t.name] = t.module, "not movable"
        for name, mid in (pins or {}).items():
            self._task(name, "--pin")
            self.pins[name], self.pin_why[name] = mid, "--pin"
        for name, mid in self.pins.items():
            if mid not in self.spec:
                raise PlanError(f"task '{name}' is pinned ({self.pin_why[name]}) to module "
                                f"{mid}, which {dev.path} does not have (its modules: "
                                f"{', '.join(map(str, self.modules))})")
        self.allowed, self.not_allowed, self.cycles, self.converted = {}, {}, {}, {}
        for name in self.tasks:
            cycles = self.cycles[name] = dict(prof.tasks[name].cycles)
            cand = [self.pins[name]] if name in self.pins else self.modules
            kind = self.kind(cand[0])
            if name in self.pins and kind not in cycles and cycles and assume_instructions:
                # Asked for (--assume-instructions): a pinned task's load
                # on a kind it was never measured on, its instructions
                # taken as those of a measured kind; the plan names it.
                # Without it, no kind's count is carried to another.
                src = sorted(cycles)[0]
                mine, theirs = self.spec[cand[0]].processor, self._processor(src)
                if theirs is not None:
                    cycles[kind] = cycles[src] / theirs.cpi * mine.cpi
                    self.converted[name] = (src, kind)
            ok = [m for m in cand if self.kind(m) in cycles]
            self.not_allowed[name] = {m: f"no {self.kind(m)} cycles in the profile"
                                      for m in cand if m not in ok}
            if not ok:
                where = (f"its module {cand[0]} ({self.kind(cand[0])}, pinned: "
                         f"{self.pin_why[name]})" if name in self.pins
                         else "any module of " + dev.path)
                raise PlanError(f"{prof.path}: task '{name}' has no cycles for {where} "
                                f"(measured: {', '.join(sorted(cycles)) or 'none'}); measure it "
                                "there (motet profile on a device that runs it on such a "
                                "module), or --assume-instructions to charge a pinned task its "
                                "instructions on a measured kind at this kind's CPI")
            self.allowed[name] = ok
        self.hops = []
        for r in app.routes:
            if not r.dst:
                continue
            cost = prof.route(r.src, r.port)
            for d in r.dst:
                nbytes = cost.bytes if cost.bytes is not None else DEFAULT_FRAME_BYTES
                self.hops.append(Hop(r, d, cost.messages, nbytes, cost.bytes is None))
        self.radio = radio if radio is not None else next(
            (t.name for t in app.tasks if t.program == "radio"), None)
        if self.radio is not None:
            self._task(self.radio, "--radio")
        self.chains = self._chains(deadlines or {})

    def _task(self, name, what):
        if name not in self.tasks:
            raise PlanError(f"{what}: '{name}' is not a task of {self.app.path} (its tasks: "
                            f"{', '.join(self.tasks)})")

    def kind(self, m):
        return self.spec[m].processor.name

    def _processor(self, kind):
        return next((m.processor for m in self.dev.modules if m.processor.name == kind),
                    energy.PROCESSORS.get(kind))

    # -- per-term constants --

    def task_busy_us(self, t, m):
        """Busy time per period of task t on module m."""
        c = self.prof.tasks[t]
        return c.messages * self.cycles[t][self.kind(m)] / self.spec[m].processor.mhz

    def frame_busy_us(self, hop, m):
        """Module m's bus driver time per period for the hop's frames."""
        s = self.spec[m]
        return hop.messages * (s.bus_cycles_per_frame + hop.bytes * s.bus_cycles_per_byte) / \
            s.processor.mhz

    def wire_uj(self, hop):
        b = self.dev.bus
        return hop.messages * (b.nj_per_frame + hop.bytes * b.nj_per_byte) * 1e-3

    def wire_us(self, hop):
        b = self.dev.bus
        return hop.bytes * 1e6 / b.bandwidth + len(self.modules) * b.slot_us

    def radio_uj(self):
        """Energy per period of what the radio task sends."""
        if self.radio is None:
            return 0.0
        nbytes = sum(h.messages * max(0.0, h.bytes - DEFAULT_FRAME_BYTES)
                     for h in self.hops if h.dst == self.radio)
        return nbytes * self.dev.radio_nj_per_byte * 1e-3

    def ram(self, t):
        return self.prof.tasks[t].ram_bytes

    # -- chains --

    def _chains(self, deadlines):
        incoming = {h.dst for h in self.hops}
        sources = [t for t in self.tasks if t not in incoming]
        out_hops = {}
        for h in self.hops:
            out_hops.setdefault(h.route.src, []).append(h)
        prio = {t.name: t.priority for t in self.app.tasks}
        chains = []
        targets = dict(deadlines)
        for t in self.tasks:  # every sink too, unconstrained, for the report
            if t not in out_hops and t not in targets:
                targets[t] = None
        for target, ms in targets.items():
            self._task(target, "--deadline")
            found = []

            def walk(path, hops):
                if path[-1] == target:
                    found.append((tuple(path), tuple(hops)))
                    if len(chains) + len(found) > MAX_CHAINS:
                        raise PlanError(f"more than {MAX_CHAINS} paths of routes end at the "
                                        "tasks with a deadline or nothing to send: too many "
                                        "chains to constrain one by one")
                    return
                for h in out_hops.get(path[-1], ()):
                    if h.dst not in path:
                        walk(path + [h.dst], hops + [h])

            for s in sources:
                walk([s], [])
            if not found:
                if ms is not None:
                    raise PlanError(f"--deadline {target}: no chain of routes from a task "
                                    "nothing sends to reaches it")
                continue
            for tasks, hops in found:
                chains.append(Chain(tasks, hops, None if ms is None else ms * 1e3,
                                    min(prio[x] for x in tasks)))
        return chains

    def outranks(self, t, chain, at_source=False):
        """The chain's tasks whose work t's delays on a module they share:
        those of a lower priority, which t preempts, and on the module where
        the chain starts, those of t's priority too (what the period's start
        releases there may all run first: four FFTs on one module run one
        after the other)."""
        prio = self.app.task(t).priority
        return [u for u in chain.tasks
                if self.app.task(u).priority < prio or
                (at_source and self.app.task(u).priority == prio)]


# ---- evaluating a placement ---------------------------------------------------

@dataclasses.dataclass
class Figures:
    busy_us: dict
    energy_uj: dict
    standby: dict
    ram: dict
    latency_us: dict  # chain index -> latency
    wire_uj: float
    total_uj: float


def evaluate(p: Problem, where: dict, standby: dict | None = None) -> Figures:
    """The model's figures for a placement {task: module}: what the MILP's
    objective and constraints say of it. Each module rests idle or in
    standby as `standby` says, by default whichever costs less energy."""
    chosen = standby
    busy = {m: 0.0 for m in p.modules}
    for t in p.tasks:
        busy[where[t]] += p.task_busy_us(t, where[t])
    paid, crossing = frames(p, where)
    for m, h in paid:
        busy[m] += p.frame_busy_us(h, m)
    wire = sum(p.wire_uj(h) for h in crossing)
    used = {where[t] for t in p.tasks}
    energy, standby = {}, {}
    for m in p.modules:
        c = p.spec[m].processor
        rest = p.period_us - busy[m]
        idle = c.idle_mw * rest * 1e-3
        sleep = c.standby_uj(rest, wakes=m in used)
        if chosen is None:
            standby[m] = sleep is not None and sleep < idle
        else:
            standby[m] = chosen[m]
        energy[m] = c.active_mw * busy[m] * 1e-3 + (sleep if standby[m] else idle)
    if p.radio is not None:
        energy[where[p.radio]] += p.radio_uj()
    ram = {m: sum(p.ram(t) for t in p.tasks if where[t] == m) for m in p.modules}
    latency = {}
    for i, ch in enumerate(p.chains):
        visited = {where[t] for t in ch.tasks}
        lat = 0.0
        for m in visited:
            lat += chain_busy_us(p, where, paid, ch, m)
            if standby[m]:
                lat += p.spec[m].processor.transition_us
        lat += sum(p.wire_us(h) for h in ch.hops if where[h.route.src] != where[h.dst])
        latency[i] = lat
    return Figures(busy, energy, standby, ram, latency, wire, sum(energy.values()) + wire)


def frames(p: Problem, where: dict):
    """The bus frames a placement pays per period: (module, hop) for each
    frame a module's driver sends or receives (a multicast: one sent if any
    member is elsewhere, one received per module with members), and the
    hops whose frame crosses the wire."""
    paid, crossing = [], []
    for r in p.app.routes:
        hops = [h for h in p.hops if h.route == r]
        if not hops:
            continue
        src = where[r.src]
        remote = [h for h in hops if where[h.dst] != src]
        if r.group:
            if remote:
                paid.append((src, hops[0]))
                crossing.append(hops[0])
            paid += [(m, hops[0]) for m in {where[h.dst] for h in remote}]
        else:
            for h in remote:
                paid += [(src, h), (where[h.dst], h)]
                crossing.append(h)
    return paid, crossing


def chain_busy_us(p, where, paid, ch, m):
    """Module m's busy time per period that delays chain ch: the tasks that
    interfere with it, and every bus frame m's driver handles (`paid`)."""
    at_source = where[ch.tasks[0]] == m
    b = sum(p.task_busy_us(t, m) for t in p.tasks
            if where[t] == m and (t in ch.tasks or
                                  any(where[u] == m for u in p.outranks(t, ch, at_source))))
    return b + sum(p.frame_busy_us(h, m) for mm, h in paid if mm == m)


def violations(p: Problem, where: dict, fig: Figures | None = None) -> list[str]:
    """What a placement breaks, in words (empty: feasible)."""
    fig = fig or evaluate(p, where)
    out = []
    for t in p.tasks:
        if where[t] not in p.allowed[t]:
            why = p.not_allowed[t].get(where[t]) or f"pinned to m{p.pins.get(t)}"
            out.append(f"{t} cannot run on m{where[t]} ({why})")
    for m in p.modules:
        cap = p.spec[m].processor.ram_bytes
        if fig.ram[m] > cap:
            out.append(f"m{m} RAM {fig.ram[m]} B > {cap} B")
        if fig.busy_us[m] > p.max_util * p.period_us * (1 + 1e-9):
            out.append(f"m{m} utilisation {fig.busy_us[m] / p.period_us:.1%} > "
                       f"{p.max_util:.0%}")
    late = [i for i, ch in enumerate(p.chains) if ch.deadline_us is not None and
            fig.latency_us[i] > ch.deadline_us * (1 + 1e-9)]
    if late:
        i = max(late, key=lambda i: fig.latency_us[i] - p.chains[i].deadline_us)
        more = f" (and {len(late) - 1} more chains late)" if len(late) > 1 else ""
        out.append(f"chain {p.chains[i].label}: {fig.latency_us[i] / 1e3:.1f} ms > deadline "
                   f"{p.chains[i].deadline_us / 1e3:g} ms{more}")
    return out


# ---- the MILP -----------------------------------------------------------------

class _Lp:
    """Variables and rows of a MILP, built by name."""

    def __init__(self):
        self.lb, self.ub, self.integer, self.rows = [], [], [], []

    def var(self, lb=0.0, ub=1.0, integer=False):
        self.lb.append(lb)
        self.ub.append(ub)
        self.integer.append(1 if integer else 0)
        return len(self.lb) - 1

    def row(self, coeffs, lo=-float("inf"), hi=float("inf")):
        self.rows.append((dict(coeffs), lo, hi))

    def solve(self, objective):
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import coo_array
        n = len(self.lb)
        c = np.zeros(n)
        for i, v in objective.items():
            c[i] += v
        # Sparse: a row touches a few variables, and with many chains a
        # dense matrix (rows x variables) would run to gigabytes.
        row_of, col, val = [], [], []
        for k, (coeffs, _, _) in enumerate(self.rows):
            row_of += [k] * len(coeffs)
            col += list(coeffs)
            val += list(coeffs.values())
        a = coo_array((val, (row_of, col)), shape=(len(self.rows), n)).tocsr()
        lo = np.array([r[1] for r in self.rows])
        hi = np.array([r[2] for r in self.rows])
        cons = [LinearConstraint(a, lo, hi)] if self.rows else []
        # No presolve: the HiGHS of Debian 12's scipy (1.10) declares some of
        # these big-M models infeasible in presolve that it solves without
        # it (tests/tools/test_planner.py, the enumeration cross-check); the
        # models are small enough not to need it.
        return milp(c, constraints=cons, integrality=np.array(self.integer),
                    bounds=Bounds(np.array(self.lb), np.array(self.ub)),
                    options={"time_limit": SOLVER_SECONDS, "presolve": False})


def _add(d, key, v):
    d[key] = d.get(key, 0.0) + v


def build(p: Problem, deadlines=True, chain_objective=None):
    """(lp, x {(t, m): var}, objective) of the placement problem. With
    chain_objective = i, the objective is chain i's latency instead of
    energy (used to explain an infeasible deadline)."""
    lp = _Lp()
    x = {(t, m): lp.var(integer=True) for t in p.tasks for m in p.allowed[t]}
    for t in p.tasks:
        lp.row({x[t, m]: 1.0 for m in p.allowed[t]}, 1.0, 1.0)

    def xv(t, m):
        return x.get((t, m))

    # w[hop, m]: the hop's sender and receiver both on m (exact AND)
    w, remote = {}, {}
    for k, h in enumerate(p.hops):
        for m in set(p.allowed[h.route.src]) & set(p.allowed[h.dst]):
            w[k, m] = v = lp.var()
            lp.row({v: 1.0, xv(h.route.src, m): -1.0}, hi=0.0)
            lp.row({v: 1.0, xv(h.dst, m): -1.0}, hi=0.0)
            lp.row({v: 1.0, xv(h.route.src, m): -1.0, xv(h.dst, m): -1.0}, lo=-1.0)
        # remote = 1 - sum_m w[k, m], as coefficients plus a constant
        remote[k] = ({w[k, m]: -1.0 for m in p.modules if (k, m) in w}, 1.0)

    # per module: busy-time terms (coefficients, constant) of the bus driver
    # frames, as sender and as receiver; and the wire's energy
    frame_terms = []  # (module, {var: coeff} whose value is 1 when the frame is paid, hop)
    wire = {}
    by_route = {}
    for k, h in enumerate(p.hops):
        by_route.setdefault(h.route, []).append(k)
    for r, ks in by_route.items():
        h0 = p.hops[ks[0]]
        if r.group:
            for m in p.allowed[r.src]:
                a = lp.var()  # sender on m and some member elsewhere
                for k in ks:
                    coeffs = {a: 1.0, xv(r.src, m): -1.0}
                    if (k, m) in w:
                        _add(coeffs, w[k, m], 1.0)
                    lp.row(coeffs, lo=0.0)
                frame_terms.append((m, {a: 1.0}, h0))
                _add(wire, a, p.wire_uj(h0))
            members = {m for k in ks for m in p.allowed[p.hops[k].dst]}
            for m in members:
                b = lp.var()  # a member on m, the sender elsewhere
                for k in ks:
                    if xv(p.hops[k].dst, m) is None:
                        continue
                    coeffs = {b: 1.0, xv(p.hops[k].dst, m): -1.0}
                    if (k, m) in w:
                        _add(coeffs, w[k, m], 1.0)
                    lp.row(coeffs, lo=0.0)
                frame_terms.append((m, {b: 1.0}, h0))
        else:
            for k in ks:
                h = p.hops[k]
                for end in (h.route.src, h.dst):
                    for m in p.allowed[end]:
                        coeffs = {xv(end, m): 1.0}  # end on m, the other end not
                        if (k, m) in w:
                            _add(coeffs, w[k, m], -1.0)
                        frame_terms.append((m, coeffs, h))
                coeffs, const = remote[k]
                for v, c in coeffs.items():
                    _add(wire, v, c * p.wire_uj(h))
                _add(wire, None, const * p.wire_uj(h))

    def busy(m, chain=None, at_source=False):
        coeffs = {}
        for t in p.tasks:
            if xv(t, m) is None:
                continue
            if chain is None or t in chain.tasks:
                _add(coeffs, xv(t, m), p.task_busy_us(t, m))
                continue
            # t delays the chain on m if some chain task it outranks is on m too
            under = [xv(u, m) for u in p.outranks(t, chain, at_source) if xv(u, m) is not None]
            if under:
                both = lp.var()
                for xu in under:
                    lp.row({both: 1.0, xv(t, m): -1.0, xu: -1.0}, lo=-1.0)
                _add(coeffs, both, p.task_busy_us(t, m))
        for mm, terms, h in frame_terms:
            if mm == m:
                for v, c in terms.items():
                    _add(coeffs, v, c * p.frame_busy_us(h, m))
        return coeffs

    objective = {}
    busy_m = {m: busy(m) for m in p.modules}
    cap_us = p.max_util * p.period_us
    standby = {}
    for m in p.modules:
        lp.row(busy_m[m], hi=cap_us)
        ram = {xv(t, m): float(p.ram(t)) for t in p.tasks if xv(t, m) is not None}
        if ram:
            lp.row(ram, hi=float(p.spec[m].processor.ram_bytes))
        c = p.spec[m].processor
        y = lp.var()  # the module has a task
        for t in p.tasks:
            if xv(t, m) is not None:
                lp.row({y: 1.0, xv(t, m): -1.0}, lo=0.0)
        s = standby[m] = lp.var(integer=True)
        rest = lp.var(ub=float("inf"))
        big = max(c.idle_mw, c.standby_mw) * p.period_us * 1e-3 + c.transition_uj
        # rest >= P_I (D - busy) - big * s
        coeffs = {rest: 1.0, s: big}
        for v, k in busy_m[m].items():
            _add(coeffs, v, c.idle_mw * 1e-3 * k)
        lp.row(coeffs, lo=c.idle_mw * 1e-3 * p.period_us)
        # rest >= P_S (D - busy) + (E_W - P_S T_W) y - big (1 - s): energy.standby_uj
        coeffs = {rest: 1.0, s: -big,
                  y: -(c.transition_uj - c.standby_mw * 1e-3 * c.transition_us)}
        for v, k in busy_m[m].items():
            _add(coeffs, v, c.standby_mw * 1e-3 * k)
        lp.row(coeffs, lo=c.standby_mw * 1e-3 * p.period_us - big)
        # busy + T_W <= D when it has work and rests in standby (s = y = 1)
        coeffs = {s: c.transition_us, y: c.transition_us}
        for v, k in busy_m[m].items():
            _add(coeffs, v, k)
        lp.row(coeffs, hi=p.period_us + c.transition_us)
        _add(objective, rest, 1.0)
        for v, k in busy_m[m].items():
            _add(objective, v, c.active_mw * 1e-3 * k)
    for v, c in wire.items():
        if v is not None:
            _add(objective, v, c)

    latency_of = {}
    for i, ch in enumerate(p.chains):
        if ch.deadline_us is None and chain_objective != i:
            continue
        coeffs = {}
        for m in p.modules:
            z = lp.var(integer=True)  # the chain visits m
            for t in ch.tasks:
                if xv(t, m) is not None:
                    lp.row({z: 1.0, xv(t, m): -1.0}, lo=0.0)
            lat = lp.var(ub=float("inf"))  # lat >= busy_ch(m) - cap (1 - z)
            row = {lat: 1.0, z: -cap_us}
            for v, k in busy(m, ch).items():
                _add(row, v, -k)
            lp.row(row, lo=-cap_us)
            source = xv(ch.tasks[0], m)
            if source is not None:  # lat >= busy_ch,source(m) - cap (1 - x_source,m)
                row = {lat: 1.0, source: -cap_us}
                for v, k in busy(m, ch, at_source=True).items():
                    _add(row, v, -k)
                lp.row(row, lo=-cap_us)
            wake = lp.var()  # visited and in standby
            lp.row({wake: 1.0, z: -1.0, standby[m]: -1.0}, lo=-1.0)
            _add(coeffs, lat, 1.0)
            _add(coeffs, wake, p.spec[m].processor.transition_us)
        const = 0.0
        for h in ch.hops:
            k = p.hops.index(h)
            rc, r1 = remote[k]
            for v, c in rc.items():
                _add(coeffs, v, c * p.wire_us(h))
            const += r1 * p.wire_us(h)
        latency_of[i] = (coeffs, const)
        if deadlines and ch.deadline_us is not None:
            lp.row(coeffs, hi=ch.deadline_us - const)
    for t, m in p.pins.items():
        if (t, m) in x:
            lp.row({x[t, m]: 1.0}, lo=1.0)
    offset = wire.get(None, 0.0) + p.radio_uj()
    if chain_objective is not None:
        objective, offset = latency_of[chain_objective]
    return lp, x, standby, objective, offset


@dataclasses.dataclass(frozen=True)
class Solution:
    where: dict  # task -> module
    standby: dict  # module -> rests in standby (else idle)
    objective: float  # energy per period, uJ (or the chain's latency, us)
    optimal: bool = True  # False: the solver's time ran out first


def solve(p: Problem, deadlines=True, chain_objective=None) -> Solution | None:
    """The placement of least energy (or, with chain_objective, of least
    latency of that chain), or None if none fits."""
    lp, x, standby, objective, offset = build(p, deadlines, chain_objective)
    res = lp.solve(objective)
    if res.x is None:
        if res.status == 2:  # infeasible
            return None
        raise PlanError(f"the solver stopped without a placement: {res.message}")
    return Solution({t: m for (t, m), i in x.items() if res.x[i] > 0.5},
                    {m: bool(res.x[i] > 0.5) for m, i in standby.items()}, res.fun + offset,
                    res.status == 0)
