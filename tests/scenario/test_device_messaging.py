# SPDX-License-Identifier: MIT
"""Multi-module devices in simulated time: messages between modules
(rule 8, docs/architecture.md), multicast, application loading across modules and
determinism, through `motet run` (device_run.py).

Every module prints its own time; `--exact-clocks` makes those comparable
between modules where a test needs it.
"""

import pytest

from device_run import CAST, DEVICES, MEMBER, PING, PONG, eventlog, events, run_device

TWO = DEVICES / "two-module.toml"
FIVE = DEVICES / "five-module.toml"


def contiguous(seqs):
    return seqs == list(range(1, len(seqs) + 1))


def test_cross_module_messages_arrive_complete_and_in_order(build_dir, tmp_path):
    run = run_device(build_dir, tmp_path, TWO, "--until", 1)
    pongs = [int(m.group(1)) for _, _, m in run.module_lines(PONG)]
    verdicts = {m.group(3) for _, _, m in run.module_lines(PONG)}
    pings = [int(m.group(1)) for _, _, m in run.module_lines(PING)]
    # One ping every 10 ms from ~10.5 ms on: 99 in the first second.
    assert len(pongs) == 99 and contiguous(pongs), pongs
    assert verdicts == {"in order"}
    assert contiguous(pings) and len(pings) >= 98, pings
    assert {mod for mod, _, _ in run.module_lines(PONG)} == {1}
    assert {mod for mod, _, _ in run.module_lines(PING)} == {0}
    assert run.report["bus"]["by_type"]["DATA"] >= 2 * len(pings)
    for mid in (0, 1):
        k = run.kernel(mid)
        assert k["tx_retransmits"] == k["rx_corrupt"] == k["tx_unreachable"] == 0, k


@pytest.mark.sanitize_repeat
def test_same_seed_same_output(build_dir, tmp_path):
    first = run_device(build_dir, tmp_path, FIVE, "--until", 0.2, "--seed", 5)
    second = run_device(build_dir, tmp_path, FIVE, "--until", 0.2, "--seed", 5)
    other = run_device(build_dir, tmp_path, FIVE, "--until", 0.2, "--seed", 6)
    assert first.stdout == second.stdout
    ppm = [first.module(i)["ppm"] for i in range(5)]
    assert ppm != [other.module(i)["ppm"] for i in range(5)]  # the seed draws the clocks
    assert all(abs(p) <= 20 for p in ppm)


def members_by_module_and_seq(run):
    got = {}
    for mod, _, m in run.module_lines(MEMBER):
        got.setdefault((mod, int(m.group(3))), []).append((int(m.group(2)), m.group(1), m.group(5)))
    return got


def test_multicast_reaches_every_member_in_priority_order_sent_once(build_dir, tmp_path):
    run = run_device(build_dir, tmp_path, FIVE, "--until", 0.5)
    casts = [int(m.group(1)) for _, _, m in run.module_lines(CAST)]
    assert len(casts) >= 20 and contiguous(casts)
    got = members_by_module_and_seq(run)
    # mcast.toml: the group's members per module, with their priorities.
    group = {0: [4, 1], 1: [5, 3, 2], 2: [3], 3: [6, 1], 4: [2]}
    delivered = [s for s in casts if all((mod, s) in got for mod in group)]
    assert delivered == casts[:len(delivered)] and len(delivered) >= len(casts) - 1
    for seq in delivered:
        for mod, prios in group.items():
            lines = got[(mod, seq)]
            if mod == 0:  # the caster's module also has the unicast target "near"
                lines = [x for x in lines if x[0] != 2]
            assert [p for p, _, _ in lines] == prios, (mod, seq, lines)
            assert {v for _, _, v in lines} == {"in order"}
    # Once on the bus per multicast, whatever the number of members.
    assert run.report["bus"]["by_type"]["MCAST"] in (len(casts), len(casts) - 1)
    # Each module's membership table holds its own members only: a module
    # received every multicast frame once.
    for mod in range(1, 5):
        assert run.kernel(mod)["rx_undeliverable"] == 0
    # Messages, multicasts and the description's broadcasts are all frames
    # their receivers take: none is dropped as malformed.
    assert [run.kernel(mod)["rx_bad"] for mod in range(5)] == [0] * 5


def test_initialisation_starts_after_every_module_created_its_part(build_dir, tmp_path):
    logs = tmp_path / "logs"
    run = run_device(build_dir, tmp_path, FIVE, "--until", 0.05, "--exact-clocks", log_dir=logs)
    assert run.report["bus"]["by_type"]["DESC"] == 1  # the description, broadcast once
    assert run.report["bus"]["by_type"]["CREATED"] == 5  # one outcome per module
    created, inits = [], []
    for mod in range(5):
        evs = events(logs, mod)
        app_creates = [e.time_us for e in evs if e.type == "CREATE" and 0x10 <= e.pid <= 0xEF]
        assert app_creates, f"module {mod} created no task"
        created.append(max(app_creates))
        inits.append(min(e.time_us for e in evs
                         if e.type == "START" and e.arg == 0 and 0x10 <= e.pid <= 0xEF))
    # Exact clocks: every module's times are global times.
    assert max(created) <= min(inits), (created, inits)
    # Every module created remote control blocks for the others: the caster
    # reaches "near" locally and the group on every module.
    assert len(run.module_lines(CAST)) >= 1


@pytest.mark.parametrize("app", ["pingpong", "mcast"])
def test_descriptions_load_on_every_module(build_dir, tmp_path, app):
    device = TWO if app == "pingpong" else FIVE
    run = run_device(build_dir, tmp_path, device, "--until", 0.03, extra=["--app", app])
    assert "MT_ERR" not in run.stdout
    n = len(run.report["modules"])
    assert run.report["bus"]["by_type"]["CREATED"] == n


def test_two_loaders_at_once_each_end_with_a_definite_outcome(build_dir, tmp_path):
    """Both modules load the application at their start (module 1 is given
    --loader too). Each takes part in its own load from its start, so each
    refuses the other's description (MT_ERR_STATE: its outcome of that
    load, docs/bus.md "Application loading"): both loads fail, on both
    modules, the hub says so once per load and `motet run` fails. Nothing
    is mixed: no application task runs, every task either load created is
    removed again, and each module's manager saw one description, its own."""
    device = tmp_path / "two-loaders.toml"
    device.write_text(TWO.read_text().replace("id = 1\n", 'id = 1\nargs = ["--loader"]\n'))
    logs = tmp_path / "logs"
    run = run_device(build_dir, tmp_path, device, "--until", 0.05, log_dir=logs, status=1)
    assert run.report["bus"]["by_type"]["DESC"] == 2
    assert run.report["bus"]["by_type"]["CREATED"] == 4  # each module's outcome of each load
    notes = run.hub_notes("refused the application")
    assert sorted(n.split("| ", 1)[1].split("] ", 1)[1] for n in notes) == [
        f"m{m} refused the application: MT_ERR_STATE; no module starts it" for m in (0, 1)], notes
    assert not run.module_lines(PING) and not run.module_lines(PONG)
    for mod in (0, 1):
        evs = events(logs, mod)
        app = [e for e in evs if e.type in ("CREATE", "KILL") and 0x10 <= e.pid <= 0xEF]
        created = sorted(e.pid for e in app if e.type == "CREATE")
        assert created, f"module {mod} took no part in its own load"
        assert sorted(e.pid for e in app if e.type == "KILL") == created, (mod, app)
        assert not [e for e in evs if e.type == "START" and 0x10 <= e.pid <= 0xEF]


@pytest.mark.parametrize("app, refuser, err, module, where, task", [
    ("misplaced", 0, "MT_ERR_NO_MODULE", 7, ", which this device does not have (its modules: 0, 1)",
     "ponger"),
    ("unregistered", 1, "MT_ERR_NO_PROGRAM", 1, " 'sense'", "ghost"),
])
def test_a_bad_placement_fails_the_load_on_every_module_naming_task_and_module(
        build_dir, tmp_path, app, refuser, err, module, where, task):
    """apps/pingpong/misplaced.toml puts its task 1 on module 7, which the
    device lacks; unregistered.toml gives its task 1 on module 1 a program
    no module registers. Either way no task of it ever runs anywhere, the
    hub says which task and which module, every module prints the error
    on the console as it happens, naming the task, its log has it, and
    `motet run` fails."""
    logs = tmp_path / "logs"
    run = run_device(build_dir, tmp_path, TWO, "--until", 0.1, log_dir=logs, extra=["--app", app],
                     status=1)
    notes = run.hub_notes("refused the application")
    assert notes == [n for n in notes if f"m{refuser} refused the application: {err}: task 1 "
                     f"(relative pid) on module {module}{where}; no module starts it" in n]
    assert len(notes) == 1, run.stdout
    for mod in (0, 1):
        said = [line for line in run.lines if line.startswith(f"m{mod}| ") and
                f"ERR {err} (" in line and f"the application '{app}' cannot load: task '{task}' "
                f"(relative pid 1) on module {module}" in line]
        assert len(said) == 1, run.stdout
    assert f"run: error: the application did not load (m{refuser}: {err}" in run.stdout
    assert not run.module_lines(PING) and not run.module_lines(PONG)
    code = eventlog.ERRORS.index(err)
    for mod in (0, 1):
        evs = events(logs, mod)
        assert not [e for e in evs if e.type == "START" and 0x10 <= e.pid <= 0xEF], mod
        fails = [(e.pid, e.arg) for e in evs if e.type == "APPFAIL"]
        assert fails == [(1, code << 8 | module)], (mod, fails)
        assert [e for e in evs if e.type == "ERROR" and e.arg == code], mod
