# SPDX-License-Identifier: MIT
"""`motet plan` (tools/motetlib/planner.py): a tiny instance solved on
paper, deadlines that change the answer, an infeasible one with its
explanation, pinned tasks, RAM, and the SSL application on the five-module
devices and the two-module device, with the checked-in profile."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import appc_text, appplace, device, plan_report, planner, profile  # noqa: E402

pytest.importorskip("scipy.optimize", reason="`motet setup` installs scipy")

# Two processors in the paper's roles: p fast and efficient but costly to
# wake (E_W = 500 uJ, T_W = 1 ms), q slow with free standby. No bus CPU
# cost; the wire takes 12 B / 12 MB/s + 2 slots of 0.5 us = 2 us.
DEVICE = """
[device]
program = "apps/pingpong/pingpong"
[bus]
bandwidth = 12000000
slot_us = 0.5
nj_per_byte = 0
nj_per_frame = 0
[processor.p]
mhz = 100
cpi = 1
active_mw = 100
idle_mw = 50
standby_mw = 0
transition_us = 1000
transition_uj = 500
ram_bytes = 1000000
[processor.q]
mhz = 10
cpi = 1
active_mw = 5
idle_mw = 5
standby_mw = 0
transition_us = 0
transition_uj = 0
ram_bytes = 1000
[[module]]
id = 0
name = "big"
processor = "p"
[[module]]
id = 1
name = "small"
processor = "q"
"""

APP = """# SPDX-License-Identifier: MIT
[app]
name = "tiny"
[programs]
sense = 1
work = 2
[[task]]
name = "sense"
program = "sense"
priority = 1
module = 1
routes = ["work:0"]
[[task]]
name = "work"
program = "work"
priority = 1
module = 1
movable = true
"""

# Per 1000 ms period: sense 10,000 cycles (1 ms on q), work 1,000,000
# cycles (10 ms on p, 100 ms on q).
PROFILE = """
[profile]
app = "tiny"
period_ms = 1000
[measured]
p = "by hand"
q = "by hand"
[[task]]
name = "sense"
messages = 1
ram_bytes = 100
cycles = { q = 10000 }
[[task]]
name = "work"
messages = 1
ram_bytes = WORK_RAM
cycles = { p = 1000000, q = 1000000 }
[[route]]
from = "sense"
port = 0
messages = 1
bytes = 12
"""


def problem(deadline_ms=None, pins=None, work_ram=200, period_ms=None, device_text=DEVICE):
    app = appplace.parse(APP, "tiny.toml")
    dev = device.parse(device_text, "tiny-device.toml")
    prof = profile.parse(PROFILE.replace("WORK_RAM", str(work_ram)), "tiny.profile.toml", app)
    deadlines = {"work": deadline_ms} if deadline_ms else None
    return planner.Problem(app, dev, prof, period_ms, deadlines, pins)


def solved(p):
    sol = planner.solve(p)
    assert sol is not None
    fig = planner.evaluate(p, sol.where, sol.standby)
    # the MILP's objective is the evaluated energy of its answer
    assert sol.objective == pytest.approx(fig.total_uj, rel=1e-9, abs=1e-6)
    assert planner.violations(p, sol.where, fig) == []
    return sol, fig


# On paper (energies in uJ per period, latencies in ms):
# work on q: q busy 101 ms: 5 mW * 101 ms = 505, standby free; p unused,
#            asleep for nothing: 505 in all. Latency: q's 101 ms.
# work on p: p busy 10 ms: 1000, then standby 0 + E_W 500 (T_be = 500 uJ /
#            50 mW = 10 ms < 990 ms of slack); q 1 ms: 5. 1505 in all.
#            Latency 1 + 10 + wake 1 + wire 0.002 = 12.002 ms; if p idles
#            instead (50 mW * 990 ms = 49500): 11.002 ms for 50505.

def test_without_a_deadline_the_slow_processor_wins():
    sol, fig = solved(problem())
    assert sol.where == {"sense": 1, "work": 1}
    assert fig.total_uj == pytest.approx(505.0)
    assert fig.latency_us[0] == pytest.approx(101_000)
    assert sol.standby[1]


def test_a_deadline_below_the_slow_latency_moves_the_work():
    sol, fig = solved(problem(deadline_ms=50))
    assert sol.where == {"sense": 1, "work": 0}
    assert fig.total_uj == pytest.approx(1505.0)
    assert sol.standby[0] and fig.energy_uj[0] == pytest.approx(1500.0)
    assert fig.latency_us[0] == pytest.approx(12_002)


def test_a_deadline_inside_the_wake_up_keeps_the_fast_processor_idle():
    sol, fig = solved(problem(deadline_ms=11.5))
    assert sol.where == {"sense": 1, "work": 0}
    assert not sol.standby[0]
    assert fig.total_uj == pytest.approx(50505.0)
    assert fig.latency_us[0] == pytest.approx(11_002)


def test_an_impossible_deadline_is_explained_with_the_shortest_latency():
    p = problem(deadline_ms=10)
    assert planner.solve(p) is None
    lines = plan_report.explain_infeasible(p)
    assert len(lines) == 1
    assert "chain sense -> work: deadline 10 ms" in lines[0]
    assert "shortest latency any placement reaches is 11.0 ms" in lines[0]
    assert "work m0" in lines[0]


def test_pinned_tasks_stay_and_say_so():
    sol, fig = solved(problem(pins={"work": 0}))
    assert sol.where["work"] == 0 and fig.total_uj == pytest.approx(1505.0)
    why = plan_report.why(problem(pins={"work": 0}), sol.where, fig)
    assert why == {"sense": "pinned (not movable)", "work": "pinned (--pin)"}


def test_a_pin_against_a_deadline_is_infeasible_for_ram_and_cpu_reasons_too():
    p = problem(deadline_ms=50, pins={"work": 1})
    assert planner.solve(p) is None
    assert "shortest latency any placement reaches is 101.0 ms" in \
        plan_report.explain_infeasible(p)[0]
    p = problem(pins={"work": 1}, work_ram=5000)  # q has 1000 B
    assert planner.solve(p) is None
    text = "\n".join(plan_report.explain_infeasible(p))
    assert "no placement fits the modules' RAM and CPU" in text
    assert "task work (5000 B) fits no module it may run on alone" in text


def test_ram_decides_and_the_reason_is_given():
    p = problem(work_ram=5000)
    sol, fig = solved(p)
    assert sol.where["work"] == 0
    assert plan_report.why(p, sol.where, fig)["work"] == \
        "alone elsewhere: m1: m1 RAM 5100 B > 1000 B"
    p = problem()
    sol, fig = solved(p)
    assert plan_report.why(p, sol.where, fig)["work"] == \
        "alone elsewhere: m0: +1000.0 uJ per period"


def test_a_shorter_period_changes_the_answer_as_the_papers_regions_do():
    # Period 40 ms: q would be busy 101 ms > 40 ms, so p; its slack 29 ms is
    # still above T_be = 10 ms, so standby.
    sol, fig = solved(problem(period_ms=40))
    assert sol.where["work"] == 0 and sol.standby[0]


SSL_APP = ROOT / "apps" / "ssl" / "ssl_device.toml"
SSL_PROFILE = ROOT / "apps" / "ssl" / "ssl_device.profile.toml"


def ssl_problem(dev_name, pins=None, deadlines=None, assume_instructions=False):
    app = appplace.load(SSL_APP)
    prof = profile.load(SSL_PROFILE, app)
    return planner.Problem(app, device.load(ROOT / "devices" / dev_name), prof, None,
                           deadlines, pins, assume_instructions=assume_instructions)


def test_ssl_on_the_papers_device_beats_figure_8_within_its_deadline():
    p = ssl_problem("ssl-device.toml", deadlines={"radio": 200})
    sol, fig = solved(p)
    given = {t.name: t.module for t in p.app.tasks}
    assert planner.violations(p, given) == []
    assert fig.total_uj <= planner.evaluate(p, given).total_uj
    assert sol.where["ht"] == 1  # 16 KB of tables: only the compute module has the RAM
    for t in p.app.tasks:
        if not t.movable:
            assert sol.where[t.name] == t.module
    assert all(fig.latency_us[i] <= 200_000 for i, ch in enumerate(p.chains)
               if ch.deadline_us)


FIVE_PINS = {"radio": 0, "mic0": 1, "mic1": 2, "mic2": 3, "mic3": 4, "temp": 4}
TWO_PINS = {"radio": 0, "mic0": 1, "mic1": 1, "mic2": 1, "mic3": 1, "temp": 1}


def test_a_pinned_task_never_measured_on_its_kind_is_refused_not_guessed():
    # the radio was measured on the msp430 only; pinned to the five-module
    # device's arm7 module, no count is carried over unless asked for
    with pytest.raises(planner.PlanError, match=r"task 'radio' has no cycles for its module 0 "
                       r"\(arm7, pinned: --pin\) \(measured: msp430\)"):
        ssl_problem("five-module.toml", FIVE_PINS, {"radio": 200})


def test_ssl_on_the_five_module_device():
    p = ssl_problem("five-module.toml", FIVE_PINS, {"radio": 200}, assume_instructions=True)
    sol, fig = solved(p)
    assert sol.where["ht"] == 0 and p.converted == {"radio": ("msp430", "arm7")}
    text = "\n".join(plan_report.report(p, sol))
    assert "WARNING, not measured (--assume-instructions)" in text
    assert "radio (msp430 -> arm7)" in text


def test_ssl_on_the_two_module_device_moves_ffts_for_a_short_deadline():
    # the four FFTs in series on the one sensing module: no placement
    # keeping them there meets 200 ms
    kept = dict(TWO_PINS, fft0=1, fft1=1, fft2=1, fft3=1)
    p = ssl_problem("two-module.toml", kept, {"radio": 200}, True)
    assert planner.solve(p) is None
    lines = plan_report.explain_infeasible(p)
    assert len(lines) == 4 and all("deadline 200 ms" in line for line in lines)
    sol, fig = solved(ssl_problem("two-module.toml", kept, {"radio": 250}, True))
    assert sol.where["ht"] == 0
    # movable, they go to the compute module, and 200 ms is met
    p = ssl_problem("two-module.toml", TWO_PINS, {"radio": 200}, True)
    sol, fig = solved(p)
    assert [sol.where[f"fft{c}"] for c in range(4)] == [0, 0, 0, 0]
    assert all(fig.latency_us[i] <= 200_000 for i, ch in enumerate(p.chains) if ch.deadline_us)


def test_the_command_writes_a_description_appc_compiles(tmp_path):
    out = tmp_path / "placed.toml"
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "motet"), "plan", str(SSL_APP),
                          str(ROOT / "devices" / "ssl-device.toml"), "--deadline", "radio=200",
                          "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "Why each task is where it is:" in res.stdout
    assert "ht on m1: alone elsewhere: m2: m2 RAM" in res.stdout
    assert appc_text.compile_file(out)
    assert "# Placed by: ./motet plan" in out.read_text()


@pytest.mark.parametrize("args, message", [
    (["--deadline", "radio"], "--deadline 'radio': expected TASK=MS"),
    (["--deadline", "nobody=5"], "--deadline: 'nobody' is not a task of"),
    (["--deadline", "radio=-5"], "must be above 0"),
    (["--pin", "ht=9"], "task 'ht' is pinned (--pin) to module 9, which"),
    (["--pin", "ht=x"], "'x' is not a number"),
    (["--max-util", "2"], "--max-util 2: must be above 0 and at most 1"),
    (["--profile", "/nonexistent.toml"], "cannot read /nonexistent.toml"),
    # Ignored without a word before; a traceback after the whole report.
    (["--kinds", "arm7,msp430"], "--kinds arm7,msp430: it chooses the kinds of --regions, which "
     "is not given"),
    (["--regions", "/nonexistent/r.png"], "cannot write /nonexistent/r.png: No such file or "
     "directory"),
])
def test_bad_arguments_get_one_line(args, message):
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "motet"), "plan", str(SSL_APP),
                          str(ROOT / "devices" / "ssl-device.toml"), *args],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2
    assert message in res.stderr and res.stderr.count("\n") == 1


@pytest.mark.parametrize("case", ["no profile", "profile not UTF-8", "no description"])
def test_a_file_plan_cannot_read_is_named_once_in_words(tmp_path, case):
    """Python's own words were printed ("[Errno 2] No such file or
    directory: '...'", "'utf-8' codec can't decode byte 0xff in position
    5"), or the path twice; now the file once, and the line and column of
    a byte that is not UTF-8."""
    missing = tmp_path / "none.toml"
    latin = tmp_path / "latin.profile.toml"
    latin.write_bytes(b'x = "\xff"\n')
    app, more, says = {
        "no profile": (SSL_APP, ["--profile", missing],
                       f"cannot read {missing}: No such file or directory"),
        "profile not UTF-8": (SSL_APP, ["--profile", latin],
                              f"{latin}: line 1, column 6: byte 0xff is not UTF-8 text; a "
                              "profile is TOML, which is UTF-8"),
        "no description": (missing, [], f"cannot read {missing}: No such file or directory"),
    }[case]
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "motet"), "plan", str(app),
                          str(ROOT / "devices" / "ssl-device.toml"), *map(str, more)],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2
    assert res.stderr == f"plan: error: {says}\n"


def test_the_regions_follow_the_appendix_lines():
    from motetlib import energy, regions
    p, q = energy.PROCESSORS["arm7"], energy.PROCESSORS["msp430"]
    fns, e = regions.lines(p, q)
    # e: the ARM7's wake-up energy against what its better MIPJ saves per MI
    assert e == pytest.approx(100e-6 / (1 / q.mipj - 1 / p.mipj))
    assert regions.best(p, q, 0.5 * e, 1.0) == "q"  # above c, left of e
    assert regions.best(p, q, 2 * e, 1.0) == "p"  # above c, right of e
    slow = 2 * e / q.mips  # line b for L = 2e: below it only p is fast enough
    assert regions.best(p, q, 2 * e, 0.9 * slow) == "p"
    assert regions.best(p, q, 2 * e, 0.9 * fns["a"](2 * e)) is None  # below a
    assert fns["c"](1.0) == pytest.approx(1 / p.mips + p.breakeven_s)
    # q's standby and wake-up are near zero (the appendix's assumption), so
    # just left of e, well above c, both energies are nearly equal
    just = regions.energy_j(q, p, 0.99 * e, 1.0) - regions.energy_j(p, q, 0.99 * e, 1.0)
    assert abs(just) < 0.02 * regions.energy_j(q, p, 0.99 * e, 1.0)


def test_the_regions_check_and_plot_of_the_ssl_plan(tmp_path):
    pytest.importorskip("matplotlib", reason="`motet setup` installs matplotlib")
    from motetlib import regions
    p = ssl_problem("ssl-device.toml", deadlines={"radio": 250})
    sol, _ = solved(p)
    fast, slow = regions.choose_kinds(p)
    assert (fast.name, slow.name) == ("arm7", "msp430")
    lines = regions.check(p, sol, fast, slow)
    ht = next(line for line in lines if line.lstrip().startswith("ht "))
    assert "region: arm7" in ht and "plan: arm7" in ht and ht.endswith("agrees")
    mic = next(line for line in lines if line.lstrip().startswith("mic0 "))
    assert "region: msp430" in mic and mic.endswith("pinned")
    png = tmp_path / "regions.png"
    regions.draw(p, sol, fast, slow, png, "test")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(regions.RegionError, match="needs two processor kinds"):
        regions.choose_kinds(p, ["arm7"])


MCAST_APP = """# SPDX-License-Identifier: MIT
[app]
name = "fan"
[programs]
src = 1
leaf = 2
[[task]]
name = "src"
program = "src"
priority = 1
module = 1
routes = ["@both", "a:1"]
[[task]]
name = "a"
program = "leaf"
priority = 1
movable = true
[[task]]
name = "b"
program = "leaf"
priority = 1
movable = true
[[group]]
name = "both"
members = ["a:0", "b:0"]
"""

MCAST_PROFILE = """
[profile]
app = "fan"
period_ms = 100
[measured]
p = "by hand"
q = "by hand"
[[task]]
name = "src"
messages = 1
ram_bytes = 0
cycles = { q = 1000 }
[[task]]
name = "a"
messages = 2
ram_bytes = 0
cycles = { p = 100, q = 100 }
[[task]]
name = "b"
messages = 1
ram_bytes = 0
cycles = { p = 100, q = 100 }
[[route]]
from = "src"
port = 0
messages = 1
bytes = 100
[[route]]
from = "src"
port = 1
messages = 1
bytes = 50
"""


@pytest.mark.parametrize("a, b", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_bus_frames_are_counted_as_the_bus_sends_them(a, b):
    # One multicast frame from src whatever the members; one frame received
    # per module with members elsewhere; the unicast src -> a when a moves.
    text = DEVICE.replace("ram_bytes = 1000\n", "ram_bytes = 1000\n").replace(
        "processor = \"p\"\n", "processor = \"p\"\nbus_cycles_per_frame = 1000\n"
        "bus_cycles_per_byte = 10\n").replace(
        "processor = \"q\"\n", "processor = \"q\"\nbus_cycles_per_frame = 1000\n"
        "bus_cycles_per_byte = 10\n").replace("nj_per_frame = 0", "nj_per_frame = 1000")
    dev = device.parse(text, "fan-device.toml")
    app = appplace.parse(MCAST_APP, "fan.toml")
    prof = profile.parse(MCAST_PROFILE, "fan.profile.toml", app)
    p = planner.Problem(app, dev, prof, pins={"a": a, "b": b})
    sol = planner.solve(p)
    fig = planner.evaluate(p, sol.where, sol.standby)
    assert sol.objective == pytest.approx(fig.total_uj, rel=1e-9)
    mcast = 1000 + 100 * 10  # cycles per frame of the multicast, 100 B
    uni = 1000 + 50 * 10  # the unicast to a, 50 B
    remote = [m for m in (a, b) if m != 1]
    src_cycles = 1000 + (mcast if remote else 0) + (uni if a != 1 else 0)
    m0_cycles = 100 * (2 * (a == 0) + (b == 0)) + (mcast if remote else 0) + \
        (uni if a == 0 else 0)
    assert fig.busy_us[1] == pytest.approx((src_cycles + 100 * (2 * (a == 1) + (b == 1))) / 10)
    assert fig.busy_us[0] == pytest.approx(m0_cycles / 100)
    assert fig.wire_uj == pytest.approx(((1 if remote else 0) + (a == 0)) * 1.0)


def test_the_benchmark_section_compares_with_figure_8():
    from motetlib import bench_planner
    text = bench_planner.render()
    rows = [line for line in text.splitlines() if line.startswith("| 2")]
    assert len(rows) == len(bench_planner.CASES)
    for row in rows:  # the plan never costs more than figure 8 under the same model
        energy, fig8 = (float(c) for c in row.split("|")[4:6])
        assert energy <= fig8


# The appendix charges standby as P_S for the rest less the transition,
# plus E_W: T_be = (E_W - P_S T_W) / (P_I - P_S). With P_S = 10 mW on p:
# T_be = (500 - 10) / 40 = 12.25 ms. A 22.4 ms period leaves p 12.4 ms
# after its 10 ms of work: standby 10 * (12.4 - 1) + 500 = 614 uJ beats
# idle 50 * 12.4 = 620 uJ (charging P_S over the transition too, 624,
# would pick idle, against line c).
def test_standby_is_charged_as_the_appendix_does_at_its_breakeven_time():
    p = problem(pins={"work": 0}, period_ms=22.4, device_text=DEVICE.replace(
        "standby_mw = 0\ntransition_us = 1000", "standby_mw = 10\ntransition_us = 1000"))
    assert p.spec[0].processor.breakeven_s == pytest.approx(12.25e-3)
    sol, fig = solved(p)
    assert sol.standby[0]
    assert fig.energy_uj[0] == pytest.approx(1000 + 614)


def test_standby_needs_the_rest_of_the_period_to_cover_the_transition():
    # p takes 995 ms to go to standby and back; after 10 ms of work only
    # 990 ms remain, so it idles: 1000 + 50 * 990 = 50500 uJ.
    p = problem(pins={"work": 0}, device_text=DEVICE.replace("transition_us = 1000",
                                                             "transition_us = 995000"))
    sol, fig = solved(p)
    assert not sol.standby[0] and not fig.standby[0]
    assert fig.energy_uj[0] == pytest.approx(50500)


def test_the_regions_switch_to_standby_at_line_c():
    from motetlib import energy, regions
    p, q = energy.PROCESSORS["arm7"], energy.PROCESSORS["msp430"]
    fns, _ = regions.lines(p, q)
    l_mi = 0.5
    d_s = fns["c"](l_mi) + 20e-6  # just above c: p rests in standby
    slack = d_s - l_mi / p.mips
    idle = l_mi / p.mipj + p.idle_mw * 1e-3 * slack + q.standby_mw * 1e-3 * d_s
    assert regions.energy_j(p, q, l_mi, d_s) < idle
    d_s = fns["c"](l_mi) - 20e-6  # just below: it idles
    slack = d_s - l_mi / p.mips
    idle = l_mi / p.mipj + p.idle_mw * 1e-3 * slack + q.standby_mw * 1e-3 * d_s
    assert regions.energy_j(p, q, l_mi, d_s) == pytest.approx(idle)


def _random_instance(rng):
    """Five tasks on three modules (p, q, q): t0 fixed on m0 sends to a
    multicast group and to one task; the rest a random forward graph with
    random priorities, costs, RAM and frame sizes, bus CPU costs on, and
    p's round trip to standby short or most of the 100 ms period."""
    tasks = [f"t{i}" for i in range(5)]
    members = rng.sample(tasks[1:], 2)
    routes = {t: [] for t in tasks}
    routes["t0"] = ["@g", f"{rng.choice(tasks[1:])}:1"]
    for i in range(1, 5):
        for j in range(i + 1, 5):
            if rng.random() < 0.4:
                routes[tasks[i]].append(f"{tasks[j]}:1")
    app = ["[app]", 'name = "rnd"', "[programs]", "prog = 1"]
    for i, t in enumerate(tasks):
        app += ["[[task]]", f'name = "{t}"', 'program = "prog"',
                f"priority = {rng.randint(1, 3)}", "module = 0",
                f"movable = {'false' if i == 0 else 'true'}",
                f"routes = [{', '.join(repr(r).replace(chr(39), chr(34)) for r in routes[t])}]"]
    app += ["[[group]]", 'name = "g"', f'members = ["{members[0]}:0", "{members[1]}:0"]']
    prof = ["[profile]", 'app = "rnd"', "period_ms = 100", "[measured]", 'p = "x"', 'q = "x"']
    for t in tasks:
        fast = rng.randint(10_000, 400_000)
        prof += ["[[task]]", f'name = "{t}"', f"messages = {rng.randint(1, 3)}",
                 f"ram_bytes = {rng.randint(100, 600)}",
                 f"cycles = {{ p = {fast}, q = {fast * rng.randint(1, 4) // 3} }}"]
    for t in tasks:
        for port in range(len(routes[t])):
            prof += ["[[route]]", f'from = "{t}"', f"port = {port}",
                     f"messages = {rng.randint(1, 3)}", f"bytes = {rng.randint(12, 400)}"]
    dev = DEVICE.replace("nj_per_frame = 0", "nj_per_frame = 5000").replace(
        "transition_us = 1000", f"transition_us = {rng.choice((1000, 60_000, 95_000))}").replace(
        'processor = "q"\n', 'processor = "q"\nbus_cycles_per_frame = 300\n'
        'bus_cycles_per_byte = 20\n[[module]]\nid = 2\nname = "small2"\nprocessor = "q"\n'
        'bus_cycles_per_frame = 300\nbus_cycles_per_byte = 20\n')
    app = appplace.parse("\n".join(app) + "\n", "rnd.toml")
    return app, device.parse(dev, "rnd-device.toml"), profile.parse(
        "\n".join(prof) + "\n", "rnd.profile.toml", app)


def _least_by_enumeration(p):
    """The least energy over every placement and idle/standby choice that
    violates nothing, by evaluate() alone; None if there is none."""
    import itertools
    best = None
    movable = [t for t in p.tasks if t not in p.pins]
    for mods in itertools.product(p.modules, repeat=len(movable)):
        where = dict(p.pins, **dict(zip(movable, mods)))
        busy = planner.evaluate(p, where).busy_us
        used = set(where.values())
        for rest in itertools.product((False, True), repeat=len(p.modules)):
            standby = dict(zip(p.modules, rest))
            if any(standby[m] and m in used and busy[m] + p.spec[m].processor.transition_us >
                   p.period_us for m in p.modules):
                continue
            fig = planner.evaluate(p, where, standby)
            if not planner.violations(p, where, fig) and (best is None or
                                                          fig.total_uj < best):
                best = fig.total_uj
    return best


@pytest.mark.parametrize("seed", range(12))
def test_the_milp_finds_what_enumerating_every_placement_finds(seed):
    # The linearisation (route products, multicast frames, big-M rows for
    # standby and for the modules a chain visits) must neither cut off a
    # placement nor admit one that evaluate() finds late or too full.
    import random
    rng = random.Random(seed)
    app, dev, prof = _random_instance(rng)
    free = planner.Problem(app, dev, prof)
    sinks = [i for i, ch in enumerate(free.chains)]
    lat = [planner.evaluate(free, dict(free.pins, **{t: m for t in free.tasks if t not in
                                                      free.pins})).latency_us[i]
           for m in free.modules for i in sinks]
    deadline_ms = rng.uniform(min(lat), max(lat)) / 1e3
    target = free.chains[rng.choice(sinks)].tasks[-1]
    p = planner.Problem(app, dev, prof, deadlines={target: deadline_ms},
                        max_util=rng.choice((0.3, 1.0)))
    want = _least_by_enumeration(p)
    sol = planner.solve(p)
    if want is None:
        assert sol is None
        return
    assert sol is not None
    fig = planner.evaluate(p, sol.where, sol.standby)
    assert planner.violations(p, sol.where, fig) == []
    assert sol.objective == pytest.approx(fig.total_uj, rel=1e-6)
    assert fig.total_uj == pytest.approx(want, rel=1e-6)


def test_a_task_that_fits_only_an_empty_module_is_named():
    # q has 1000 B with sense (100 B) pinned to it, p only 300 B: work
    # (950 B) would fit q alone, but not beside sense.
    p = problem(work_ram=950, device_text=DEVICE.replace("ram_bytes = 1000000",
                                                         "ram_bytes = 300"))
    assert planner.solve(p) is None
    text = "\n".join(plan_report.explain_infeasible(p))
    assert "task work (950 B) fits no module it may run on beside what is pinned there" in text


def test_tasks_that_fit_one_by_one_but_not_together_are_summed_up():
    # Two movable tasks of 950 B, two modules of 1000 B, sense's 100 B on
    # q: each fits p, and the RAM free in all (1900 B) is what they need,
    # but neither fits beside the other on p nor beside sense on q.
    text = DEVICE.replace("ram_bytes = 1000000", "ram_bytes = 1000")
    app = appplace.parse(APP.replace('module = 1\nroutes = ["work:0"]',
                                     'module = 1\nroutes = ["work:0", "more:0"]') +
                         '[[task]]\nname = "more"\nprogram = "work"\npriority = 1\n'
                         'module = 1\nmovable = true\n', "tiny.toml")
    prof = profile.parse(PROFILE.replace("WORK_RAM", "950") + '[[task]]\nname = "more"\n'
                         'messages = 1\nram_bytes = 950\ncycles = { p = 1000, q = 1000 }\n'
                         '[[route]]\nfrom = "sense"\nport = 1\nmessages = 1\nbytes = 12\n',
                         "tiny.profile.toml", app)
    p = planner.Problem(app, device.parse(text, "tiny-device.toml"), prof)
    assert planner.solve(p) is None
    lines = plan_report.explain_infeasible(p)
    assert "the movable tasks need 1900 B of RAM in all; 1900 B are free beside what is " \
        "pinned, but no split of them fits" in "\n".join(lines)


@pytest.mark.parametrize("header", ["[[ task ]]  # the work", "[[\"task\"]]", "[[ 'task' ]]"])
def test_the_placed_description_is_rewritten_whatever_the_headers_spacing(header):
    # TOML allows spaces and a quoted key in a table header; the rewrite
    # must find the task there as appc does.
    app = appplace.parse(APP.replace('[[task]]\nname = "work"', f'{header}\nname = "work"'),
                         "tiny.toml")
    text = appplace.placed(app, {"work": 0})
    assert {t.name: t.module for t in appplace.parse(text).tasks} == {"sense": 1, "work": 0}


def test_a_period_other_than_the_profiles_is_flagged_in_the_report():
    # Messages per period are the profile's: a task on its own timer (temp
    # at 4 Hz) sends as many per period at 200 ms as at the profile's 250.
    p = problem(period_ms=500)
    sol, _ = solved(p)
    text = "\n".join(plan_report.report(p, sol))
    assert "period 500 ms, but the profile's messages per period are of 1000 ms" in text
    same = problem()
    assert "but the profile's" not in "\n".join(plan_report.report(same, planner.solve(same)))


LONE_DEVICE = """
[device]
program = "apps/pingpong/pingpong"
[processor.arm7]
transition_uj = 400
[[module]]
id = 0
processor = "arm7"
[[module]]
id = 1
processor = "msp430"
"""

LONE_APP = """# SPDX-License-Identifier: MIT
[app]
name = "lone"
[programs]
fft = 1
[[task]]
name = "fft"
program = "fft"
priority = 1
module = 0
movable = true
"""


def lone_profile(period_ms):
    """The lone job's profile: L = 0.5 MI, at the CPIs of the two kinds."""
    return f"""
[profile]
app = "lone"
period_ms = {period_ms}
[measured]
arm7 = "by hand"
msp430 = "by hand"
[[task]]
name = "fft"
messages = 1
ram_bytes = 0
cycles = {{ arm7 = {0.5e6 * 1.9}, msp430 = {0.5e6 * 2.5} }}
"""


@pytest.mark.parametrize("period_ms, kind", [(200, "arm7"), (250, "msp430")])
def test_a_lone_job_goes_where_the_papers_regions_say(period_ms, kind):
    # The paper's switch, on a lone job of L = 0.5 MI with an ARM7 whose
    # round trip costs 400 uJ (line e at 0.69 MI): at 200 ms the MSP430
    # (208 ms) is too slow, at 250 ms it is left of e and wins. The plan,
    # its energy and the region's agree.
    from motetlib import regions
    dev = device.parse(LONE_DEVICE, "lone-device.toml")
    app = appplace.parse(LONE_APP, "lone.toml")
    prof = profile.parse(lone_profile(period_ms), "lone.profile.toml", app)
    p = planner.Problem(app, dev, prof, deadlines={"fft": period_ms})
    sol, fig = solved(p)
    fast, slow = regions.choose_kinds(p)
    assert p.kind(sol.where["fft"]) == kind
    assert {"p": fast.name, "q": slow.name}[regions.best(fast, slow, 0.5, period_ms / 1e3)] \
        == kind
    run, rest = (fast, slow) if kind == fast.name else (slow, fast)
    assert fig.total_uj == pytest.approx(regions.energy_j(run, rest, 0.5, period_ms / 1e3) * 1e6)


PRIO_APP = """# SPDX-License-Identifier: MIT
[app]
name = "prio"
[programs]
prog = 1
[[task]]
name = "a"
program = "prog"
priority = 3
module = 0
routes = ["b:0"]
[[task]]
name = "b"
program = "prog"
priority = 1
module = 1
[[task]]
name = "c"
program = "prog"
priority = 2
module = 0
"""

PRIO_PROFILE = """
[profile]
app = "prio"
period_ms = 1000
[measured]
p = "by hand"
q = "by hand"
[[task]]
name = "a"
messages = 1
ram_bytes = 0
cycles = { p = 100000 }
[[task]]
name = "b"
messages = 1
ram_bytes = 0
cycles = { p = 10000, q = 10000 }
[[task]]
name = "c"
messages = 1
ram_bytes = 0
cycles = { p = 5000000 }
[[route]]
from = "a"
port = 0
messages = 1
bytes = 12
"""


def test_a_task_preempts_a_chain_only_where_it_outranks_the_chains_task_there():
    # Chain a (priority 3, m0) -> b (1, m1); c (2) runs 50 ms on m0. c
    # outranks b, but b is not on m0, and a outranks c: on m0 the chain
    # waits for nothing of c's. Latency: a 1 ms, b 1 ms, the wire 2 us,
    # and m0's 1 ms wake-up if it rests in standby (it does: 3.002 ms).
    app = appplace.parse(PRIO_APP, "prio.toml")
    prof = profile.parse(PRIO_PROFILE, "prio.profile.toml", app)
    p = planner.Problem(app, device.parse(DEVICE, "tiny-device.toml"), prof,
                        deadlines={"b": 10})
    sol, fig = solved(p)
    assert fig.latency_us[0] == pytest.approx(3_002)
    # with b on m0 too, c outranks it there and delays the chain
    p = planner.Problem(app, device.parse(DEVICE, "tiny-device.toml"), prof,
                        pins={"b": 0})
    assert planner.evaluate(p, {"a": 0, "b": 0, "c": 0}).latency_us[0] == \
        pytest.approx(1_000 + 100 + 50_000 + 1_000)


def test_why_a_task_stays_weighs_the_move_with_the_rest_that_keeps_it_in_time():
    # p takes 115 ms to wake: work on p is in time (11 ms, deadline 120 ms)
    # only if p idles, for 1000 + 50 * 990 + 5 = 50505 uJ against q's 505.
    # Moving it is allowed and costs energy: not "a late chain".
    p = problem(deadline_ms=120, device_text=DEVICE.replace("transition_us = 1000",
                                                            "transition_us = 115000"))
    sol, fig = solved(p)
    assert sol.where["work"] == 1
    assert plan_report.why(p, sol.where, fig)["work"] == \
        "alone elsewhere: m0: +50000.0 uJ per period"


def test_the_mixed_device_is_predicted_from_its_chips_own_cycles():
    """apps/ssl/ssl_device.mixed.profile.toml: each task measured on the
    chip it runs on (the emulators' event logs); the planner predicts the
    description's placement from those figures alone, carries no count to
    another kind, and says that a task measured on one chip only cannot
    move to the other."""
    app = appplace.load(SSL_APP)
    dev = device.load(ROOT / "devices" / "ssl-mixed.toml")
    prof = profile.load(ROOT / "apps" / "ssl" / "ssl_device.mixed.profile.toml", app)
    assert set(prof.measured) == {"atmega128", "cortex-m3"}
    given = {t.name: t.module for t in app.tasks}
    p = planner.Problem(app, dev, prof, pins=given)
    assert p.converted == {}
    fig = planner.evaluate(p, given)
    for m in dev.modules:
        mine = [t for t in p.tasks if given[t] == m.id]
        tasks_us = sum(prof.tasks[t].messages * prof.tasks[t].cycles[m.processor.name]
                       for t in mine) / m.processor.mhz
        # At least the tasks (summed in another order: a rounding's slack) and
        # the bus driver's frames.
        assert tasks_us * (1 - 1e-9) <= fig.busy_us[m.id] < tasks_us * 1.05
    free = planner.Problem(app, dev, prof)
    assert free.not_allowed["fft0"][1] == "no cortex-m3 cycles in the profile"
    assert free.not_allowed["ht"][2] == "no atmega128 cycles in the profile"
