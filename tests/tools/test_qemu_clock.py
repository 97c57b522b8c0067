# SPDX-License-Identifier: MIT
"""The Cortex-M adapter's clock (qemu_module.GuestTime): a frame the
Cortex-M3 hands over, or an answer it gives, is stamped with the virtual
time of the instruction that handed it over, its instructions times
2^shift ns plus the sleeps before them, not with QEMU's clock as qtest
reads it at the doorbell, which lags what ran since QEMU last brought it up
to date; a fence is armed on QEMU's clock, which its timer counts on."""

import io
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import qemu_module as qm  # noqa: E402

MBOX = 0x20000100
SHIFT = 4  # devices/ssl-mixed.toml: 62.5 MHz, one instruction per 16 ns


class Guest:
    """The guest as qtest sees it: words, and QEMU's 25 MHz counter as
    QEMU last brought it up to date."""

    def __init__(self):
        self.words, self.bytes, self.counter = {}, {}, 0

    def readl(self, addr):
        return self.counter if addr == qm.FPGA_COUNTER else self.words.get(addr, 0)

    def writel(self, addr, value):
        self.words[addr] = value

    def read(self, addr, n):
        return bytes(self.bytes.get(addr + i, 0) for i in range(n))

    def write(self, addr, data):
        for i, b in enumerate(data):
            self.bytes[addr + i] = b


class Hub:
    def __init__(self):
        self.sent = []

    def send(self, mtype, tick, body=b""):
        self.sent.append((mtype, tick, body))


def module(parks):
    """An adapter on the plugin's park lines `parks`, its QEMU replaced by
    Guest."""
    m = qm.Module.__new__(qm.Module)
    m.park = io.BytesIO("".join(f"{p}\n" for p in parks).encode())
    m.qt = Guest()
    m.mbox = MBOX
    m.time = qm.GuestTime(SHIFT)
    m.log, m.tapped, m.tap_lost = None, [], 0
    m.booted, m.parks_since_boot = True, 1
    m.high = m.low = m.now = 0
    m.idle_wake, m.presenting, m.arrived, m.ready = None, None, [], True
    return m


def tick_of(ns):
    return -(-ns // qm.FPGA_TICK_NS)


def test_a_frame_is_stamped_with_the_time_of_the_instruction_that_sent_it():
    """The Cortex-M3 slept until 200 us (a WFI, 1,003 instructions in),
    then ran 1,097 instructions to the doorbell with a frame to send. QEMU's
    counter still reads the wake-up there (the SSL device's doorbells lag
    0.2 to 17.5 us): stamped with it, the frame went out 17.56 us before
    the store that handed it over."""
    m = module(["P3 1000", "PW 1003", f"P{qm.PARK_DOORBELL} 2100", f"P{qm.PARK_DOORBELL} 2300"])
    assert m.wait_park() == qm.PARK_IDLE
    m.qt.counter = 5000  # 200 us: up to date right after the WFI
    assert m.wait_park() == qm.PARK_WOKE
    slept_ns = 200_000 - 1003 * 16
    assert m.time.slept_ns == slept_ns

    frame = bytes(range(16))
    m.qt.write(0x20001000, frame)
    for name, value in (("cmd", qm.CMD_SEND), ("tx_addr", 0x20001000), ("tx_len", len(frame))):
        m.qt.writel(MBOX + qm.OFF[name], value)
    assert m.wait_park() == qm.PARK_DOORBELL  # QEMU's counter still at 5000
    hub = Hub()
    m.doorbell(hub)
    sent_at = tick_of(slept_ns + 2100 * 16)
    assert hub.sent == [("T", sent_at, frame)]
    assert sent_at - m.qt.counter == 439  # 17.56 us after QEMU's reading

    # The verdict on a frame received, 200 instructions on: its own time.
    m.presenting = (qm.EV_RX, 0, b"")
    m.qt.writel(MBOX + qm.OFF["cmd"], qm.CMD_RX_DONE)
    m.qt.writel(MBOX + qm.OFF["arg"], 3)
    assert m.wait_park() == qm.PARK_DOORBELL
    m.doorbell(hub)
    assert hub.sent[-1] == ("R", tick_of(slept_ns + 2300 * 16), b"\x03")


def test_a_fence_is_armed_on_the_clock_its_timer_counts_on():
    """The dual timer counts from QEMU's clock, however it lags the park,
    and QEMU brings the clock up to date before the timer falls due: the
    one-shot is the grant less QEMU's reading, and the interrupt comes at
    the grant. Armed from the park's exact time it came early by the lag."""
    m = module(["P3 1000", "PW 1003", f"P{qm.PARK_DOORBELL} 2100"])
    m.wait_park()
    m.qt.counter = 5000
    m.wait_park()
    m.wait_park()
    assert m.now == 5439
    m.fence(6000)
    assert m.qt.words[qm.DUAL2] == 1000
    assert m.qt.words[qm.DUAL2 + 8] == qm.DUAL_ONESHOT_IE_EN


def test_a_wfi_that_did_not_sleep_moves_no_time():
    """An interrupt already pending: the WFI returns at once, and QEMU's
    counter there may lag the instructions run (it was not brought up to
    date): no sleep is read from it, and time stays the instructions'."""
    m = module(["PW 5000", f"P{qm.PARK_DOORBELL} 5100"])
    m.qt.counter = 1000  # 40 us, behind the 5,000 instructions' 80 us
    assert m.wait_park() == qm.PARK_WOKE
    assert m.time.slept_ns == 0
    assert m.now == tick_of(5000 * 16)
    m.wait_park()
    assert m.now == tick_of(5100 * 16)
