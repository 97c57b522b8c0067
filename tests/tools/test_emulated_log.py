# SPDX-License-Identifier: MIT
"""The event logs of emulated modules: SLOT lines (a ring slot as the chip
wrote it, tools/motetlib/eventlog.py) read as the kernel's drain would, the
Cortex-M adapter's timing of the slots its plug-in announced
(qemu_module.LogTap), and the options that ask the emulators for them."""

import io
import struct
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import device, eventlog, module_kinds, qemu_module  # noqa: E402

SEND, START, END, ALLOC, RUN, CREATE, TIMER = (
    eventlog.EVENT_TYPES.index(n) + 1
    for n in ("SEND", "START", "END", "ALLOC", "RUN", "CREATE", "TIMER"))


def slots(*rows):
    return "# a chip's log\n" + "".join(f"SLOT {t} {k} {p} {a}\n" for t, k, p, a in rows)


def test_slots_read_as_the_kernels_drain_reads_them():
    """An END slot holds the handler's result: its port comes from the
    START or RUN it closes (the newest open one of its task, those opened
    above it lost their ENDs), a failure is an ERROR too; a RUN is its SEND
    and START; times are the chip's, in fractions of a microsecond."""
    text = slots((1000, START, 0x10, 8), (1125, RUN, 0x11, 0x10 << 8 | 9),
                 (1250, ALLOC, 0x11, 40), (2000, END, 0x11, 0), (3125, END, 0x10, 5),
                 (4000, END, 0x12, 0))
    recs = eventlog.parse(text)
    assert [(r.time_us, r.type, r.pid, r.arg) for r in recs] == [
        (1.0, "START", 0x10, 8),
        (1.125, "SEND", 0x10, 0x11 << 8 | 9), (1.125, "START", 0x11, 9),
        (1.25, "ALLOC", 0x11, 40),
        (2.0, "END", 0x11, 9),
        (3.125, "END", 0x10, 8), (3.125, "ERROR", 0x10, 5),
        (4.0, "END", 0x12, eventlog.PORT_UNKNOWN)]  # its START never seen
    nested = eventlog.parse(slots((0, START, 0x10, 8), (10, START, 0x11, 8),
                                  (20, END, 0x10, 0), (30, END, 0x11, 0)))
    # 0x10's END closes it and what began above it: 0x11's END is unmatched
    assert [r.arg for r in nested if r.type == "END"] == [8, eventlog.PORT_UNKNOWN]


def test_an_expiry_start_slot_is_its_timer_send_and_start():
    """The START slot of a task timer's expiry run first at the interrupt's
    exit has START_EXPIRY in its high byte and stands for the expiry's
    TIMER (index: the port less TIMEOUT0) too, at its time: read, it is
    the records that a TIMER slot and a START slot were, so the table and
    the trace show the same expiry, timeout message and slice."""
    port = eventlog.PORT_TIMEOUT0 + 2
    merged = slots((1000, START, 0x10, eventlog.START_EXPIRY << 8 | port),
                   (3000, END, 0x10, 0))
    separate = slots((1000, TIMER, 0x10, 2), (1000, START, 0x10, port), (3000, END, 0x10, 0))
    recs = eventlog.parse(merged)
    assert [(r.time_us, r.type, r.pid, r.arg) for r in recs] == [
        (1.0, "TIMER", 0x10, 2), (1.0, "SEND", eventlog.KERNEL_PID, 0x10 << 8 | port),
        (1.0, "START", 0x10, port), (3.0, "END", 0x10, port)]
    assert [(r.time_us, r.type, r.pid, r.arg) for r in eventlog.parse(separate)] == [
        (r.time_us, r.type, r.pid, r.arg) for r in recs]
    assert eventlog.format_table(recs) == eventlog.format_table(eventlog.parse(separate))
    assert eventlog.to_chrome(recs) == eventlog.to_chrome(eventlog.parse(separate))
    # a START without the mark stays one record, its port the low byte
    assert [(r.type, r.arg) for r in eventlog.parse(slots((0, START, 0x10, port)))] == [
        ("START", port)]


def test_a_tail_reads_slots_as_they_come(tmp_path):
    path = tmp_path / "m2.log"
    tail = eventlog.Tail(path)
    path.write_text(slots((0, START, 0x10, 8)))
    assert [r.type for r in tail.new()] == ["START"]
    with open(path, "a") as f:
        f.write(f"SLOT 500 {END} 16 0\n")
    assert [(r.type, r.arg, r.time_us) for r in tail.new()] == [("END", 8, 0.5)]


@pytest.mark.parametrize("line, message", [
    ("SLOT 1 2 3", "expected 'SLOT <time_ns> <type> <pid> <arg>'"),
    ("SLOT 1 0 3 4", f"slot type 0 is not an event type (1 .. {len(eventlog.EVENT_TYPES)})"),
    ("SLOT 1 99 3 4", "slot type 99 is not an event type"),
    ("SLOT 1 2 256 4", "pid 256 does not fit in 8 bits"),
    ("SLOT 1 2 3 65536", "arg 65536 does not fit in 16 bits"),
    ("SLOT x 2 3 4", "time 'x' is not an integer"),
])
def test_a_malformed_slot_is_named_with_its_line(line, message):
    with pytest.raises(eventlog.LogFormatError, match=r"m1\.log:2: " + message.replace(
            "(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        eventlog.parse("# x\n" + line + "\n", "m1.log")


class FakeQtest:
    """The guest's ring as qtest reads it, and QEMU's 25 MHz counter."""

    def __init__(self, ring, slots):
        self.ring, self.slots, self.counter = ring, slots, 0

    def read(self, addr, n):
        i = (addr - self.ring) // qemu_module.SLOT_BYTES
        etype, pid, arg = self.slots[i]
        return struct.pack("<IBBH", 0, etype, pid, arg)[:n]

    def readl(self, addr):
        assert addr == qemu_module.FPGA_COUNTER
        return self.counter


def logged(path):
    return [(r.time_us, r.type) if isinstance(r, eventlog.Event) else ("LOST", r.count)
            for r in eventlog.read(path)]


class Parks:
    """The adapter (its QEMU replaced by FakeQtest) taking the plug-in's
    lines at each park: the slots announced, then the park."""

    def __init__(self, path, qt, entries, shift):
        self.m = qemu_module.Module.__new__(qemu_module.Module)
        self.m.qt, self.m.booted, self.m.parks_since_boot = qt, False, 0
        self.m.high = self.m.low = 0
        self.m.tapped, self.m.tap_lost = [], 0
        self.m.time = qemu_module.GuestTime(shift)
        self.m.log = qemu_module.LogTap(str(path), qt.ring,
                                        entries * qemu_module.SLOT_BYTES, self.m.time)

    def park(self, tick, count, tapped, lost, what=qemu_module.PARK_DOORBELL):
        """`tick`: QEMU's counter there (the adapter reads it only right
        after a WFI, `what` W)."""
        lines = [f"LOST {lost}"] if lost else []
        lines += [f"L {c} {slot}" for c, slot in tapped] + [f"P{what} {count}"]
        self.m.park = io.BytesIO("".join(line + "\n" for line in lines).encode())
        self.m.qt.counter = tick
        assert self.m.wait_park() == what
        self.m.booted = True

    def close(self):
        self.m.log.close()


def test_the_cortex_m_adapter_times_each_slot_by_its_instructions_and_sleeps(tmp_path):
    """A slot's time is its instructions (2^shift ns each, 16 ns here)
    plus the sleeps before it, each read at the park right after its WFI.
    A slot announced twice before a park lost its first record, unless the
    start-up code was clearing the ring."""
    path = tmp_path / "m1.log"
    ring = 0x20000000
    qt = FakeQtest(ring, {0: (START, 0x10, 8), 1: (0, 0, 0), 2: (END, 0x10, 0),
                          3: (SEND, 0x10, 0x1109), 4: (START, 0x11, 9)})
    tap = Parks(path, qt, 5, 4)
    tap.park(0, 0, [], 0, what="S")  # before the first instruction
    # boot: the start-up code clears slots 0 and 1, the kernel writes slot 0
    tap.park(1000, 2500, [(100, 0), (102, 1), (2000, 0)], 0)
    tap.park(1100, 2700, [(2600, 2)], 0)
    tap.park(1110, 2720, [], 0, what=qemu_module.PARK_IDLE)  # then the WFI
    # woke 3 instructions on (the call's return, DSB, WFI) at tick 5000:
    # 200 us - 2723 * 16 ns slept
    tap.park(5000, 2723, [], 0, what="W")
    tap.park(6000, 2800, [(2750, 3), (2760, 4), (2770, 4)], 2)
    tap.close()
    slept = 200_000 - 2723 * 16
    assert logged(path) == [
        (2000 * 16 / 1000, "START"),  # slot 1 was only cleared
        (2600 * 16 / 1000, "END"),
        ("LOST", 2),
        ((slept + 2750 * 16) / 1000, "SEND"),
        ("LOST", 1),  # slot 4's first record, overwritten before the park
        ((slept + 2770 * 16) / 1000, "START")]


def test_a_park_whose_counter_lags_does_not_move_the_records_around_it(tmp_path):
    """QEMU brings the 25 MHz counter up to the instructions run only when
    the core halts or reads a clock: at a doorbell or a fence, qtest may
    read a counter microseconds behind the park. Records are not timed from
    such readings; timed forward from one, the record after the park came
    out before the one written ahead of it (the boot of 9806983: an ALLOC
    timed after the task's CREATE, written later). A WFI that did not sleep
    (an interrupt already pending) reads no sleep, however the counter
    lags there."""
    path = tmp_path / "m1.log"
    ring = 0x20000000
    qt = FakeQtest(ring, {0: (ALLOC, 0x1D, 8), 1: (CREATE, 0x1D, 1), 2: (START, 0x1D, 8),
                          3: (END, 0x1D, 0)})
    tap = Parks(path, qt, 4, 4)
    tap.park(0, 0, [], 0, what="S")
    tap.park(26000, 65000, [], 0)  # 1,040 us, the counter in step
    tap.park(26900, 67599, [(67578, 0)], 0)  # 1,076 us: 5.6 us behind the park
    tap.park(26910, 70410, [(67681, 1)], 0)  # 50 us behind
    tap.park(28000, 70420, [], 0, what="W")  # a WFI woken at once: 6.7 us behind
    tap.park(29000, 70600, [(70500, 2), (70590, 3)], 0)
    tap.close()
    assert logged(path) == [(67578 * 16 / 1000, "ALLOC"), (67681 * 16 / 1000, "CREATE"),
                            (70500 * 16 / 1000, "START"), (70590 * 16 / 1000, "END")]


def test_the_emulators_are_asked_for_the_log_only_with_a_log_dir(tmp_path, monkeypatch):
    """motet run --log-dir: the harness gets the ring's place in the AVR
    image's data space, QEMU's adapter the ring's address and size."""
    dev = device.load(ROOT / "devices" / "ssl-mixed.toml")
    found = {"log_ring": (0x800100, 48), "log_write_offset": (0x800130, 1)}
    monkeypatch.setattr(module_kinds, "image_symbols",
                        lambda nm, image, names: {n: found[n] for n in names})
    avr, cm = dev.module(2), dev.module(1)
    for spec in (avr, cm):
        kind = module_kinds.of(spec)
        assert "--log" not in kind.argv(tmp_path, dev, spec, "S", 1, None, [])
    argv = module_kinds.of(avr).argv(tmp_path, dev, avr, "S", 1, tmp_path, [])
    assert argv[argv.index("--log") + 1] == str(tmp_path / "m2.log")
    assert "--log-ring=0x100:48:0x130" in argv
    argv = module_kinds.of(cm).argv(tmp_path, dev, cm, "S", 1, tmp_path, [])
    assert argv[argv.index("--log") + 1] == str(tmp_path / "m1.log")
    assert "--log-ring=0x800100:48" in argv


def test_an_image_without_the_log_is_refused_naming_it(tmp_path):
    image = tmp_path / "plain.elf"
    image.write_bytes(b"")
    with pytest.raises(device.DeviceError, match="plain.elf: no log_ring, log_write_offset"):
        module_kinds.image_symbols("true", image, ("log_ring", "log_write_offset"))
