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

    def pulse_irq(self, line):
        """The NVIC latches the line's rising edge: pending until taken."""
        self.words[qm.NVIC_ISPR] = self.words.get(qm.NVIC_ISPR, 0) | 1 << line


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
    m.sleep, m.idle_wake, m.presenting, m.arrived, m.ready = qm.AWAKE, 0, None, [], True
    m.target, m.wake_armed, m.events = None, False, []
    return m


def tick_of(ns):
    return -(-ns // qm.FPGA_TICK_NS)


def test_a_frame_is_stamped_with_the_time_of_the_instruction_that_sent_it():
    """The Cortex-M3 slept until 200 us (a WFI, 1,003 instructions in),
    then ran 1,097 instructions to the doorbell with a frame to send. QEMU's
    counter still reads the wake-up there (the SSL device's doorbells lag
    0.2 to 17.5 us): stamped with it, the frame went out 17.56 us before
    the store that handed it over."""
    m = module([f"P{qm.PARK_IDLE} 1000", "PW 1003", f"P{qm.PARK_DOORBELL} 2100",
                f"P{qm.PARK_DOORBELL} 2300"])
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


def test_a_fence_is_the_first_instruction_boundary_inside_the_granted_tick():
    """The plugin parks before the instruction that would pass the fence's
    count, masked interrupts or not: at the last boundary before the
    granted tick's end, so the park's time rounded up to the tick is the
    tick (an instruction no longer than a tick), never the one after. The
    fence was a timer's interrupt, whose handler parked: held back by
    migrate_start()'s 273 instructions with interrupts off, it parked 3
    ticks past the grant (the three-kind device, seed 2)."""
    t = qm.GuestTime(SHIFT)
    t.slept_ns = 200_000 - 1003 * 16  # woke at tick 5,000 after 1,003 instructions
    for tick in range(5001, 5200):
        n = t.fence(tick)
        assert tick_of(t.ns(n)) == tick, tick  # the park's tick
        assert tick_of(t.ns(n - 1)) == tick - 1  # the boundary before: the tick before
    t0 = qm.GuestTime(0)  # one instruction a ns: the tick's start exactly
    assert t0.ns(t0.fence(535)) == 534 * qm.FPGA_TICK_NS + 1
    long = qm.GuestTime(10)  # 1,024 ns an instruction: the one across the tick ends 25 on
    n = long.fence(100)
    assert tick_of(long.ns(n - 1)) < 100 <= tick_of(long.ns(n)) <= 100 + 25


def test_a_core_asleep_past_its_fence_is_woken_at_it_on_the_clock_its_timer_counts_on():
    """Asleep, the core runs no instructions: before its WFI the adapter
    arms the dual timer's second counter at the fence. The timer counts
    from QEMU's clock, however it lags the park, and QEMU brings the clock
    up to date before the timer falls due: the one-shot is the fence less
    QEMU's reading, and the WFI ends at the fence. Right after it the
    timer is stopped and its interrupt taken back (the line's, unless the
    port's alarm raises it too)."""
    m = module([f"P{qm.PARK_IDLE} 1000", "PW 1003", f"P{qm.PARK_DOORBELL} 2100",
                f"P{qm.PARK_IDLE} 2200", "PW 2203"])
    m.target, m.wake_armed = 6000, False
    m.wait_park()
    m.qt.counter = 5000
    m.wait_park()
    m.wait_park()
    assert m.now == 5439
    assert m.wait_park() == qm.PARK_IDLE
    m.wake_at_fence()
    assert m.qt.words[qm.DUAL2] == 1000
    assert m.qt.words[qm.DUAL2 + 8] == qm.DUAL_ONESHOT_IE_EN
    m.qt.counter = 6000
    assert m.wait_park() == qm.PARK_WOKE and m.now == 6000
    m.stop_wake()
    assert m.qt.words[qm.DUAL2 + 8] == 0 and m.qt.words[qm.DUAL2 + 12] == 1
    assert m.qt.words[qm.NVIC_ICPR] == qm.DUAL_LINE
    m.qt.words.clear()
    m.stop_wake()  # not armed: nothing to stop
    assert not m.qt.words


def test_a_fence_past_the_timers_reach_arms_its_most():
    """The dual timer's counter is 32 bits: a fence 2^32 + 5 ticks (171.8
    s) off gets its most, 2^32 - 1, not the load's low 32 bits (5, which
    woke the core at once)."""
    m = module([])
    m.qt.counter = 7000
    m.now, m.target = 7000, 7000 + (1 << 32) + 5
    m.wake_at_fence()
    assert m.qt.words[qm.DUAL2] == 0xFFFFFFFF
    assert m.qt.words[qm.DUAL2 + 8] == qm.DUAL_ONESHOT_IE_EN and m.wake_armed


def test_the_plugin_is_told_the_fence_with_each_resume():
    """Each resume carries the fence's count (all ones without one), from
    the sleeps known then: after a WFI the same tick is fewer instructions
    away."""
    m = module([])
    m.resume = io.BytesIO()
    m.target = None
    m.go()
    m.target = 6000
    m.go()
    m.time.slept_ns = 40_000
    m.go()
    sent = m.resume.getvalue()
    assert sent[0:1] == sent[9:10] == sent[18:19] == b"g"
    counts = [struct.unpack_from("<Q", sent, i + 1)[0] for i in (0, 9, 18)]
    assert counts == [qm.NO_FENCE, m.time.fence(6000) + 40_000 // 16, m.time.fence(6000)]


def test_a_sleep_ended_at_the_fence_counts_before_the_port_counts_it():
    """The port adds a sleep to port_cm_idle.slept after its WFI; parked
    right after it, at the grant's fence, the core has not: its request
    for time carries that sleep's ticks from the park before the WFI, and
    the port's own count once it has run on (never less)."""
    m = module([f"P{qm.PARK_IDLE} 1000", "PW 1003"])
    m.idle, m.uncounted, m.slept_known = 0x20002000, None, False
    m.qt.write(m.idle, struct.pack("<3Q", 100, 7000, 10_000))
    assert m.wait_park() == qm.PARK_IDLE
    m.going_to_sleep()
    assert m.sleep_began == tick_of(1000 * 16) == 400
    m.qt.counter = 5000
    assert m.wait_park() == qm.PARK_WOKE
    m.sleep_ended()
    assert m.slept() == 100 + 5000 - 400
    m.qt.write(m.idle, struct.pack("<Q", 100 + 4603))  # the port's count, from its clock
    assert m.slept() == 100 + 4603 and m.uncounted is None


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


class SleepingGuest(Guest):
    """A guest whose WFI sleeps to the fence's timer once armed: QEMU's
    clock jumps to where the one-shot falls due (read right after the
    WFI); unarmed, it sleeps on past every fence."""

    def writel(self, addr, value):
        super().writel(addr, value)
        if addr == qm.DUAL2 + 8 and value == qm.DUAL_ONESHOT_IE_EN:
            self.counter += self.words[qm.DUAL2]


def sleeping_module(parks, guest):
    """module() on `guest`, its port's timers far off."""
    m = module(parks)
    m.qt = guest
    m.resume = io.BytesIO()
    m.idle, m.uncounted, m.slept_known, m.sleep_began = 0x20002000, None, False, 0
    m.qt.write(m.idle, struct.pack("<3Q", 0, 0, 10**9))
    return m


def test_a_core_woken_before_its_fence_is_awake_when_the_fence_parks_it():
    """The SSL device's stall (devices/ssl-mixed.toml at 0.89 s): a frame
    presented at a fence with the core on its way back to sleep (interrupts
    masked) ends its next WFI at once; the fence of the next grant parks it
    inside the receive interrupt, before the verdict's doorbell. Reported
    asleep there with its timers' wake-up as its want, it was granted
    nothing more: the verdict never came, and the hub marked it
    unresponsive."""
    until = tick_of(1600 * 16)
    # The frame's interrupt is pending: the WFI returns at once.
    m = sleeping_module([f"P{qm.PARK_IDLE} 1000", "PW 1003", "PF 1600"], Guest())
    m.run_to(until, Hub())
    assert m.now == until
    assert not m.asleep()
    hub = Hub()
    m.ask(hub)
    assert struct.unpack_from("<QB", hub.sent[0][2]) == (until + 1, 0)


class Parks(io.BytesIO):
    """The plugin's park lines, `check(line, guest)` called as each is
    read: the guest as the plugin parks it there."""

    def __init__(self, lines, guest, check):
        super().__init__("".join(f"{p}\n" for p in lines).encode())
        self.guest, self.check = guest, check

    def readline(self, *args):
        line = super().readline(*args)
        self.check(line.decode().strip(), self.guest)
        return line


def wfi_armed_at(load):
    """A check of Parks: at the park after the WFI, the fence's timer was
    armed with `load` ticks, one-shot and enabled (unarmed, the WFI slept
    on to the core's own timer, past the grant)."""

    def check(line, guest):
        if line.startswith(f"P{qm.PARK_WOKE}"):
            assert guest.words.get(qm.DUAL2) == load
            assert guest.words.get(qm.DUAL2 + 8) == qm.DUAL_ONESHOT_IE_EN

    return check


def test_a_core_fenced_on_its_way_to_a_wfi_sleeps_to_the_next_fence():
    """A fence in the instructions between port_cm_lockstep_idle() and the
    WFI parks the core there, awake; the next grant's WFI then runs no
    instructions for the count to fence, so the fence's timer is armed
    with that grant too, and the core wakes at its tick (unarmed, it slept
    on to its own timer, past the grant and the event due there)."""
    first = tick_of(1001 * 16)
    guest = SleepingGuest()
    m = sleeping_module([], guest)
    m.park = Parks([f"P{qm.PARK_IDLE} 1000", "PF 1001", "PW 1003"], guest,
                   wfi_armed_at(5000 - first))
    guest.counter = first - 1  # QEMU's clock lags the parks
    m.run_to(first, Hub())
    assert m.now == first and m.asleep() and not m.wake_armed
    assert guest.counter == first  # this grant's timer fell due at its fence
    m.run_to(5000, Hub())
    assert m.now == 5000
    assert guest.words[qm.DUAL2 + 8] == 0  # stopped at the wake-up


def test_a_core_fenced_at_its_idle_park_sleeps_to_the_next_fence():
    """The fence parks the core at port_cm_lockstep_idle() itself, the
    grant's tick reached: no timer is armed for that grant (the core parks
    at the next instruction); the next grant's WFI gets it."""
    first = tick_of(1000 * 16)
    guest = SleepingGuest()
    m = sleeping_module([], guest)
    m.park = Parks([f"P{qm.PARK_IDLE} 1000", "PF 1000", "PW 1003"], guest,
                   wfi_armed_at(5000 - (first - 1)))
    guest.counter = first - 1
    m.run_to(first, Hub())
    assert m.now == first and m.asleep()
    assert qm.DUAL2 + 8 not in guest.words and not m.wake_armed  # nothing armed
    m.run_to(5000, Hub())
    assert m.now == 5000
    assert guest.words[qm.DUAL2 + 8] == 0

def test_a_core_fenced_before_its_wfi_with_a_frame_pending_is_awake():
    """A frame falls due at a fence that parks the core in port_sleep()'s
    loop before port_cm_lockstep_idle(), interrupts masked: presented
    there, its line pending, the core goes on to the idle park (its timers'
    wake-up far off) and the grant's fence lands on the next instructions,
    before the WFI. That WFI ends at once: the core is awake, and asks for
    the next tick; reported asleep with its timers' wake-up as its want,
    the hub granted it nothing and marked it unresponsive."""
    due = tick_of(1000 * 16)
    until = tick_of(1022 * 16)
    m = sleeping_module(["PF 1000", f"P{qm.PARK_IDLE} 1020", "PF 1022"], Guest())
    m.qt.words[qm.NVIC_ISER] = 1 << qm.BUS_IRQ  # the port's bus line enabled
    m.events = [(due, qm.EV_RX, 0, b"\x01\x02")]
    m.run_to(until, Hub())
    assert m.now == until and m.presenting is not None
    assert m.qt.words[qm.NVIC_ISPR] == 1 << qm.BUS_IRQ
    assert m.sleep == qm.TO_WFI and m.idle_wake > until  # its timers' wake-up far off
    assert not m.asleep()
    hub = Hub()
    m.ask(hub)
    assert struct.unpack_from("<QB", hub.sent[0][2]) == (until + 1, 0)


def test_a_frame_presented_on_the_way_to_a_wfi_keeps_the_core_awake():
    """The same window the other way round: the fence that presents the
    frame parks the core after port_cm_lockstep_idle(), and the next one
    before its WFI. On its way to the WFI the frame shows only as its line
    pending: the core is awake there."""
    due, until = tick_of(1001 * 16), tick_of(1004 * 16)
    m = sleeping_module([f"P{qm.PARK_IDLE} 1000", "PF 1001", "PF 1004"], Guest())
    m.qt.words[qm.NVIC_ISER] = 1 << qm.BUS_IRQ
    m.events = [(due, qm.EV_RX, 0, b"\x01\x02")]
    m.run_to(until, Hub())
    assert m.now == until and m.presenting is not None and m.sleep == qm.TO_WFI
    assert not m.asleep()
    hub = Hub()
    m.ask(hub)
    assert struct.unpack_from("<QB", hub.sent[0][2]) == (until + 1, 0)
