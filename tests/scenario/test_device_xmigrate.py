# SPDX-License-Identifier: MIT
"""A task migrating across instruction sets (devices/xmigrate.toml,
apps/xmigrate; docs/migration.md, "Across instruction sets"): the meter,
whose state the kernel moves in its declared layout (8-, 16- and 32-bit
fields and arrays), goes from one ATmega128 to the other, to the
Cortex-M3 and back, in both directions, while a sender on every module
sends it numbered messages and its periodic timer runs. A move to the
native module, whose firmware lacks the meter, is refused and the meter
stays where it was. One run of the device serves every test here.
"""

import re

import pytest

from device_run import DEVICES, build_device_programs, run_device

XMIG = DEVICES / "xmigrate.toml"
UNTIL_S = 0.36
METER = 0x10
SENDERS = {0x11: 0, 0x12: 1, 0x13: 2, 0x14: 3}  # pid: its module
# apps/xmigrate/xmigrate.toml: where the script sends the meter, in order;
# m0 lacks the program.
MOVES = [2, 3, 1, 0, 3, 2]
ARRIVALS = [m for m in MOVES if m != 0]
TICK_MS = 25.0
MT_OK, MT_ERR_NO_PROGRAM = 0, 12

# A module's line: "m2| [   42.016 ms] text". An emulated module's console
# is one UART: a handler that preempts a lower one in the middle of a line
# writes its own inside it, so the last stamp of a line starts its text.
STAMP = re.compile(r"\[\s*(\d+\.\d{3}) ms\] ")
HANDLED = re.compile(r"meter 0x10: from 0x([0-9a-f]{2}) seq (\d+) (.+)$")
TICK = re.compile(r"meter 0x10: tick (\d+)$")
ARRIVED = re.compile(r"meter 0x10: arrived, moves (\d+) ticks (\d+) received (\d+) "
                     r"sig ([0-9a-f]{8}) last (\d+)$")
DONE = re.compile(r"mig 0x10 DONE m(\d+) err (\d+)$")


def module_text(lines):
    """(module, time_ms, text) of every module line, in output order."""
    out = []
    for line in lines:
        head = re.match(r"^m(\d+)\| ", line)
        stamps = list(STAMP.finditer(line))
        if head and stamps:
            last = stamps[-1]
            out.append((int(head.group(1)), float(last.group(1)), line[last.end():]))
    return out


@pytest.fixture(scope="module")
def run(build_dir, tmp_path_factory):
    build_device_programs(build_dir, XMIG)
    tmp = tmp_path_factory.mktemp("xmigrate")
    result = run_device(build_dir, tmp, XMIG, "--until", UNTIL_S, "--exact-clocks")
    return result, module_text(result.lines)


def of(text, regex):
    return [(mod, t, m) for mod, t, line in text for m in [regex.search(line)] if m]


def test_the_meter_moves_between_avr_and_cortex_m_both_ways(run):
    result, text = run
    arrivals = of(text, ARRIVED)
    assert [mod for mod, _, _ in arrivals] == ARRIVALS, arrivals
    assert [int(m.group(1)) for _, _, m in arrivals] == list(range(1, len(ARRIVALS) + 1))
    kinds = {m["id"] if "id" in m else int(k): m["kind"]
             for k, m in result.report["modules"].items()}
    hops = list(zip([1] + ARRIVALS, ARRIVALS))
    pairs = {(kinds[a], kinds[b]) for a, b in hops}
    assert {("avr", "avr"), ("avr", "cortex-m"), ("cortex-m", "avr")} <= pairs, hops
    # The requester (the script's module) is told each outcome.
    done = [(int(m.group(1)), int(m.group(2))) for mod, _, m in of(text, DONE) if mod == 0]
    assert done == [(d, MT_OK if d else MT_ERR_NO_PROGRAM) for d in MOVES], done


def test_no_message_is_lost_duplicated_or_reordered(run):
    result, text = run
    handled = of(text, HANDLED)
    verdicts = {m.group(3) for _, _, m in handled}
    assert verdicts == {"in order"}, [m.group(0) for _, _, m in handled if m.group(3) != "in order"]
    for pid, home in SENDERS.items():
        seqs = [int(m.group(2)) for _, _, m in handled if int(m.group(1), 16) == pid]
        assert seqs == list(range(1, len(seqs) + 1)), (hex(pid), seqs)
        assert len(seqs) >= 8, (hex(pid), seqs)  # from every module, all along
    # Every module the meter lived on handled messages from senders on
    # every kind of module.
    for where in set(ARRIVALS) | {1}:
        froms = {int(m.group(1), 16) for mod, _, m in handled if mod == where}
        assert set(SENDERS) <= froms, (where, froms)
    bus = result.report["bus"]
    assert bus["retransmissions"] == bus["rejected"] == 0, bus


def signature(handled):
    sig = 0
    for _, _, m in handled:
        sig = (sig * 31 + ((int(m.group(1), 16) << 24) ^ int(m.group(2)))) & 0xFFFFFFFF
    return sig


def test_the_state_arrives_field_for_field(run):
    """Each arrival says what the state brought: its u8 moves, u16 ticks,
    u32 count and signature of the messages handled, and the low half of
    the last number from its u16 array: each as the source left it."""
    _, text = run
    for k, (mod, t, m) in enumerate(of(text, ARRIVED)):
        before = text[:text.index(next(e for e in text if e[0] == mod and e[1] == t
                                       and ARRIVED.search(e[2])))]
        handled = of(before, HANDLED)
        ticks = of(before, TICK)
        assert int(m.group(3)) == len(handled), (k, m.group(0))
        assert int(m.group(4), 16) == signature(handled), (k, m.group(0))
        assert int(m.group(5)) == int(handled[-1][2].group(2)) & 0xFFFF
        assert int(m.group(2)) == len(ticks), (k, m.group(0))


def test_the_timer_keeps_its_period_and_loses_no_tick(run):
    """Its periodic timer went with it, with its remaining time: every
    period of the run gave one tick, none lost while it moved (six times,
    each longer than a tenth of the period) and none doubled. A tick's line
    is printed when its handler runs, behind what the meter had queued (on
    arrival: everything held back meanwhile, a few ms of printing each on
    the ATmega128), so the count is what is checked, not each line's time."""
    _, text = run
    ticks = of(text, TICK)
    numbers = [int(m.group(1)) for _, _, m in ticks]
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    started = next(t for mod, t, line in text if mod == 1 and "meter 0x10: started" in line)
    due = int((UNTIL_S * 1000 - started) // TICK_MS)  # on m1's clock, within a few ms
    assert due - 1 <= len(numbers) <= due, (len(numbers), due)
    # Its remaining time went with it: the first tick after an arrival
    # comes within a period of it (a tick due meanwhile fires on arrival).
    for mod, t, _ in of(text, ARRIVED):
        later = [tt for m, tt, _ in ticks if m == mod and tt >= t]
        assert not later or later[0] - t <= 2 * TICK_MS, (mod, t, later[:1])


def test_a_move_to_a_module_without_the_program_is_refused_and_the_task_stays(run):
    result, text = run
    # The destination says why (its log), the requester is told, the
    # source takes the task back.
    assert any("ERR MT_ERR_NO_PROGRAM" in line for mod, _, line in text if mod == 0)
    assert not any(ARRIVED.search(line) for mod, _, line in text if mod == 0)
    refused_at = next(t for mod, t, m in of(text, DONE)
                      if mod == 0 and int(m.group(2)) == MT_ERR_NO_PROGRAM)
    next_move = next(t for mod, t, line in text
                     if mod == 0 and t > refused_at and "script: 0x10 -> m3" in line)
    # It went on on m1 in between, in order, messages and ticks alike.
    between = [(mod, m) for mod, t, m in of(text, HANDLED)
               if refused_at - 10 < t < next_move - 10]
    assert between and {mod for mod, _ in between} == {1}, between
