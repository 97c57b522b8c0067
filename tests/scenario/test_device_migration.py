# SPDX-License-Identifier: MIT
"""Task migration on the five-module device (docs/migration.md), through
`motet run devices/migrate.toml` (apps/migrate): every module prints each
migration phase with whether the task is live there, and the sink prints
every message it handles with its module, each sender's number and a
verdict. Exact clocks make the modules' times comparable.

What is checked, as the issue states it:
- 100 migrations back and forth under steady streams (unicast from the two
  ends and a bystander, multicast from another): no message lost,
  duplicated or reordered, per sender; the task live on at most one module
  at every instant, exactly one after every migration, and it handles
  messages only where it is live; its periodic timer keeps counting.
- a timer that falls due during a migration fires once, on the destination;
- a destination that runs out of memory, or is killed mid-migration, leaves
  the task running at the source; so does one that dies (killed, or
  stopped) after it attached the task and before it started it (between
  ATTACHED and END): the source takes the task back;
- a task that is not movable is refused with an error, as is an unknown pid;
- a multicast that goes out while the source sends its RESULT again (a
  module rejected the first copy, the destination took it and joined the
  group) reaches the task once.
"""

import collections
import re

import pytest

from device_run import DEVICES, LINE, events, run_device

DEVICE = DEVICES / "migrate.toml"
SINK_PID = 0x10
SINK = re.compile(r"sink 0x([0-9a-f]+) at m(\d+): from 0x([0-9a-f]+) seq (\d+) (.+)$")
TICK = re.compile(r"sink 0x[0-9a-f]+ at m(\d+): tick (\d+)$")
TIMER1 = re.compile(r"sink 0x[0-9a-f]+ at m(\d+): timer 1 fired")
STARTED = re.compile(r"sink 0x[0-9a-f]+ at m(\d+): started")
MIG = re.compile(r"mig 0x([0-9a-f]+) (\w+) m(\d+) (MT_\w+) live=(\d)")
ASKED = re.compile(r"(?:script|mover): 0x([0-9a-f]+) -> m(\d+) asked: (MT_\w+)")
REFUSED_SEND = re.compile(r"sender 0x[0-9a-f]+: seq \d+ refused")
SENT_ALL = re.compile(r"sender 0x([0-9a-f]+): sent (\d+), (\d+) refusals")

KILL_AT_S = 0.16  # inside the migration the script asks for at 150 ms
EV_MIGRATE_RESUMED = 6  # migrate_phase_t MIG_RESUMED


def lines(run):
    """(module, time_ms, text) of every module line, in output order."""
    out = []
    for line in run.lines:
        m = LINE.match(line)
        if m:
            out.append((int(m.group(1)), float(m.group(2)), m.group(3)))
    return out


def phases(run, pid=SINK_PID):
    """(time_ms, module, phase, other, err, live) of pid's migration lines."""
    out = []
    for mod, t, text in lines(run):
        m = MIG.search(text)
        if m and int(m.group(1), 16) == pid:
            out.append((t, mod, m.group(2), int(m.group(3)), m.group(4), m.group(5) == "1"))
    return out


def received(run):
    """{sender pid: [seq, ...]} in the order the sink handled them, and the
    verdicts that were not "in order"."""
    got, bad = collections.defaultdict(list), []
    for _, _, text in lines(run):
        m = SINK.search(text)
        if m:
            got[int(m.group(3), 16)].append(int(m.group(4)))
            if m.group(5) != "in order":
                bad.append(text)
    return got, bad


def assert_nothing_lost_duplicated_or_reordered(run):
    got, bad = received(run)
    assert not bad, bad[:5]
    for sender, seqs in got.items():
        assert seqs == list(range(1, len(seqs) + 1)), (hex(sender), seqs[:50])
    return got


def assert_one_live_copy(run):
    """At most one module has the sink live at any instant; each module
    handles the sink's messages and timers only while it is live there."""
    live = {}
    for mod, t, text in lines(run):  # each module's lines in its own order
        if STARTED.search(text):
            live[mod] = True
        m = MIG.search(text)
        if m and int(m.group(1), 16) == SINK_PID:
            live[mod] = m.group(5) == "1"
        if SINK.search(text) or TICK.search(text) or TIMER1.search(text):
            assert live.get(mod), f"m{mod} ran the sink while it was not live there: {text}"
    # Across modules, by time: apply every liveness change in time order.
    changes = sorted((t, mod, lv) for t, mod, _, _, _, lv in phases(run))
    first = next(mod for mod, _, text in lines(run) if STARTED.search(text))
    state = {first: True}
    for t, mod, lv in changes:
        state[mod] = lv
        assert sum(state.values()) <= 1, f"two live copies at {t} ms: {state}"
    return state


# ---- 100 migrations under steady streams ----

@pytest.fixture(scope="module")
def hundred(build_dir, tmp_path_factory):
    return run_device(build_dir, tmp_path_factory.mktemp("hundred"), DEVICE, "--until", 2.1,
                      "--exact-clocks")


def test_hundred_migrations_each_complete_between_the_two_modules(hundred):
    ph = phases(hundred)
    live = [(t, mod, other) for t, mod, p, other, _, lv in ph if p == "LIVE"]
    assert len(live) == 100
    assert [mod for _, mod, _ in live] == [2, 1] * 50
    assert all(other == (3 - mod) for _, mod, other in live)  # from the other end
    assert not [p for p in ph if p[2] in ("RESUMED", "DISCARDED", "KILLED", "REFUSED")]
    done = collections.Counter((mod, err) for _, mod, p, _, err, _ in ph if p == "DONE")
    assert done == {(mod, "MT_OK"): 100 for mod in range(5)}  # every module rerouted
    asked = [m.group(3) for _, _, text in lines(hundred) if (m := ASKED.search(text))]
    assert asked == ["MT_OK"] * 100


def test_hundred_migrations_lose_duplicate_and_reorder_nothing(hundred):
    got = assert_nothing_lost_duplicated_or_reordered(hundred)
    # s0 every 1 ms, s1 1.3 ms, s2 1.7 ms, s3 (multicast) 2.1 ms, for ~2.1 s.
    assert set(got) == {0x11, 0x12, 0x13, 0x14}
    for sender, period_ms in ((0x11, 1.0), (0x12, 1.3), (0x13, 1.7), (0x14, 2.1)):
        expected = 2100 / period_ms
        assert len(got[sender]) >= expected - 10, (hex(sender), len(got[sender]), expected)
    assert not [t for _, _, t in lines(hundred) if REFUSED_SEND.search(t)]


def assert_no_frame_dropped_as_malformed(run, modules):
    """The protocol's own frames pass every check of the receivers (docs/bus.md)."""
    assert {mod: run.kernel(mod)["rx_bad"] for mod in modules} == {mod: 0 for mod in modules}


def test_hundred_migrations_send_no_frame_a_receiver_drops(hundred):
    assert_no_frame_dropped_as_malformed(hundred, range(5))


def test_hundred_migrations_exactly_one_live_copy_at_every_step(hundred):
    assert_one_live_copy(hundred)
    # After each migration (its LIVE line), exactly one module has it live:
    # the destination; the source said LEFT (not live) before.
    ph = phases(hundred)
    state = {1: True}
    for t, mod, p, _, _, lv in sorted(ph, key=lambda x: x[0]):
        state[mod] = lv
        if p == "LIVE":
            assert [m for m, v in state.items() if v] == [mod], (t, state)


def test_timers_keep_counting_across_migrations(hundred):
    ticks = [(mod, int(n)) for mod, _, text in lines(hundred) if (m := TICK.search(text))
             for n in [m.group(2)]]
    numbers = [n for _, n in ticks]
    assert numbers == list(range(1, len(numbers) + 1))  # none lost, none twice
    assert len(numbers) >= 205  # every 10 ms for 2.1 s, moved 100 times
    assert {mod for mod, _ in ticks} == {1, 2}


# ---- the other cases, and a destination killed mid-migration ----

@pytest.fixture(scope="module")
def cases(build_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cases")
    run = run_device(build_dir, tmp, DEVICE, "--until", 0.35, "--exact-clocks",
                     "--fault", f"kill:4@{KILL_AT_S}", extra=["--app", "migrate_cases"],
                     log_dir=tmp / "logs")
    run.log_dir = tmp / "logs"
    return run


def asked(run):
    return {int(m.group(1), 16): m.group(3) for _, _, text in lines(run)
            if (m := ASKED.search(text)) and int(m.group(1), 16) != SINK_PID}


def test_messages_survive_every_case_in_order(cases):
    got = assert_nothing_lost_duplicated_or_reordered(cases)
    assert len(got[0x11]) >= 340 and len(got[0x12]) >= 225
    assert_one_live_copy(cases)
    assert_no_frame_dropped_as_malformed(cases, range(4))  # m4 is killed


def test_task_that_is_not_movable_is_refused_with_an_error(cases):
    # Local to the requester: refused at once by migrate_request().
    assert asked(cases)[0x17] == "MT_ERR_NOT_MOVABLE"
    # Remote: the request travels to the task's module, which refuses it
    # and tells the requester (m0).
    refusals = [(mod, err) for _, mod, p, _, err, lv in phases(cases, 0x13) if p == "REFUSED"]
    assert refusals == [(1, "MT_ERR_NOT_MOVABLE"), (0, "MT_ERR_NOT_MOVABLE")]
    assert not [p for p in phases(cases, 0x13) if p[2] in ("FROZEN", "LIVE")]


def test_unknown_task_is_refused(cases):
    assert asked(cases)[0x7E] == "MT_ERR_NO_TASK"


def migration_from(cases, t_ms):
    """The sink's phases of the migration asked for at t_ms."""
    later = sorted(p for p in phases(cases) if p[0] >= t_ms)
    nxt = [p[0] for p in later if p[2] == "REQUESTED" and p[0] > t_ms]
    end = nxt[0] if nxt else float("inf")
    return [p for p in later if p[0] < end]


def test_destination_out_of_memory_leaves_the_task_at_the_source(cases):
    ph = migration_from(cases, 20)
    outcome = [(mod, p, err) for _, mod, p, _, err, _ in ph if p in ("RESUMED", "LIVE", "DISCARDED")]
    assert (1, "RESUMED", "MT_ERR_NO_MEM") in outcome
    assert not [o for o in outcome if o[1] == "LIVE"]
    # The hog left too little heap on m3; the sink went on handling at m1.
    assert any("hog at m3" in text for _, _, text in lines(cases))
    at_m1 = [t for mod, t, text in lines(cases) if SINK.search(text) and 35 < t < 60]
    assert at_m1 and all(mod == 1 for mod, t, text in lines(cases)
                         if SINK.search(text) and 35 < t < 60)


def test_timer_due_during_migration_fires_once_on_the_destination(cases):
    fired = [(mod, t) for mod, t, text in lines(cases) if TIMER1.search(text)]
    assert len(fired) == 1 and fired[0][0] == 2, fired
    started = next(t for _, t, text in lines(cases) if STARTED.search(text))
    due = started + 64.0  # timer 1 of the sink's init
    ph = migration_from(cases, 60)
    frozen = next(t for t, mod, p, *_ in ph if p == "FROZEN")
    live = next(t for t, mod, p, *_ in ph if p == "LIVE")
    assert frozen < due < live  # it fell due while the task was on its way
    assert fired[0][1] >= live


def test_destination_killed_mid_migration_leaves_the_task_running_at_the_source(cases):
    assert cases.module(4)["state"] == "killed"
    ph = migration_from(cases, 150)
    frozen = next(t for t, mod, p, *_ in ph if p == "FROZEN")
    assert frozen < KILL_AT_S * 1000  # the migration had begun ...
    assert not [p for p in ph if p[2] in ("ATTACHED", "LEFT", "LIVE")]  # ... and not ended
    resumed = [(t, mod, err) for t, mod, p, _, err, lv in ph if p == "RESUMED"]
    assert len(resumed) == 1
    t_resumed, mod, err = resumed[0]
    assert (mod, err) == (2, "MT_ERR_BUS_DOWN")
    # What happened: the next image chunk for m4 was unreachable, so the
    # source resumed the task; the hub says which frame.
    assert cases.hub_notes("m4 killed") and cases.hub_notes("DATA m2->m4")
    # The task kept running at the source, and the device kept working:
    # the next migration, to m1, succeeds.
    at_m2 = [t for mod, t, text in lines(cases)
             if SINK.search(text) and t_resumed < t < 250 and mod == 2]
    assert len(at_m2) > 100
    assert [p for p in migration_from(cases, 250) if p[2] == "LIVE"][0][1] == 1
    # The source's kernel logged it: EV_MIGRATE (phase RESUMED, module 4).
    resumed_ev = [e for e in events(cases.log_dir, 2)
                  if e.type == "MIGRATE" and e.pid == SINK_PID and e.arg == (EV_MIGRATE_RESUMED << 8 | 4)]
    assert resumed_ev


def test_bystander_that_stops_answering_is_waited_for_once(build_dir, tmp_path):
    """m3 is stopped mid-run (SIGSTOP: it never answers again). The next
    migration waits for its reply, asks it again by unicast, which fails,
    and goes on; later ones from the same source do not wait for it (each
    of the two sources learns it once). Nothing is lost."""
    run = run_device(build_dir, tmp_path, DEVICE, "--until", 0.8, "--exact-clocks",
                     "--fault", "freeze:3@0.45")
    assert_nothing_lost_duplicated_or_reordered(run)
    assert_one_live_copy(run)
    ph = phases(run)
    frozen = sorted(t for t, _, p, *_ in ph if p == "FROZEN")
    live = sorted(t for t, _, p, *_ in ph if p == "LIVE")
    assert len(live) >= 35 and len(live) >= len(frozen) - 1
    took = [b - a for a, b in zip(frozen, live)]
    slow = [d for d in took if d > 10]
    assert len(slow) == 2 and all(20 <= d <= 45 for d in slow), took  # one per source


# ---- a destination that dies between ATTACHED and END ----

MIG_END = (0xF2, 15)  # the migrator's pid and END's port (MIG_MSG_END = PORT_0 + 7)


@pytest.fixture(scope="module", params=["kill", "freeze"])
def window(request, build_dir, tmp_path_factory):
    """apps/migrate/migrate_window.toml: the sink moves from m1 to m2 at
    50 ms, and m2 is killed (or stopped) as the source's END reaches it,
    before it has it; at 150 ms the sink moves to m3."""
    tmp = tmp_path_factory.mktemp(f"window-{request.param}")
    run = run_device(build_dir, tmp, DEVICE, "--until", 0.25, "--exact-clocks",
                     "--fault", f"{request.param}:2@frame:{MIG_END[0]:#x}:{MIG_END[1]}",
                     extra=["--app", "migrate_window"], log_dir=tmp / "logs")
    run.log_dir = tmp / "logs"
    run.fault = request.param
    return run


def test_destination_dying_before_end_gives_the_task_back_to_the_source(window):
    ph = migration_from(window, 50)
    attached = [(t, mod) for t, mod, p, *_ in ph if p == "ATTACHED"]
    assert [mod for _, mod in attached] == [2]  # the copy existed, frozen, on m2 ...
    assert not [p for p in ph if p[2] in ("LIVE", "LEFT")]  # ... and never started
    trigger = window.hub_notes("fault trigger")
    assert len(trigger) == 1 and "DATA m1->m2" in trigger[0]  # END, on its way to m2
    resumed = [(t, mod, err) for t, mod, p, _, err, _ in ph if p == "RESUMED"]
    assert len(resumed) == 1 and resumed[0][1:] == (1, "MT_ERR_BUS_DOWN")
    assert resumed[0][0] > attached[0][0]
    # The second outcome: every other module routes back to the source.
    done = {mod: err for _, mod, p, _, err, _ in ph if p == "DONE"}
    assert done == {0: "MT_ERR_BUS_DOWN", 1: "MT_ERR_BUS_DOWN", 3: "MT_ERR_BUS_DOWN",
                    4: "MT_ERR_BUS_DOWN"}
    assert window.module(2)["state"] == ("killed" if window.fault == "kill" else "frozen")
    # The source's kernel logged it: EV_MIGRATE (phase RESUMED, module 2).
    assert [e for e in events(window.log_dir, 1)
            if e.type == "MIGRATE" and e.pid == SINK_PID and e.arg == (EV_MIGRATE_RESUMED << 8 | 2)]


def test_destination_dying_before_end_loses_and_duplicates_nothing(window):
    got = assert_nothing_lost_duplicated_or_reordered(window)
    assert_one_live_copy(window)
    assert_no_frame_dropped_as_malformed(window, (0, 1, 3, 4))  # m2 dies
    # Every message of the live senders, before, during and after the failed
    # move, was handled once (the last ones may still be on their way):
    # s0 on a bystander every 1 ms, s1 on the source every 1.3 ms, s3's
    # multicasts every 2.1 ms, for 250 ms.
    for sender, period_ms in ((0x11, 1.0), (0x12, 1.3), (0x14, 2.1)):
        expected = int((250 - 1) / period_ms)
        assert len(got[sender]) >= expected - 3, (hex(sender), len(got[sender]), expected)
    # The sender on m2 died with its module: what it had sent before the
    # freeze reached the sink, in order; what it held back died with it.
    assert 25 <= len(got[0x13]) <= 30
    # Messages reached the sink where it was live: m1 until the second move,
    # m3 after it; and some were handled at m1 right after the resume that
    # had been forwarded to m2 (m1 kept their copies).
    t_resumed = next(t for t, mod, p, *_ in migration_from(window, 50) if p == "RESUMED")
    handled = [(mod, t) for mod, t, text in lines(window) if SINK.search(text)]
    assert {mod for mod, t in handled if t < 150} == {1}
    assert {mod for mod, t in handled if t > 180} == {3}
    assert len([t for mod, t in handled if t_resumed <= t < t_resumed + 1.0]) > 20


def test_destination_dying_before_end_timer_fires_once_at_the_source(window):
    fired = [(mod, t) for mod, t, text in lines(window) if TIMER1.search(text)]
    started = next(t for _, t, text in lines(window) if STARTED.search(text))
    ph = migration_from(window, 50)
    frozen = next(t for t, mod, p, *_ in ph if p == "FROZEN")
    resumed = next(t for t, mod, p, *_ in ph if p == "RESUMED")
    assert frozen < started + 60.0 < resumed  # due while the task was on its way
    assert len(fired) == 1 and fired[0][0] == 1 and fired[0][1] >= resumed, fired
    ticks = [int(m.group(2)) for _, _, text in lines(window) if (m := TICK.search(text))]
    # Numbered without a gap or a repeat; a periodic timer keeps its phase
    # across a move rather than catching up (about 25 ms each here).
    assert ticks == list(range(1, len(ticks) + 1)) and len(ticks) >= 15


def test_device_keeps_migrating_after_a_destination_died_before_end(window):
    ph = migration_from(window, 150)
    assert [(mod, p) for _, mod, p, *_ in ph if p in ("LIVE", "LEFT")] in (
        [(1, "LEFT"), (3, "LIVE")], [(3, "LIVE"), (1, "LEFT")])
    done = collections.Counter((mod, err) for _, mod, p, _, err, _ in ph if p == "DONE")
    assert done == {(mod, "MT_OK"): 1 for mod in (0, 1, 3, 4)}


# ---- a destination that dies after the decision: at a FORWARD, or after END ----

MIG_FORWARD, MIG_CONFIRM = 14, 19  # MIG_MSG_FORWARD, MIG_MSG_CONFIRM (PORT_0 + 6, + 11)


@pytest.fixture(scope="module", params=[MIG_FORWARD, MIG_CONFIRM])
def after_decision(request, build_dir, tmp_path_factory):
    """apps/migrate/migrate_window.toml with m2 killed as the source's first
    FORWARD reaches it (RESULT ok is out, END is not through), or as its
    CONFIRM does (END was through: the task ran on m2)."""
    tmp = tmp_path_factory.mktemp(f"after-decision-{request.param}")
    run = run_device(build_dir, tmp, DEVICE, "--until", 0.25, "--exact-clocks",
                     "--fault", f"kill:2@frame:{MIG_END[0]:#x}:{request.param}",
                     extra=["--app", "migrate_window"])
    run.port = request.param
    return run


def test_destination_dying_after_the_decision_leaves_no_module_waiting(after_decision):
    """The source waits after RESULT ok only for the bus's verdicts on its
    own frames: a dead destination makes them definite. At a FORWARD the
    task is taken back at the source and every module routes back to it;
    after END it died with m2, and every send to it is refused with an
    error (MT_ERR_BUS_LOST: its link to m2 gave up), as is the next
    migration asked of it. Either way the run ends with every other module
    running, nothing duplicated or reordered, and one live copy at most."""
    run = after_decision
    assert_nothing_lost_duplicated_or_reordered(run)
    assert_one_live_copy(run)
    ph = migration_from(run, 50)
    later = migration_from(run, 150)
    done = {mod: err for _, mod, p, _, err, _ in ph if p == "DONE"}
    refusals = collections.Counter(
        (mod, m.group(1)) for mod, _, text in lines(run)
        if (m := re.search(r"sender 0x[0-9a-f]+: seq \d+ refused: (MT_\w+)", text)))
    if run.port == MIG_FORWARD:
        assert [(mod, err) for _, mod, p, _, err, _ in ph if p == "RESUMED"] == [
            (1, "MT_ERR_BUS_DOWN")]
        assert done == {mod: "MT_ERR_BUS_DOWN" for mod in (0, 1, 3, 4)}
        assert [(mod, p) for _, mod, p, *_ in later if p in ("LIVE", "LEFT")] in (
            [(1, "LEFT"), (3, "LIVE")], [(3, "LIVE"), (1, "LEFT")])
        assert not refusals
    else:
        assert [mod for _, mod, p, *_ in ph if p == "LIVE"] == [2]
        assert done == {mod: "MT_OK" for mod in (0, 1, 3, 4)}
        assert set(refusals) == {(0, "MT_ERR_BUS_LOST"), (1, "MT_ERR_BUS_LOST")}
        assert all(n > 20 for n in refusals.values()), refusals
        assert [(mod, p, err) for _, mod, p, _, err, _ in later] == [
            (4, "REQUESTED", "MT_OK"), (4, "REFUSED", "MT_ERR_BUS_DOWN")]
    for mod in (0, 1, 3, 4):
        assert run.module(mod)["state"] == "running"
    assert run.module(2)["state"] == "killed"


# ---- bursts larger than the message pool while the task moves ----

@pytest.fixture(scope="module")
def burst(build_dir, tmp_path_factory):
    """apps/migrate/migrate_burst.toml: three senders (a bystander from just
    before the freeze, another from after it, one on the source) each send
    300 messages, one every 20 us, while the sink moves from m1 to m2; the
    message pool holds 96 on each module."""
    tmp = tmp_path_factory.mktemp("burst")
    return run_device(build_dir, tmp, DEVICE, "--until", 0.3, "--exact-clocks",
                      extra=["--app", "migrate_burst"])


def test_burst_beyond_the_pool_during_a_migration_loses_nothing(burst):
    got = assert_nothing_lost_duplicated_or_reordered(burst)
    assert {s: len(v) for s, v in got.items()} == {0x11: 300, 0x12: 300, 0x13: 300}
    assert_one_live_copy(burst)
    ph = phases(burst)
    assert [(mod, p) for _, mod, p, *_ in ph if p in ("LIVE", "RESUMED")] == [(2, "LIVE")]
    # Every sender was told to wait, and each of its sends was refused,
    # not dropped: it tried again with the same number until it went.
    done = {int(m.group(1), 16): (int(m.group(2)), int(m.group(3)))
            for _, _, text in lines(burst) if (m := SENT_ALL.search(text))}
    assert set(done) == {0x11, 0x12, 0x13}
    assert all(sent == 300 and refused > 0 for sent, refused in done.values()), done
    frozen = next(t for t, _, p, *_ in ph if p == "FROZEN")
    live = next(t for t, _, p, *_ in ph if p == "LIVE")
    refused_during = {mod for mod, t, text in lines(burst)
                      if REFUSED_SEND.search(text) and frozen < t < live}
    assert refused_during == {0, 1, 3}  # held back at bystanders, held at the source
    # No module dropped a frame it could not store.
    for mod in range(5):
        assert burst.kernel(mod)["rx_undeliverable"] == 0, mod


# ---- a multicast while the outcome is sent again ----

RECAST_MIGRATIONS = 31  # the mover's requests before --until
HANDS = re.compile(r"\] m(\d+) hands frame #(\d+) \((\w+) m\d+->(\w+), (\d+) B\)")
REJECTED = re.compile(r"\[\s*([\d.]+) s\] m0 rejected frame #(\d+) \(MCAST m(\d+)->all, (\d+) B\)")
RESULT_FRAME_B = 17  # a RESULT frame: 12 bytes of header and CRC, 5 of payload


@pytest.fixture(scope="module")
def recast(build_dir, tmp_path_factory):
    """apps/migrate/migrate_recast.toml: the sink moves between m1 and m2
    every 10 ms (asked at 11.16 ms, 21.16 ms, ...), m0 multicasts to its
    group every 250 us, and the hub corrupts the first frame m0 receives
    1.5 ms after each request: the source's RESULT, which it then sends
    again."""
    faults = []
    for i in range(RECAST_MIGRATIONS):
        faults += ["--fault", f"corrupt:0@{0.01266 + i * 0.01:.5f}"]
    return run_device(build_dir, tmp_path_factory.mktemp("recast"), DEVICE, "--until", 0.32,
                      "--trace", *faults, extra=["--app", "migrate_recast"])


def test_result_sent_again_with_a_multicast_in_between(recast):
    """The case is there: each migration's RESULT was rejected by m0 (the
    only frame m0 rejected between the destination attaching the task and
    starting it), and before the source sent it again m0 multicast to the
    sink's group, which the destination had joined at its copy."""
    attached = [t / 1000 for t, _, p, _, _, _ in phases(recast) if p == "ATTACHED"]
    live = [t / 1000 for t, _, p, _, _, _ in phases(recast) if p == "LIVE"]
    hands = [(i, m) for i, m in enumerate(HANDS.search(line) for line in recast.lines) if m]
    rejected = [REJECTED.search(line) for line in recast.lines]
    rejected = [m for m in rejected if m]
    assert len(rejected) == RECAST_MIGRATIONS, rejected
    between = 0
    for m in rejected:
        t, frame, src = float(m.group(1)), m.group(2), m.group(3)
        assert int(m.group(4)) == RESULT_FRAME_B
        assert any(a <= t <= b for a, b in zip(attached, live)), (t, attached, live)
        # From the RESULT's first copy to its second, in the order the
        # frames were handed to the bus.
        first = next(k for k, (_, h) in enumerate(hands) if h.group(2) == frame)
        again = next(k for k in range(first + 1, len(hands)) if hands[k][1].group(1) == src)
        if any(h.group(1) == "0" and h.group(3) == "MCAST" for _, h in hands[first + 1:again]):
            between += 1
    assert between == RECAST_MIGRATIONS


def test_multicast_during_a_result_sent_again_arrives_once(recast):
    got = assert_nothing_lost_duplicated_or_reordered(recast)
    assert len(got[0x11]) > 1000  # m0's multicasts, every one once
    done = [p for p in phases(recast) if p[2] == "DONE" and p[5]]
    assert len(done) == RECAST_MIGRATIONS
    assert_one_live_copy(recast)


# ---- four migrations to one module at once ----

def test_four_migrations_to_one_module_at_once_all_arrive_one_after_another(build_dir, tmp_path):
    """Four sinks on modules 1 to 4 are asked, in the same millisecond, to
    move to module 0 (apps/migrate/migrate_four.toml). Every module has two
    migration slots, so the device cannot run the four at once: those a
    module has no slot for are put off before anything moves (the module
    answers FREEZE MT_ERR_FULL, the source resumes the task, which goes on
    handling its sender's messages) and asked again, until all four run on
    module 0. No message is lost, duplicated or reordered; none is refused
    for good."""
    run = run_device(build_dir, tmp_path, DEVICE, "--until", 0.5, "--exact-clocks",
                     extra=["--app", "migrate_four"])
    sinks = range(0x10, 0x14)
    for pid, home in zip(sinks, range(1, 5)):
        ph = phases(run, pid)
        live = [(mod, other) for _, mod, p, other, _, _ in ph if p == "LIVE"]
        assert live == [(0, home)], (hex(pid), ph)
        assert not [p for p in ph if p[2] in ("REFUSED", "KILLED")], ph
        # A destination that had a slot for a try put off drops what it had.
        assert all(p[4] == "MT_ERR_FULL" for p in ph if p[2] == "DISCARDED"), ph
        # DONE only for the migration that went, on every module.
        done = sorted((mod, err) for _, mod, p, _, err, _ in ph if p == "DONE")
        assert done == [(mod, "MT_OK") for mod in range(5)], (hex(pid), done)
    put_off = [(p[1], p[4]) for pid in sinks for p in phases(run, pid) if p[2] == "RESUMED"]
    assert put_off and all(err == "MT_ERR_FULL" for _, err in put_off), put_off
    # Each sink handled its sender's numbers once and in order, before,
    # between and after the tries, wherever it was.
    got = collections.defaultdict(list)
    for mod, t, text in lines(run):
        m = SINK.search(text)
        if m:
            assert m.group(5) == "in order", text
            got[(int(m.group(1), 16), int(m.group(3), 16))].append(int(m.group(4)))
    assert sorted(got) == [(pid, pid + 4) for pid in sinks]
    for key, seqs in got.items():
        assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= 450, (key, seqs[:20])
    assert_no_frame_dropped_as_malformed(run, range(5))
