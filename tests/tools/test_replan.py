# SPDX-License-Identifier: MIT
"""Re-placement while running (tools/motetlib/replan.py): the table made
ahead of time, the row a new deadline takes, the moves, the drift
threshold, and the host's own solution off the table."""

import dataclasses
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import appplace, device, plan_report, planner, profile, replan  # noqa: E402
from test_planner import LONE_APP as APP, LONE_DEVICE as DEVICE, lone_profile  # noqa: E402

pytest.importorskip("scipy.optimize", reason="`motet setup` installs scipy")

# The paper's case on a lone job of L = 0.5 MI per 250 ms period (the
# planner tests' instance): 208 ms on the MSP430, 16 ms on the ARM7, whose
# round trip costs 400 uJ. Deadline 200 ms: only the ARM7 is in time;
# 250 ms: the MSP430 is, and costs less.
@pytest.fixture
def lone():
    app = appplace.parse(APP, "lone.toml")
    return app, device.parse(DEVICE, "lone-device.toml"), profile.parse(lone_profile(250), "p.toml", app)


def test_the_table_has_a_solved_row_per_deadline_and_reads_back(lone):
    app, dev, prof = lone
    t = replan.make_table(app, dev, prof, "fft", [250, 200])
    assert [r.deadline_ms for r in t.rows] == [200, 250]
    assert [r.where["fft"] for r in t.rows] == [0, 1]
    for r in t.rows:
        p = planner.Problem(app, dev, prof, deadlines={"fft": r.deadline_ms})
        assert r.total_uj == pytest.approx(planner.solve(p).objective)
    back = replan.parse_table(replan.write_table(t, "made by hand"), "t.toml", app)
    assert [(r.deadline_ms, r.where) for r in back.rows] == [(r.deadline_ms, r.where)
                                                              for r in t.rows]
    assert back.task == "fft" and back.period_ms == 250


def test_a_deadline_takes_the_largest_row_not_above_it(lone):
    t = replan.make_table(*lone, "fft", [200, 250])
    assert t.row_for(200).deadline_ms == 200
    assert t.row_for(249.9).deadline_ms == 200  # the 250 ms placement would be late
    assert t.row_for(1000).deadline_ms == 250
    assert t.row_for(150) is None


def test_a_deadline_change_moves_the_job_and_back(lone):
    app, dev, prof = lone
    t = replan.make_table(app, dev, prof, "fft", [200, 250])
    rp = replan.Replanner(t, app, dev, prof, {"fft": 0}, 200)
    assert rp.on_deadline(250) == [replan.Move("fft", 0, 1)]
    assert rp.why == "table row 250 ms"
    assert rp.on_deadline(260) == []
    assert rp.on_deadline(200) == [replan.Move("fft", 1, 0)]
    assert rp.where == {"fft": 0}


def test_a_deadline_below_the_table_is_solved_on_the_host_or_left(lone):
    app, dev, prof = lone
    t = replan.make_table(app, dev, prof, "fft", [250])
    rp = replan.Replanner(t, app, dev, prof, {"fft": 1}, 250)
    assert rp.on_deadline(100) == [replan.Move("fft", 1, 0)]
    assert rp.why == "below every table row: solved on the host"
    assert rp.on_deadline(5) == []  # 16 ms on the ARM7 at best
    assert rp.why.startswith("no placement meets it, the tasks stay: chain fft")
    assert rp.where == {"fft": 0}


def _measured(prof, cycles, messages=1.0):
    task = dataclasses.replace(prof.tasks["fft"], cycles={"msp430": cycles}, messages=messages)
    return dataclasses.replace(prof, tasks={"fft": task})


def test_costs_drift_only_past_the_threshold(lone):
    app, dev, prof = lone
    t = replan.make_table(app, dev, prof, "fft", [250])
    planned = prof.tasks["fft"].cycles["msp430"]
    rp = replan.Replanner(t, app, dev, prof, {"fft": 1}, 250)
    assert rp.on_costs(_measured(prof, planned * 1.2)) == []
    assert rp.why == "costs within the threshold"
    # The same work per period in twice the messages at half the cycles: no drift.
    assert rp.on_costs(_measured(prof, planned / 2, messages=2.0)) == []
    # 40 % more: 291 ms on the MSP430, past the deadline: the host moves it.
    assert rp.on_costs(_measured(prof, planned * 1.4)) == [replan.Move("fft", 1, 0)]
    assert rp.why == "costs drifted (fft +40% on msp430): solved on the host"
    assert rp.prof.tasks["fft"].cycles["arm7"] == pytest.approx(0.5e6 * 1.9 * 1.4)


def test_costs_drift_against_the_reference_the_host_gives(lone):
    """The host compares a window against the profile for that window's
    input (ssl_replan.Host); the drifted task's measured figure then stands
    in the host's profile, and a next window like it is no drift."""
    app, dev, prof = lone
    t = replan.make_table(app, dev, prof, "fft", [250])
    planned = prof.tasks["fft"].cycles["msp430"]
    rp = replan.Replanner(t, app, dev, prof, {"fft": 1}, 250)
    heavier = _measured(prof, planned * 1.4)  # the input asks 40 % more of it
    assert rp.drift(_measured(prof, planned * 1.4), reference=heavier) == []
    assert rp.on_costs(_measured(prof, planned * 1.4), reference=heavier) == []
    assert rp.why == "costs within the threshold"
    assert [d[0] for d in rp.drift(_measured(prof, planned * 1.4))] == ["fft"]
    assert rp.on_costs(_measured(prof, planned * 1.4)) == [replan.Move("fft", 1, 0)]
    assert rp.drift(_measured(prof, planned * 1.4)) == []


def test_a_task_below_the_floor_never_drifts(lone):
    app, dev, prof = lone
    small = _measured(prof, 1000.0)  # 0.2 ms of a 250 ms period on either side
    base = _measured(prof, 100.0)
    out = replan.drifted(base, small, {"fft": 1}, lambda m: "msp430", lambda m: 6.0, 250e3)
    assert out == []
    out = replan.drifted(base, small, {"fft": 1}, lambda m: "msp430", lambda m: 6.0, 250e3,
                         floor=0)
    assert out == [("fft", "msp430", 100.0, 1000.0)]


@pytest.mark.parametrize("text, message", [
    ("[table]\napp = 'other'\ntask = 'fft'\nperiod_ms = 250\n", "must name the application"),
    ("[table]\napp = 'lone'\ntask = 'nope'\nperiod_ms = 250\n", "task 'nope' is not a task"),
    ("[table]\napp = 'lone'\ntask = 'fft'\nperiod_ms = 250\n", "no [[row]]"),
    ("[table]\napp = 'lone'\ntask = 'fft'\nperiod_ms = 250\n[[row]]\ndeadline_ms = 200\n"
     "where = { fft = 'x' }\n", "row 1: where must give every task"),
    ("[table]\napp = 'lone'\ntask = 'fft'\nperiod_ms = 250\n[[row]]\ndeadline_ms = -1\n"
     "where = { fft = 0 }\n", "row 1: deadline_ms must be a number above 0"),
    ("[table]\napp = 'lone'\ntask = 'fft'\nperiod_ms = 250\n[[row]]\ndeadline_ms = 9\n"
     "where = { fft = 0 }\n[[row]]\ndeadline_ms = 9\nwhere = { fft = 1 }\n", "two rows"),
    ("[table\n", "t.toml: "),
])
def test_a_bad_table_is_refused_in_one_line(lone, text, message):
    with pytest.raises(replan.TableError) as e:
        replan.parse_table(text, "t.toml", lone[0])
    assert message in str(e.value) and str(e.value).startswith("t.toml")


def test_the_checked_in_ssl_table_is_what_the_planner_makes_now():
    app = appplace.load(ROOT / "apps/ssl/ssl_device.toml")
    dev = device.load(ROOT / "devices/ssl-device.toml")
    prof = profile.load(ROOT / "apps/ssl/ssl_device.profile.toml", app)
    t = replan.load_table(ROOT / "apps/ssl/ssl_device.table.toml", app)
    fresh = replan.make_table(app, dev, prof, t.task, [r.deadline_ms for r in t.rows])
    assert [(r.deadline_ms, r.where) for r in t.rows] == [(r.deadline_ms, r.where)
                                                          for r in fresh.rows]


def test_the_command_writes_the_table(tmp_path, capsys):
    out = tmp_path / "table.toml"
    status = plan_report.main([str(ROOT / "apps/ssl/ssl_device.toml"),
                               str(ROOT / "devices/ssl-device.toml"), "--table",
                               "radio=200,250", "-o", str(out)])
    assert status == 0
    assert "deadline 200 ms on radio:" in capsys.readouterr().out
    app = appplace.load(ROOT / "apps/ssl/ssl_device.toml")
    assert [r.deadline_ms for r in replan.load_table(out, app).rows] == [200, 250]
    assert plan_report.main([str(ROOT / "apps/ssl/ssl_device.toml"),
                             str(ROOT / "devices/ssl-device.toml"), "--table", "radio="]) == 2
    assert "expected TASK=MS[,MS...]" in capsys.readouterr().err
