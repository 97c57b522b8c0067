# SPDX-License-Identifier: MIT
"""Re-placement in the SSL demo: the scenario's `[[deadline]]` changes
(the user asking the device's host for another block deadline) answered
with the table apps/ssl/ssl_device.table.toml (`motet plan --table`), the
tasks that must move migrated, and the energy per period before and after.

The host here is the demo's side of the hub (tools/motetlib/replan.py says
what it does): the hub runs it at each change's instant while the device
runs (Host, hub.Hub's `host`), it takes the table's row or solves, and it
sends each migration it decided to the compute module, whose migrator
carries the request over the bus to the task's module. After the run the
host reads the event log of each window and checks the measured costs
against the profile (the drift trigger).

Energy per period of a window: the hub's energy (active power while busy,
sleep power otherwise) of runs ending at the window's two ends, divided by
the periods between them; beside it the planner's prediction for the
placement of that window less the radio's bytes (the hub does not charge
the radio), as in the planner benchmark. The prediction takes the profile's
costs and the window's workload statistics: the blocks HT located per
period and the mean cross-spectrum entries of each, from the radio's
direction lines of blocks captured in the window (HT's cost per located
block is a + b * entries, fitted by `motet profile --fit ht:0`). These are
statistics of the input (what the scenario's sources make HT keep), not
measured costs.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

from . import (appplace, build, eventlog, planner, profile as profmod, replan, run_device,
               ssl_scenario)

APP = build.ROOT / "apps" / "ssl" / "ssl_device.toml"
PROFILE = build.ROOT / "apps" / "ssl" / "ssl_device.profile.toml"
TABLE = build.ROOT / "apps" / "ssl" / "ssl_device.table.toml"
FIRST_APP_PID = 0x10
START_DEADLINE_MS = 250.0  # the block period: a block is due before the next one
WARMUP_S = 1.0  # the first second (SC training, first blocks) is left out of every window
MOVE_GAP_S = 0.1  # one migration at a time: a task's move takes some 60 ms here
SETTLE_S = 0.5  # after the last move of a change, half a second is left out too
MIGRATE_LEFT = 4  # eventlog.MIGRATE_PHASES.index("LEFT"): the source's record of a success
LINK_MODULE = 1  # the compute module: the host's link to the device
WORKLOAD_TASK = "ht"  # the task whose cost per period follows the input (profile --fit)
DIRECTION = re.compile(r"radio: ssl block=\d+ t_ms=([\d.]+) .*entries=(\d+)")
# The drift check while the device runs (Host.check_drift): once a second
# of device time, the host reads what the modules' event logs have gained
# and measures each task's cycles per period over the last DRIFT_WINDOW_S,
# ending LOG_LAG_S ago (a native module writes its records when it goes to
# sleep, at least once a block period), against the profile for the
# window's input (HT's located blocks and their entries, from the radio's
# lines); a task past the threshold in DRIFT_CONFIRM checks in a row
# re-plans (one window's input or a migration's stall is not a drift).
DRIFT_EVERY_S = 1.0
DRIFT_WINDOW_S = 2.0
DRIFT_CONFIRM = 2
LOG_LAG_S = 0.25


def located_blocks(lines):
    """[(capture time s, entries)] of the blocks HT located, from the
    radio's direction lines."""
    return [(float(m.group(1)) / 1e3, int(m.group(2)))
            for m in map(DIRECTION.search, lines) if m]


def window_profile(prof, located, lo_s, hi_s):
    """(the profile for the window [lo_s, hi_s), its workload statistics
    (located blocks per period, mean entries) or None): HT's cost per period
    for the blocks captured in the window, when the profile has its fit."""
    if WORKLOAD_TASK not in prof.workloads:
        return prof, None
    stats = profmod.workload_stats(located, lo_s, hi_s, prof.period_ms)
    return profmod.with_workload(prof, {WORKLOAD_TASK: stats}), stats


def profile_without_workload(path, out):
    """Write to `out` the profile at `path` less its [[workload]] tables:
    a profile whose HT figure is its window's and does not follow the
    input (a noisy room is then a drift of HT)."""
    text = Path(path).read_text()
    while "[[workload]]" in text:
        at = text.index("[[workload]]")
        after = text.find("\n[[", at + 1)
        text = text[:at] + (text[after + 1:] if after > 0 else "")
    Path(out).write_text(text)
    return Path(out)


@dataclasses.dataclass
class Change:
    t_s: float
    deadline_ms: float
    moves: list
    why: str
    cause: str = "deadline"  # or "drift": the host's check of the costs while running


def deadline_changes(scenario) -> list[tuple[float, float]]:
    """[(time s, block deadline ms)] of the scenario, in time order."""
    doc = ssl_scenario.read(scenario)
    return sorted((float(d.get("time", 0.0)), float(d.get("block_ms", 250.0)))
                  for d in doc.get("deadline", []))


class Host:
    """The device's host while the device runs: at each deadline change of
    the scenario (the user's request reaching the host at that instant) it
    answers from the table, or solves (replan.Replanner), and sends the
    migrations it decided to the compute module, the host's link to the
    device (LINK_MODULE), one MOVE_GAP_S after another; that module's
    migrator carries each request over the bus to the task's module
    (apps/ssl/main_device.c). With `log_dir` (the modules' event logs, as
    they are written) it also checks the costs once every DRIFT_EVERY_S up
    to `end_s`: each task's cycles per period over the last DRIFT_WINDOW_S
    against the profile (Replanner.on_costs), and a drift past the
    threshold re-plans with the measured figures and migrates the same
    way. `decided`, `asked` and `checks` keep what it did."""

    def __init__(self, app, dev, prof, table, changes, log_dir=None, lines=None, end_s=None):
        self.app, self.dev = app, dev
        self.rp = replan.Replanner(table, app, dev, prof, {t.name: t.module for t in app.tasks},
                                   START_DEADLINE_MS)
        self.pid = {t.name: FIRST_APP_PID + t.pid for t in app.tasks}
        self.changes = changes
        self.decided = []  # Change, as each deadline change or drift came
        self.asked = []  # (seconds, task, destination) as each request went out
        self.checks = []  # (seconds, window lo, hi, what the check found)
        self.tails = ({m.id: eventlog.Tail(Path(log_dir) / f"m{m.id}.log") for m in dev.modules}
                      if log_dir else {})
        self.records = {m.id: [] for m in dev.modules}
        self.lines = lines if lines is not None else []  # the run's output, as it comes
        self.end_s = end_s
        self.steady_from = WARMUP_S  # no window of costs reaches back before a move settled
        self.streak = {}  # task -> checks in a row it was past the threshold

    def actions(self):
        """The hub's host actions (hub.Hub, `host`)."""
        out = [(t_s, functools.partial(self.on_change, t_s, ms)) for t_s, ms in self.changes]
        if self.tails:
            out.append((WARMUP_S + DRIFT_WINDOW_S + LOG_LAG_S, self.check_drift))
        return out

    def _migrate(self, change, hub):
        self.decided.append(change)
        for i, m in enumerate(change.moves):
            hub.host_at(hub.now + round(i * MOVE_GAP_S * 1e9), functools.partial(self.ask, m))
        if change.moves:
            self.steady_from = change.t_s + len(change.moves) * MOVE_GAP_S + SETTLE_S
            self.streak = {}

    def on_change(self, t_s, ms, hub):
        moves = self.rp.on_deadline(ms)
        self._migrate(Change(t_s, ms, moves, self.rp.why), hub)

    def check_drift(self, hub):
        t = hub.now / 1e9
        for mid, tail in self.tails.items():
            self.records[mid].extend(tail.new())
        hi = t - LOG_LAG_S
        lo = max(hi - DRIFT_WINDOW_S, self.steady_from)
        if hi - lo >= DRIFT_WINDOW_S - 1e-9:
            self._check(t, lo, hi, hub)
        if self.end_s is None or t + DRIFT_EVERY_S <= self.end_s:
            hub.host_at(hub.now + round(DRIFT_EVERY_S * 1e9), self.check_drift)

    def _check(self, t, lo, hi, hub):
        kinds = {m.processor.name: "the device's event logs" for m in self.dev.modules}
        measured = profmod.from_logs(self.app, self.dev, [(self.rp.where, self.records)],
                                     self.rp.prof.period_ms, lo, hi, kinds)
        reference, _ = window_profile(self.rp.prof, located_blocks(self.lines), lo, hi)
        past = {name for name, *_ in self.rp.drift(measured, reference=reference)}
        self.streak = {name: self.streak.get(name, 0) + 1 for name in past}
        if not past or max(self.streak.values()) < DRIFT_CONFIRM:
            self.checks.append((t, lo, hi, "costs within the threshold" if not past else
                                "past the threshold once: " + ", ".join(sorted(past))))
            return
        moves = self.rp.on_costs(measured, reference=reference)
        self.checks.append((t, lo, hi, self.rp.why))
        self._migrate(Change(t, self.rp.deadline_ms, moves, self.rp.why, "drift"), hub)

    def ask(self, move, hub):
        if hub.host_send(LINK_MODULE, bytes([self.pid[move.task], move.dst])):
            self.asked.append((hub.now / 1e9, move.task, move.dst))


    def replay(self):
        """Host actions that send the same requests at the same instants:
        another run of the device with the moves this host made (a drift
        showed only in the logs of its own run)."""
        def send(task_pid, dst, hub):
            hub.host_send(LINK_MODULE, bytes([task_pid, dst]))
        return [(t, functools.partial(send, self.pid[task], dst)) for t, task, dst in self.asked]


def plan_changes(app, dev, prof, table, changes) -> list[Change]:
    """What the host will decide at each change (the same Replanner, run
    ahead of the device)."""
    rp = replan.Replanner(table, app, dev, prof, {t.name: t.module for t in app.tasks},
                          START_DEADLINE_MS)
    out = []
    for t_s, ms in changes:
        mv = rp.on_deadline(ms)
        out.append(Change(t_s, ms, mv, rp.why))
    return out


def _energy_at(dev, bdir, until, extra, host=()):
    lines = []
    status, rep = run_device.run(dev, bdir, until=until, extra=extra, out=lines.append,
                                 progress=False, host=host)
    if status != 0 or rep is None:
        raise planner.PlanError(f"the device run to {until:g} s failed:\n"
                                + "\n".join(lines[-20:]))
    return {m.id: rep["modules"][str(m.id)]["energy_mj"] for m in dev.modules}


def windows_end(scenario, end_s):
    """Where the last window ends for a run that ended at end_s: with the
    scenario's sound, after which the microphones stop and the device only
    finishes its last block."""
    return min(end_s, float(ssl_scenario.read(scenario).get("duration", 10)))


def windows(changes, end_s):
    """[(lo, hi, index of the placement)] between the changes that move."""
    edges, out, lo, k = [c for c in changes if c.moves], [], WARMUP_S, 0
    for c in edges:
        if c.t_s > lo:
            out.append((lo, c.t_s, k))
        lo, k = c.t_s + len(c.moves) * MOVE_GAP_S + SETTLE_S, k + 1
    if end_s > lo:
        out.append((lo, end_s, k))
    return out


def _placements(app, changes):
    out = [{t.name: t.module for t in app.tasks}]
    for c in changes:
        if c.moves:
            where = dict(out[-1])
            where.update({m.task: m.dst for m in c.moves})
            out.append(where)
    return out


@dataclasses.dataclass
class Window:
    lo: float
    hi: float
    where: dict
    simulated: dict  # module -> uJ per period, with the re-placement
    kept: dict  # module -> uJ per period, the description's placement kept all along
    predicted: dict  # module -> uJ per period, the profile's costs (the table's model)
    #   with the window's workload statistics (window_profile)
    plain: dict  # module -> uJ per period, the profile's costs and its own statistics
    stats: tuple | None  # (located blocks per period, mean entries) of the window
    remeasured: dict  # module -> uJ per period, the costs measured in the window
    drift: str  # the host's drift check on the window


def _predicted(p, where):
    """{module: uJ per period} of the model, less the radio's bytes."""
    fig = planner.evaluate(p, where)
    radio = p.radio_uj() if p.radio else 0.0
    return {m: fig.energy_uj[m] - (radio if p.radio and where[p.radio] == m else 0)
            for m in p.modules}


def measure(app, dev, prof, table, bdir, changes, extra, new_host, records, end_s, lines):
    """A Window per stretch between the changes that move tasks; new_host()
    gives the host's actions for a run of the device that re-places;
    `lines` are that run's output (the radio's direction lines)."""
    kinds = {m.processor.name: "demo" for m in dev.modules}
    runs = {}

    def energy(t, moved):
        if (t, moved) not in runs:
            runs[t, moved] = _energy_at(dev, bdir, t, extra, new_host() if moved else ())
        return runs[t, moved]

    def per_period(lo, hi, moved):
        n = (hi - lo) * 1e3 / prof.period_ms
        return {m.id: (energy(hi, moved)[m.id] - energy(lo, moved)[m.id]) * 1e3 / n
                for m in dev.modules}

    placements = _placements(app, changes)
    located = located_blocks(lines)
    out = []
    for lo, hi, k in windows(changes, end_s):
        where = placements[k]
        rp = replan.Replanner(table, app, dev, prof, where, START_DEADLINE_MS)
        measured = profmod.from_logs(app, dev, [(where, records)], prof.period_ms, lo, hi, kinds)
        mv = rp.on_costs(measured)
        drift = rp.why + ("; the host would move "
                          + ", ".join(f"{m.task} m{m.src}->m{m.dst}" for m in mv) if mv else "")
        wprof, stats = window_profile(prof, located, lo, hi)
        out.append(Window(lo, hi, where, per_period(lo, hi, True), per_period(lo, hi, False),
                          predicted=_predicted(planner.Problem(app, dev, wprof), where),
                          plain=_predicted(planner.Problem(app, dev, prof), where), stats=stats,
                          remeasured=_predicted(planner.Problem(app, dev, rp.prof), where),
                          drift=drift))
    return out


def migrations_done(app, records):
    """[(time s, task, source module, destination)] of the migrations that
    succeeded: the source's LEFT records."""
    name = {FIRST_APP_PID + t.pid: t.name for t in app.tasks}
    out = []
    for mid, recs in records.items():
        for r in recs:
            if (isinstance(r, eventlog.Event) and r.type == "MIGRATE"
                    and r.arg >> 8 == MIGRATE_LEFT and r.pid in name):
                out.append((r.time_us / 1e6, name[r.pid], mid, r.arg & 0xFF))
    return sorted(out)


def _off(pred, sim):
    return "  ".join(f"m{m} {100 * (pred[m] / sim[m] - 1):+.1f} %" for m in sim)


def check_lines(checks):
    """The host's drift checks while the device ran."""
    if not checks:
        return []
    quiet = sum(why == "costs within the threshold" for _, _, _, why in checks)
    out = [f"  drift checks while running (every {DRIFT_EVERY_S:g} s, the last "
           f"{DRIFT_WINDOW_S:g} s of the event logs against the profile for the window's "
           f"input; {replan.DRIFT_THRESHOLD:.0%} of a task's cycles per period, "
           f"{DRIFT_CONFIRM} checks in a row): {len(checks)}, {quiet} within the threshold"]
    out += [f"    t={t:g} s, window {lo:g} - {hi:g} s: {why}"
            for t, lo, hi, why in checks if why != "costs within the threshold"]
    return out


def report_lines(changes, done, wins, asked=(), checks=()):
    out = ["Re-placement (the host, with the table apps/ssl/ssl_device.table.toml made by "
           "`motet plan --table radio=200,250`):",
           f"  start: the description's placement, block deadline {START_DEADLINE_MS:g} ms"]
    out += check_lines(checks)
    for c in changes:
        mv = ", ".join(f"{m.task} m{m.src}->m{m.dst}" for m in c.moves) or "nothing moves"
        if c.cause == "drift":
            out.append(f"  t={c.t_s:g} s  drift check: {c.why}: {mv}")
        else:
            out.append(f"  t={c.t_s:g} s  block deadline -> {c.deadline_ms:g} ms ({c.why}): {mv}")
    for t, task, dst in asked:
        out.append(f"    host: asked m{LINK_MODULE} to move {task} to m{dst} at t={t:.3f} s")
    for t, task, src, dst in done:
        out.append(f"    migrated {task} m{src} -> m{dst}, left m{src} at t={t:.3f} s")
    asked = sum(len(c.moves) for c in changes)
    if asked != len(done):
        out.append(f"    {asked - len(done)} migration(s) did not succeed: the task stayed "
                   "(the event logs say why)")
    if wins:
        out.append("  energy per period, uJ, of the five modules (the radio's bytes left out: "
                   "the hub does not charge them):")
    for w in wins:
        sim, kept = sum(w.simulated.values()), sum(w.kept.values())
        out.append(f"    {w.lo:g} - {w.hi:g} s: {sim:.0f} simulated, {kept:.0f} with the "
                   f"description's placement kept (saved {kept - sim:.0f}, "
                   f"{100 * (1 - sim / kept):.1f} %)")
        if w.stats:
            out.append(f"      the window's input: {w.stats[0]:.2f} located blocks per period, "
                       f"{w.stats[1]:.0f} cross-spectrum entries each")
        out.append(f"      predicted, the profile's costs and the window's input: "
                   f"{sum(w.predicted.values()):.0f}; per module off by "
                   f"{_off(w.predicted, w.simulated)}")
        out.append(f"      predicted, the profile's costs and its own input: "
                   f"{sum(w.plain.values()):.0f}; per module off by {_off(w.plain, w.simulated)}")
        out.append(f"      predicted, the costs measured in the window: "
                   f"{sum(w.remeasured.values()):.0f}; per module off by "
                   f"{_off(w.remeasured, w.simulated)}")
        out.append(f"      drift check ({replan.DRIFT_THRESHOLD:.0%} of a task's cycles per "
                   f"period): {w.drift}")
    return out


def run(dev, bdir, scenario, extra, log_dir=None, lines=None, profile=PROFILE):
    """(the host's actions for the run, a function of the run's event logs
    and its end giving the report lines); ((), None) if the host has
    nothing to do. With `log_dir` (where the run writes the event logs)
    and `lines` (the list its output goes to) the host also checks the
    costs while the device runs, if the module it sends to takes host
    messages (only the native port's modules do yet)."""
    changes = deadline_changes(scenario)
    watch = log_dir is not None and dev.module(LINK_MODULE).kind == "native"
    if not changes and not watch:
        return (), None
    if dev.module(LINK_MODULE).kind != "native":
        # The mixed device: its compute module takes no host messages, and
        # its images carry no task migrator (apps/ssl/CMakeLists.txt).
        note = (f"Re-placement: none on {Path(dev.path).name}, the scenario's deadline "
                f"changes move no task: its module {LINK_MODULE} takes no host messages "
                "(a native module's bus interrupt), and its images have no task migrator")
        return (), lambda records, end_s, lines: ["", note]
    app = appplace.load(APP)
    prof = profmod.load(profile, app)
    try:
        planner.Problem(app, dev, prof)
    except planner.PlanError as e:
        # A device whose processors the profile never measured: nothing to
        # place by.
        note = (f"Re-placement: none on {Path(dev.path).name}, the scenario's deadline "
                f"changes move no task: {e}")
        return (), lambda records, end_s, lines: ["", note]
    table = replan.load_table(TABLE, app)
    host = Host(app, dev, prof, table, changes, log_dir=log_dir if watch else None,
                lines=lines, end_s=windows_end(scenario, float("inf")))

    def report(records, end_s, lines):
        if not any(c.moves for c in host.decided) and not changes:
            return report_lines(host.decided, [], [], checks=host.checks)
        done = migrations_done(app, records)
        try:  # the windows' runs are for a device the planner can predict
            planner.Problem(app, dev, prof)
        except planner.PlanError as e:
            return report_lines(host.decided, done, [], host.asked, host.checks) + [
                f"  no energy per window: the planner cannot predict this device ({e})"]
        wins = measure(app, dev, prof, table, bdir, host.decided, extra, host.replay, records,
                       windows_end(scenario, end_s), lines)
        return report_lines(host.decided, done, wins, host.asked, host.checks)
    return host.actions(), report
