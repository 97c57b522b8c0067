# SPDX-License-Identifier: MIT
"""The event logs of emulated modules: SLOT lines (a ring slot as the chip
wrote it, tools/motetlib/eventlog.py) read as the kernel's drain would, the
Cortex-M adapter's timing of the slots its plug-in announced
(qemu_module.LogTap), and the options that ask the emulators for them."""

import struct
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import device, eventlog, module_kinds, qemu_module  # noqa: E402

SEND, START, END, ALLOC, RUN = (eventlog.EVENT_TYPES.index(n) + 1
                                for n in ("SEND", "START", "END", "ALLOC", "RUN"))


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
    ("SLOT 1 0 3 4", "slot type 0 is not an event type (1 .. 19)"),
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
    """The guest's ring as qtest reads it."""

    def __init__(self, ring, slots):
        self.ring, self.slots = ring, slots

    def read(self, addr, n):
        i = (addr - self.ring) // qemu_module.SLOT_BYTES
        etype, pid, arg = self.slots[i]
        return struct.pack("<IBBH", 0, etype, pid, arg)[:n]


def test_the_cortex_m_adapter_times_each_slot_by_its_instructions(tmp_path):
    """Between two parks a slot is timed forward from the last park by the
    instructions before it (2^shift ns each), or, after a WFI (the guest
    slept, time jumped), backward from the next park. A slot announced
    twice before a park lost its first record, unless the start-up code
    was clearing the ring."""
    path = tmp_path / "m1.log"
    ring = 0x20000000
    qt = FakeQtest(ring, {0: (START, 0x10, 8), 1: (END, 0x10, 0), 2: (SEND, 0x10, 0x1109),
                          3: (START, 0x11, 9)})
    tap = qemu_module.LogTap(str(path), ring, 4 * qemu_module.SLOT_BYTES, 4)  # 16 ns
    tap.park(qt, 1000, 5000, [(4000, 1, False), (4500, 1, False)], 0,
             booting=True)  # boot: the start-up code clears the ring
    tap.park(qt, 2000, 6000, [], 0)  # 40 us, instruction 6000
    tap.park(qt, 3000, 7000, [(6100, 0, False), (6600, 1, False)], 0)
    # slept at a WFI after instruction 7050; woke and wrote slot 2 ten
    # instructions before the next park, at 200 us
    tap.park(qt, 5000, 7100, [(7090, 2, True)], 0)
    tap.park(qt, 6000, 8100, [(7200, 3, False), (7300, 3, False)], 2)
    tap.close()
    recs = eventlog.read(path)
    got = [(r.time_us, r.type) if isinstance(r, eventlog.Event) else ("LOST", r.count)
           for r in recs]
    assert got == [(40.0 - 500 * 0.016, "END"),  # before the first park: timed backward
                   (80.0 + 100 * 0.016, "START"), (80.0 + 600 * 0.016, "END"),
                   (200.0 - 10 * 0.016, "SEND"),
                   ("LOST", 2), ("LOST", 1), (200.0 + 200 * 0.016, "START")]


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
