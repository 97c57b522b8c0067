# SPDX-License-Identifier: MIT
"""Task-cost profiles (tools/motetlib/profile.py) and placed descriptions
(tools/motetlib/appplace.py), without a build: synthetic event logs."""

import dataclasses
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import appc_text, appplace, device, eventlog, profile  # noqa: E402

APP = """# SPDX-License-Identifier: MIT
# a sensor feeding a filter feeding a sink
[app]
name = "chain"

[programs]
sense = 1
filter = 2
sink = 3

[[task]]
name = "sense"
program = "sense"
priority = 1
module = 1
routes = ["filter:0"]

[[task]]   # a comment on the header
name = "filter"
program = "filter"
priority = 1
movable = true
routes = ["sink:0", "@all"]

[[task]]
name = "sink"
program = "sink"
priority = 2
module = 1

[[group]]
name = "all"
members = ["sink:1", "sense:0"]
"""

DEVICE = """
[device]
program = "apps/pingpong/pingpong"
[[module]]
id = 0
cpu_mhz = 60
processor = "arm7"
[[module]]
id = 1
cpu_mhz = 6
processor = "msp430"
"""

SENSE, FILTER, SINK = 0x10, 0x11, 0x12


def ev(t, kind, pid, arg):
    return eventlog.Event(t, kind, pid, arg)


def test_placed_rewrites_only_the_module_numbers():
    app = appplace.parse(APP, "chain.toml")
    assert [(t.name, t.module, t.movable) for t in app.tasks] == [
        ("sense", 1, False), ("filter", 0, True), ("sink", 1, False)]
    assert [r.label for r in app.routes] == ["sense:0 -> filter", "filter:0 -> sink",
                                             "filter:1 -> @all"]
    text = appplace.placed(app, {"filter": 1, "sink": 0}, "placed by a test")
    assert text.startswith("# SPDX-License-Identifier: MIT\n# placed by a test\n")
    back = appplace.parse(text)
    assert {t.name: t.module for t in back.tasks} == {"sense": 1, "filter": 1, "sink": 0}
    # everything but the placement is the same description
    same = appplace.placed(back, {"filter": 0, "sink": 1})
    assert appc_text.compile_text(same) == appc_text.compile_text(APP)


def test_a_bad_description_is_refused_naming_the_problem():
    with pytest.raises(appplace.AppError) as e:
        appplace.parse(APP.replace('"sink:0", ', '"nowhere:0", '), "chain.toml")
    assert "chain.toml" in str(e.value) and "nowhere" in str(e.value)


def _logs_local():
    """The description's placement: filter on m0, the others on m1.
    Period 100 ms; the window holds two periods."""
    m1 = [ev(0, "CREATE", SENSE, 1), ev(0, "START", SENSE, 0), ev(0, "ALLOC", SENSE, 40),
          ev(0, "ALLOC", SENSE, 8), ev(10, "END", SENSE, 0),
          ev(10, "ALLOC", SENSE, 500)]  # after INIT: not its resident RAM
    m0 = [ev(0, "START", FILTER, 0), ev(0, "ALLOC", FILTER, 100), ev(5, "END", FILTER, 0)]
    for k in range(2):
        t = 100_000 * (k + 1)
        # sense: a timer; its 1000 us handler is preempted by sink for 200 us
        m1 += [ev(t, "START", SENSE, 4), ev(t + 300, "START", SINK, 9),
               ev(t + 500, "END", SINK, 9), ev(t + 1200, "END", SENSE, 4),
               ev(t + 1210, "BUS", FILTER, 40)]
        # filter on m0: 60 us per spectrum, then its two outputs cross the bus
        m0 += [ev(t + 1300, "START", FILTER, 8), ev(t + 1360, "END", FILTER, 8),
               ev(t + 1370, "BUS", SINK, 20), ev(t + 1380, "BUS", 0xF0, 16)]
    return {0: m0, 1: m1}


def _logs_moved():
    """filter on m1 with the others: every message local."""
    m1 = []
    for k in range(2):
        t = 100_000 * (k + 1)
        m1 += [ev(t, "START", SENSE, 4), ev(t + 100, "END", SENSE, 4),
               ev(t + 100, "SEND", SENSE, FILTER << 8 | 8),
               ev(t + 100, "START", FILTER, 8), ev(t + 400, "SEND", FILTER, SINK << 8 | 8),
               ev(t + 600, "END", FILTER, 8)]
    return {0: [], 1: m1}


def test_from_logs_measures_cycles_messages_ram_and_frames():
    app = appplace.parse(APP, "chain.toml")
    dev = device.parse(DEVICE, "d.toml")
    runs = [({"sense": 1, "filter": 0, "sink": 1}, _logs_local()),
            ({"sense": 1, "filter": 1, "sink": 1}, _logs_moved())]
    prof = profile.from_logs(app, dev, runs, 100.0, 0.05, 0.25,
                             profile.measured_text(dev, runs))
    # sense: 1200 us less the 200 us sink preempted it for, at 6 MHz; then 100 us
    assert prof.tasks["sense"].cycles == {"msp430": pytest.approx((6000 * 2 + 600 * 2) / 4)}
    assert prof.tasks["sink"].cycles == {"msp430": 1200.0}
    assert prof.tasks["filter"].cycles == {"arm7": 3600.0, "msp430": 3000.0}
    # messages per period from the first run only: two periods in the window
    assert prof.tasks["sense"].messages == 1.0 and prof.tasks["filter"].messages == 1.0
    assert prof.tasks["sense"].ram_bytes == 48 and prof.tasks["filter"].ram_bytes == 100
    assert prof.route("sense", 0).bytes == 40 and prof.route("sense", 0).messages == 1.0
    assert prof.route("filter", 0).bytes == 20
    assert prof.route("filter", 1).bytes == 16 and prof.route("filter", 1).messages == 1.0
    assert set(prof.measured) == {"arm7", "msp430"}
    assert "d.toml modules 1 (msp430, 6 MHz)" in prof.measured["msp430"]
    # what is written reads back the same
    again = profile.parse(profile.write(prof, "a header"), "p.toml", app)
    assert again.tasks == prof.tasks and again.routes == prof.routes


def test_a_frame_copy_comes_out_of_the_handler_it_ran_in():
    """The interface copies a frame when the kernel hands it over: at once
    if none is in flight, else when the one before has gone out (its BUS
    record). Two frames opened in sense's handler: the first's copy comes
    out of sense, the second's out of sink, which was running when the
    first went out; a third, opened with nothing in flight while no handler
    runs, out of none."""
    app = appplace.parse(APP, "chain.toml")
    dev = device.parse(DEVICE + "bus_cycles_per_frame = 60\nbus_cycles_per_byte = 6\n",
                       "d.toml")
    copy = lambda n: (60 + 6 * n) / 6  # noqa: E731 us at m1's 6 MHz
    t = 100_000
    m1 = [ev(t, "START", SENSE, 4), ev(t + 100, "ALLOC", 0, 40), ev(t + 200, "ALLOC", 0, 20),
          ev(t + 1000, "END", SENSE, 4),
          ev(t + 2000, "START", SINK, 9), ev(t + 2500, "BUS", FILTER, 40),
          ev(t + 3000, "END", SINK, 9), ev(t + 3100, "BUS", FILTER, 20),
          ev(t + 4000, "ALLOC", 0, 16), ev(t + 4100, "BUS", FILTER, 16)]
    where = {"sense": 1, "filter": 1, "sink": 1}
    prof = profile.from_logs(app, dev, [(where, {0: [], 1: m1})], 100.0, 0.05, 0.25,
                             profile.measured_text(dev, [where]))
    assert prof.tasks["sense"].cycles["msp430"] == pytest.approx((1000 - copy(40)) * 6)
    assert prof.tasks["sink"].cycles["msp430"] == pytest.approx((1000 - copy(20)) * 6)


def test_variants_cover_every_kind_and_split_local_routes():
    app = appplace.parse(APP, "chain.toml")
    dev = device.parse(DEVICE, "d.toml")
    runs = profile.variants(app, dev)
    assert runs[0] == {"sense": 1, "filter": 0, "sink": 1}
    assert runs[1] == {"sense": 1, "filter": 1, "sink": 1}  # filter on the other kind
    assert len(runs) == 2  # every route with a movable end crossed the bus in run 0


GOOD = """
[profile]
app = "chain"
period_ms = 100
[measured]
msp430 = "by hand"
[[task]]
name = "sense"
messages = 1
ram_bytes = 10
cycles = { msp430 = 100 }
[[task]]
name = "filter"
messages = 1
ram_bytes = 10
cycles = { msp430 = 100 }
[[task]]
name = "sink"
messages = 1
ram_bytes = 0
cycles = { msp430 = 1 }
[[route]]
from = "filter"
port = 1
messages = 1
bytes = 16
"""


@pytest.mark.parametrize("old, new, message", [
    ('period_ms = 100', 'period_ms = 0', "p.toml [profile]: 'period_ms' = 0 is outside"),
    ('period_ms = 100', 'period = 100', "p.toml [profile]: unknown field period"),
    ('ram_bytes = 0', 'ram_bytes = -1', "p.toml task 'sink': 'ram_bytes' = -1 is outside"),
    ('cycles = { msp430 = 1 }', 'cycles = { arm7 = 1 }',
     "p.toml task 'sink': cycles.arm7: [measured] does not say where"),
    ('cycles = { msp430 = 1 }', 'cycles = { msp430 = nan }', "p.toml task 'sink' cycles"),
    ('messages = 1\nbytes = 16', 'messages = 1\nbytes = 0', "p.toml route #1: 'bytes' = 0"),
    ('port = 1', 'port = 5', "p.toml: route filter:5 is not an output port of chain.toml"),
    ('name = "sink"', 'name = "sonk"', "p.toml: no figures for task sink of chain.toml"),
    ('app = "chain"', 'app = "other"', "a profile of 'other', not of 'chain'"),
    ('messages = 1\nram_bytes = 0', 'messages = "1"\nram_bytes = 0',
     "'messages' must be a number"),
])
def test_bad_profiles_are_refused_naming_file_and_field(old, new, message):
    app = appplace.parse(APP, "chain.toml")
    assert profile.parse(GOOD, "p.toml", app).tasks["sink"].cycles == {"msp430": 1.0}
    assert old in GOOD
    with pytest.raises(profile.ProfileError) as e:
        profile.parse(GOOD.replace(old, new, 1), "p.toml", app)
    assert message in str(e.value)


@pytest.mark.parametrize("line, message", [
    ("task = 5", "p.toml: 'task' must be [[task]] tables"),
    ("task = [1]", "p.toml: 'task' must be [[task]] tables"),
    ("route = \"x\"", "p.toml: 'route' must be [[route]] tables"),
    ("[task]\nname = \"sense\"", "p.toml: 'task' must be [[task]] tables"),
])
def test_tasks_and_routes_that_are_not_arrays_of_tables_get_one_line(line, message):
    with pytest.raises(profile.ProfileError) as e:
        profile.parse(f"{line}\n[profile]\napp = \"chain\"\nperiod_ms = 100\n", "p.toml")
    assert str(e.value) == message


def test_the_shipped_ssl_profile_matches_its_application():
    app = appplace.load(ROOT / "apps" / "ssl" / "ssl_device.toml")
    prof = profile.load(ROOT / "apps" / "ssl" / "ssl_device.profile.toml", app)
    assert prof.period_ms == 250
    assert set(prof.tasks["ht"].cycles) == {"arm7", "msp430"}
    assert prof.tasks["ht"].ram_bytes > 16384  # its tables
    text = (ROOT / "apps" / "ssl" / "ssl_device.profile.toml").read_text()
    assert "Produced by: ./motet profile apps/ssl/ssl_device.toml" in text


ODD_VALUES = ("5", "-1", "0", '"x"', "[1]", "[]", "{ a = 1 }", "{}", "true", "nan", "inf",
              "1e300", "1.5")


def test_any_odd_value_in_a_profile_gets_a_profile_error():
    # Each field of a good profile in turn, each odd value: parsed, or
    # refused with a ProfileError (one line), never another exception.
    app = appplace.parse(APP, "chain.toml")
    lines = GOOD.splitlines()
    tried = 0
    for i, line in enumerate(lines):
        key, sep, _ = line.partition(" = ")
        if not sep:
            continue
        for value in ODD_VALUES:
            text = "\n".join(lines[:i] + [f"{key} = {value}"] + lines[i + 1:]) + "\n"
            try:
                profile.parse(text, "p.toml", app)
            except profile.ProfileError as e:
                assert "\n" not in str(e) and str(e).startswith("p.toml")
            tried += 1
    assert tried > 200


@pytest.mark.parametrize("period", ["-5", "0", "nan", "inf", "1e9"])
def test_a_period_no_profile_can_have_is_refused_before_any_run(period, capsys):
    # Refused before building or running anything, in one line, rather than
    # written into a profile that `motet plan` then cannot read.
    status = profile.main([str(ROOT / "apps" / "ssl" / "ssl_device.toml"),
                           str(ROOT / "devices" / "ssl-device.toml"), "--period-ms", period,
                           "--logs", "/nonexistent"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("profile: error: --period-ms ") and err.count("\n") == 1
    assert "must be within 0.001 .. 3.6e+06 ms" in err


def test_logs_given_with_an_empty_file_are_refused_naming_it(tmp_path, capsys):
    """`motet profile --logs DIR` where a module's log is empty: an error
    naming the file, not a profile of zeros and status 0."""
    (tmp_path / "m0.log").write_text("# motet event log, port native, 1000000 ticks per second\n"
                                     "EV 0 WAKE 0 0\n")
    (tmp_path / "m1.log").write_bytes(b"")
    app = tmp_path / "app.toml"
    app.write_text(APP)
    dev = tmp_path / "dev.toml"
    dev.write_text(DEVICE)
    status = profile.main([str(app), str(dev), "--period-ms", "100", "--logs", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith(f"profile: error: {tmp_path / 'm1.log'}: empty: ") and \
        err.count("\n") == 1, err


# ---- workloads: a task's cost per item linear in the item's size ----------

SIZES = [10, 40, 25, 50, 5]  # one item per period, as the output reports them


def _item_logs(on_arm7, a, b, mhz):
    """filter ending one item per period (its output 0 to sink), costing
    a + b * size cycles, beside a handler that ends none; on the arm7
    module (m0) its message to sink crosses the bus, on m1 it is local."""
    mods = {0: [], 1: []}
    here = mods[0 if on_arm7 else 1]
    for k, size in enumerate(SIZES):
        t = 100_000 * (k + 1)
        us = round((a + b * size) / mhz)
        here += [ev(t, "START", FILTER, 8)]
        if on_arm7:  # the frame's record comes once it has gone out
            here += [ev(t + us, "END", FILTER, 8), ev(t + us + 30, "BUS", SINK, 20)]
        else:
            here += [ev(t + us, "SEND", FILTER, SINK << 8 | 8), ev(t + us, "END", FILTER, 8)]
        here += [
                 # a message that ends no item: multicast only
                 ev(t + 50_000, "START", FILTER, 9), ev(t + 50_000 + 100, "BUS", 0xF0, 16),
                 ev(t + 50_100, "END", FILTER, 9)]
    return mods


def _item_output():
    return [f"[{k}] radio: ssl block={k} t_ms=1.000 entries={n}" for k, n in enumerate(SIZES)]


def _item_profile(outputs=None):
    app = appplace.parse(APP, "chain.toml")
    dev = device.parse(DEVICE, "d.toml")
    runs = [({"sense": 1, "filter": 0, "sink": 1}, _item_logs(True, 9000, 120, 60)),
            ({"sense": 1, "filter": 1, "sink": 1}, _item_logs(False, 6000, 60, 6))]
    outputs = outputs or [_item_output(), _item_output()]
    return app, profile.from_logs(app, dev, runs, 100.0, 0.05, 0.55,
                                  profile.measured_text(dev, runs), {"filter": 0}, outputs)


def test_fit_recovers_the_cost_per_item_and_per_unit_of_size():
    app, prof = _item_profile()
    w = prof.workloads["filter"]
    assert w.base == {"arm7": pytest.approx(9000), "msp430": pytest.approx(6000)}
    assert w.per_unit == {"arm7": pytest.approx(120), "msp430": pytest.approx(60)}
    assert w.samples == {"arm7": 5, "msp430": 5}
    # the statistics of the window: one item per period, mean size 26
    assert w.per_period == pytest.approx(1.0) and w.mean_size == pytest.approx(26.0)
    again = profile.parse(profile.write(prof), "p.toml", app)
    assert again.workloads["filter"].base == pytest.approx(w.base, rel=1e-4)
    assert again.workloads["filter"].per_unit == pytest.approx(w.per_unit, rel=1e-3)


def test_fit_line_through_noisy_samples_is_least_squares():
    a, b = profile.fit_linear([(0, 1.0), (1, 2.5), (1, 3.5), (2, 5.5), (2, 4.5), (3, 7.0)])
    assert (a, b) == (pytest.approx(1.0), pytest.approx(2.0))
    with pytest.raises(profile.ProfileError, match="do not vary"):
        profile.fit_linear([(5, 1.0), (5, 2.0)])


def test_fit_refuses_handlers_and_sizes_that_do_not_pair():
    with pytest.raises(profile.ProfileError, match="5 handlers end an item but the output "
                                                   "gives 3 sizes"):
        _item_profile([_item_output()[:3], _item_output()])


def test_prediction_takes_the_workload_statistics_of_its_input():
    app, prof = _item_profile()
    t = prof.tasks["filter"]
    per_period = {k: t.messages * c for k, c in t.cycles.items()}
    # the window's own statistics change nothing
    same = profile.with_workload(prof, {"filter": (1.0, 26.0)})
    assert same.tasks["filter"].cycles == pytest.approx(t.cycles)
    # half the items, each of 100 entries: the rest of the messages as measured
    other = profile.with_workload(prof, {"filter": (0.5, 100.0)}).tasks["filter"]
    for kind, a, b in (("arm7", 9000, 120), ("msp430", 6000, 60)):
        expect = per_period[kind] - 1.0 * (a + b * 26) + 0.5 * (a + b * 100)
        assert other.messages * other.cycles[kind] == pytest.approx(expect, rel=1e-6)
    # and the planner's busy time follows
    from motetlib import planner
    dev = device.parse(DEVICE, "d.toml")
    others = {n: profile.TaskCost(n, 1.0, 0, {"msp430": 100.0}) for n in ("sense", "sink")}
    prof = dataclasses.replace(prof, tasks={**prof.tasks, **others})
    p = planner.Problem(app, dev, profile.with_workload(prof, {"filter": (0.5, 100.0)}))
    assert p.task_busy_us("filter", 1) == pytest.approx(
        (per_period["msp430"] - 6000 - 60 * 26 + 0.5 * (6000 + 60 * 100)) / 6)
    with pytest.raises(profile.ProfileError, match="no workload for task 'sense'"):
        profile.with_workload(prof, {"sense": (1.0, 1.0)})


def test_window_statistics_count_items_inside_it():
    sizes = [(0.5, 100), (1.2, 140), (1.7, 160), (2.2, 300), (2.9, 200)]
    assert profile.workload_stats(sizes, 1.0, 3.0, 250.0) == (pytest.approx(0.5),
                                                              pytest.approx(200.0))
    assert profile.workload_stats(sizes, 3.0, 4.0, 250.0) == (0.0, 0.0)


@pytest.mark.parametrize("old, new, message", [
    ("task = \"filter\"", "task = \"nobody\"", "'task' must name a [[task]]"),
    ("port = 0\nper", "port = 3\nper", "workload of 'filter': port 3 is not an output port"),
    ("per_unit = { msp430 = 60.0 }", "per_unit = { arm7 = 60.0 }", "per_unit.arm7: task"),
    ("samples = { msp430 = 5 }", "samples = { }", "must name the same kinds"),
    ("mean_size = 26.0", "mean_size = -1", "'mean_size' = -1 is outside"),
])
def test_bad_workloads_are_refused(old, new, message):
    app = appplace.parse(APP, "chain.toml")
    text = GOOD + """
[[workload]]
task = "filter"
port = 0
per_period = 1.0
mean_size = 26.0
base = { msp430 = 6000.0 }
per_unit = { msp430 = 60.0 }
samples = { msp430 = 5 }
"""
    assert profile.parse(text, "p.toml", app).workloads["filter"].samples == {"msp430": 5}
    with pytest.raises(profile.ProfileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        profile.parse(text.replace(old, new), "p.toml", app)
