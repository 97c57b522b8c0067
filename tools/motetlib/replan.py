# SPDX-License-Identifier: MIT
"""Re-placement while a device runs: the device's host keeps the tasks
where `motet plan` would put them when a deadline changes or the measured
costs drift away from the profile the placement was made with.

Ahead of time, `motet plan ... --table MS[,MS...] -o TABLE.toml` solves the
placement for each deadline of a declared set (one MILP per deadline) and
writes the rows: the placement and its predicted energy per module. At run
time the host:

- on a deadline change to D, takes the row of the largest declared deadline
  not above D (its placement meets every deadline from it upwards); a D
  tighter than every row is solved on the host (`planner.solve`), and an
  infeasible one leaves the tasks where they are, with the planner's
  explanation;
- on the event log of the last window, compares each task's measured cycles
  per message with the profile's; past `threshold` (relative), the host
  solves again with the measured figures in place of the profile's;
- migrates the tasks whose module differs (`moves()`), with the existing
  migration protocol (docs/migration.md).

For the native device the host is the hub's side (the `motet demo` run):
the modules are processes on it and the scenario's deadline changes are
the user's requests reaching the host. docs/planner.md says why a table
and not an on-device search.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from . import planner

DRIFT_THRESHOLD = 0.25  # relative change of a task's cycles per period that re-plans
DRIFT_FLOOR = 0.01  # tasks below this share of the period on both sides are not compared


class TableError(Exception):
    """A table that cannot be read or does not fit the application."""


@dataclasses.dataclass(frozen=True)
class Row:
    deadline_ms: float
    where: dict  # task -> module
    energy_uj: dict  # module -> predicted energy per period (radio included)
    total_uj: float


@dataclasses.dataclass(frozen=True)
class Table:
    app: str
    task: str  # the task whose chains the deadlines bound
    period_ms: float
    rows: tuple  # Row, ascending deadline

    def row_for(self, deadline_ms: float) -> Row | None:
        """The row of the largest declared deadline not above `deadline_ms`."""
        fit = [r for r in self.rows if r.deadline_ms <= deadline_ms]
        return fit[-1] if fit else None


@dataclasses.dataclass(frozen=True)
class Move:
    task: str
    src: int
    dst: int


def _problem(app, dev, prof, task, deadline_ms, period_ms=None):
    return planner.Problem(app, dev, prof, period_ms, {task: deadline_ms})


def _row(p, deadline_ms, sol) -> Row:
    fig = planner.evaluate(p, sol.where, sol.standby)
    return Row(float(deadline_ms), dict(sol.where), dict(fig.energy_uj), fig.total_uj)


def make_table(app, dev, prof, task, deadlines_ms, period_ms=None) -> Table:
    """One solved row per deadline; a deadline no placement meets is an error
    naming it (a declared set the device cannot serve is a design error)."""
    rows = []
    for d in sorted(set(deadlines_ms)):
        p = _problem(app, dev, prof, task, d, period_ms)
        sol = planner.solve(p)
        if sol is None:
            raise planner.PlanError(f"no placement meets a deadline of {d:g} ms on {task}")
        rows.append(_row(p, d, sol))
    return Table(app.name, task, period_ms or prof.period_ms, tuple(rows))


def write_table(t: Table, header: str = "") -> str:
    out = [f"# {line}" for line in header.splitlines()]
    out += ["", "[table]", f'app = "{t.app}"', f'task = "{t.task}"',
            f"period_ms = {t.period_ms:g}"]
    for r in t.rows:
        where = ", ".join(f"{k} = {v}" for k, v in r.where.items())
        energy = ", ".join(f'"{m}" = {e:.1f}' for m, e in r.energy_uj.items())
        out += ["", "[[row]]", f"deadline_ms = {r.deadline_ms:g}",
                f"total_uj = {r.total_uj:.1f}", f"where = {{ {where} }}",
                f"energy_uj = {{ {energy} }}"]
    return "\n".join(out) + "\n"


def parse_table(text: str, path: str, app) -> Table:
    """A table written by write_table(), checked against the application:
    every task placed, on an integer module, deadlines positive and
    distinct."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TableError(f"{path}: {e}") from None
    head = doc.get("table")
    if not isinstance(head, dict) or head.get("app") != app.name:
        raise TableError(f"{path}: [table] must name the application '{app.name}'")
    task = head.get("task")
    if task not in {t.name for t in app.tasks}:
        raise TableError(f"{path}: [table] task {task!r} is not a task of {app.name}")
    period = head.get("period_ms")
    if not isinstance(period, (int, float)) or not period > 0:
        raise TableError(f"{path}: [table] period_ms must be a number above 0")
    rows, names = [], [t.name for t in app.tasks]
    for i, r in enumerate(doc.get("row", []), 1):
        d, where, energy = r.get("deadline_ms"), r.get("where"), r.get("energy_uj", {})
        if not isinstance(d, (int, float)) or not d > 0:
            raise TableError(f"{path}: row {i}: deadline_ms must be a number above 0")
        if not isinstance(where, dict) or sorted(where) != sorted(names) or not all(
                isinstance(m, int) and not isinstance(m, bool) for m in where.values()):
            raise TableError(f"{path}: row {i}: where must give every task of {app.name} "
                             "an integer module")
        rows.append(Row(float(d), dict(where), {int(m): float(e) for m, e in energy.items()},
                        float(r.get("total_uj", 0.0))))
    if not rows:
        raise TableError(f"{path}: no [[row]]")
    rows.sort(key=lambda r: r.deadline_ms)
    if len({r.deadline_ms for r in rows}) != len(rows):
        raise TableError(f"{path}: two rows for one deadline")
    return Table(app.name, task, float(period), tuple(rows))


def load_table(path, app) -> Table:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise TableError(f"cannot read {path}: {e.strerror}") from None
    return parse_table(text, str(path), app)


def moves(current: dict, target: dict) -> list[Move]:
    """The migrations that take `current` to `target`, in task order."""
    return [Move(t, current[t], m) for t, m in target.items() if current[t] != m]


def drifted(prof, measured, where, kind_of, mhz_of, period_us, threshold=DRIFT_THRESHOLD,
            floor=DRIFT_FLOOR):
    """[(task, kind, planned, measured)] cycles per period of the tasks whose
    work per period on the kind they ran on (messages times cycles per
    message) differs from the profile's by more than `threshold`
    (relative). A task below `floor` of the period on both sides is left
    out (a few hundred cycles more or less move no energy), and so is one
    without a figure on either side: nothing to compare."""
    out = []
    for name, cost in measured.tasks.items():
        kind = kind_of(where[name])
        now_c, planned_c = cost.cycles.get(kind), prof.tasks[name].cycles.get(kind)
        if now_c is None or not planned_c:
            continue
        now, planned = cost.messages * now_c, prof.tasks[name].messages * planned_c
        if max(now, planned) / mhz_of(where[name]) < floor * period_us:
            continue
        if not planned or abs(now / planned - 1) > threshold:
            out.append((name, kind, planned, now))
    return out


def with_measured(prof, measured, drift):
    """The profile with the drifted tasks' figures replaced by the measured
    ones: their messages per period, and cycles per message on every kind
    scaled alike (the work changed, not the chip)."""
    tasks = dict(prof.tasks)
    for name, kind, _, _ in drift:
        old, new = prof.tasks[name], measured.tasks[name]
        scale = new.cycles[kind] / old.cycles[kind]
        tasks[name] = dataclasses.replace(
            old, messages=new.messages, cycles={k: c * scale for k, c in old.cycles.items()})
    return dataclasses.replace(prof, tasks=tasks)


class Replanner:
    """The host's side: the table, where the tasks are, and the answer to
    each event as the moves to make (empty: they stay)."""

    def __init__(self, table: Table, app, dev, prof, where: dict, deadline_ms: float):
        self.table, self.app, self.dev, self.prof = table, app, dev, prof
        self.where = dict(where)
        self.deadline_ms = deadline_ms
        self.why = ""

    def _solve(self, prof, deadline_ms):
        p = _problem(self.app, self.dev, prof, self.table.task, deadline_ms,
                     self.table.period_ms)
        return p, planner.solve(p)

    def _go(self, where) -> list[Move]:
        out = moves(self.where, where)
        self.where = dict(where)
        return out

    def on_deadline(self, deadline_ms: float) -> list[Move]:
        """The moves for a new deadline; self.why says where the answer came
        from."""
        self.deadline_ms = deadline_ms
        row = self.table.row_for(deadline_ms)
        if row is not None:
            self.why = f"table row {row.deadline_ms:g} ms"
            return self._go(row.where)
        p, sol = self._solve(self.prof, deadline_ms)
        if sol is None:
            from .plan_report import explain_infeasible
            self.why = ("no placement meets it, the tasks stay: "
                        + "; ".join(explain_infeasible(p)))
            return []
        self.why = "below every table row: solved on the host"
        return self._go(sol.where)

    def drift(self, measured, threshold=DRIFT_THRESHOLD, reference=None):
        """drifted() of a window's measured costs (a Profile of that window)
        against `reference` (default the host's profile; for a window whose
        input differs from the profile's, the profile for that input)."""
        return drifted(reference or self.prof, measured, self.where,
                       lambda m: self.dev.module(m).processor.name,
                       lambda m: self.dev.module(m).processor.mhz,
                       self.table.period_ms * 1e3, threshold)

    def on_costs(self, measured, threshold=DRIFT_THRESHOLD, reference=None) -> list[Move]:
        """The moves after a window whose measured costs are `measured` (a
        Profile of that window): none unless some task drifted past the
        threshold (against `reference`, as drift()), then the host's
        solution with the measured figures, which the host keeps from then
        on (a drifted task's workload model, if it had one, goes: the
        measured figure stands for it)."""
        ref = reference or self.prof
        drift = self.drift(measured, threshold, ref)
        if not drift:
            self.why = "costs within the threshold"
            return []
        new = with_measured(ref, measured, drift)
        gone = {name for name, *_ in drift}
        self.prof = dataclasses.replace(
            new, workloads={t: w for t, w in new.workloads.items() if t not in gone})
        p, sol = self._solve(self.prof, self.deadline_ms)
        names = ", ".join(f"{t} {now / planned - 1:+.0%} on {k}" if planned else f"{t} new"
                          for t, k, planned, now in drift)
        if sol is None:
            self.why = f"costs drifted ({names}) and no placement fits: the tasks stay"
            return []
        self.why = f"costs drifted ({names}): solved on the host"
        return self._go(sol.where)
