#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/).

Every seed is made with the real formats: descriptions by the application
compiler (motetlib.appc), frames, images and event lists as the kernel
lays them out (kernel/include/motet/bus.h, kernel/src/bus_internal.h,
kernel/src/migrate_bus.h, migrate_internal.h) and as each harness reads
its input (the comment at the top of each fuzz_*.c). Run it again after
a format changes:

    python3 tests/fuzz/make_seeds.py
"""

import shutil
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import appc, appc_text, appdesc  # noqa: E402

CORPUS = HERE / "corpus"

# bus.h
DATA, MCAST, SYNC, DESC, CREATED, ASK = 1, 2, 3, 4, 5, 6
BROADCAST = 0xFF
PORT_0 = 8
PORT_SERIALIZE = 2
VERDICT = PORT_0 + 1
LOAD = 1  # a DESC frame's port byte: its loader's number for the load
# types.h
PID_MULTICAST, PID_TIMESYNC, PID_MIGRATOR, PID_APPMGR = 0xF0, 0xF1, 0xF2, 0xF3
# migrate.h: a migrator frame's port is its kind
(REQUEST, FREEZE, REPLY, STATE, ATTACHED, RESULT, FORWARD, END, REFUSED, PING, ABORT,
 CONFIRM) = range(PORT_0, PORT_0 + 12)
# fuzz_bus_rx.c: its module and events
SELF = 1
EV_FRAME, EV_RAW, EV_TX_END, EV_TIME = 0, 1, 2, 3
SENT = 0


def body(ftype, src, dst, seq, pid, port, src_pid, prio, payload):
    """Header and payload of a frame (the length field filled in)."""
    return bytes([ftype, src, dst, seq, pid, port, src_pid, prio]) + \
        struct.pack("<H", len(payload)) + bytes(payload)


def frame(*fields):
    b = body(*fields)
    return b + struct.pack("<H", appdesc.crc16(b))


def outcome(err, loader, number, task=0xFF, module=0):
    """A CREATED frame's payload: the outcome, then the load it is about."""
    return [err, task, module, loader, number]


def asked(loader, number, modules):
    """An ASK frame's payload: the load, then the modules asked (a mask)."""
    return [loader, number] + list(struct.pack("<I", modules))


def image(pid, prio, program, state, routes=(), timers=(), groups=(), held=0, tick_hz=31250):
    """A migration image (migrate_internal.h) followed by its state."""
    head = bytes([3, pid, prio, 1, program, len(routes), len(timers), len(groups)])
    head += struct.pack("<IHH", tick_hz, len(state), held)
    for pid_, port in routes:
        head += bytes([pid_, port])
    for index, remaining, period in timers:
        head += struct.pack("<BII", index, remaining, period)
    for group, port in groups:
        head += bytes([group, port])
    return head + bytes(state)


def state_layout(fields, wire):
    """fuzz_state_layout's input: the layout's (offset, count, width)
    fields, then the state as it arrives."""
    return bytes([len(fields)]) + b"".join(bytes(f) for f in fields) + wire


# A description of programs 1..3 (fuzz_appmgr.c, fuzz_bus_rx.c have them):
# tasks on modules 0 and 1, routes, a group and init data.
DESCRIPTION = """
[app]
name = "seed"

[programs]
plain = 1
big = 2
bare = 3

[[task]]
name = "a"
program = "plain"
priority = 2
module = 0
routes = ["b:0", "@all"]
init = [{ u32 = 1000 }]

[[task]]
name = "b"
program = "big"
priority = 3
module = 1
movable = true
routes = ["a:1"]

[[task]]
name = "c"
program = "bare"
priority = 1
module = 0

[[group]]
name = "all"
members = ["a:0", "c:1"]
"""


class Events:
    """An event list as fuzz_bus_rx.c reads it."""

    def __init__(self):
        self.out = bytearray()
        self.seq = {}

    def frame(self, ftype, src, pid, port, payload, src_pid=0, prio=2):
        dst = BROADCAST if ftype in (MCAST, SYNC, DESC, CREATED, ASK) else SELF
        seq = self.seq.get((src, dst), 0)
        self.seq[(src, dst)] = (seq + 1) & 0xFF
        b = body(ftype, src, dst, seq, pid, port, src_pid, prio, payload)
        self.out += bytes([EV_FRAME]) + struct.pack("<H", len(b)) + b
        return self

    def raw(self, data):
        self.out += bytes([EV_RAW]) + struct.pack("<H", len(data)) + data
        return self

    def tx_end(self, times=1, result=SENT):
        for _ in range(times):
            self.out += bytes([EV_TX_END, result])
        return self

    def time(self, us):
        self.out += bytes([EV_TIME]) + struct.pack("<H", min(0xFFFF, us // 64))
        return self

    def migrator(self, src, kind, payload, cast=False):
        return self.frame(MCAST if cast else DATA, src, PID_MIGRATOR, kind, payload,
                          src_pid=PID_MIGRATOR, prio=7)


def bus_rx_seeds(desc):
    seeds = {}
    ev = Events()
    ev.frame(DATA, 0, 0x20, PORT_0, b"hello", src_pid=0x30)
    ev.frame(MCAST, 2, PID_MULTICAST, 3, b"all", src_pid=0x31)
    ev.frame(DATA, 2, 0x21, PORT_0 + 1, b"", src_pid=0)
    seeds["messages"] = ev.out
    # 0x30 moves from module 0 to us: FREEZE, our REPLY, the image, our
    # ATTACHED, RESULT ok, a forwarded message, END, then CONFIRM.
    ev = Events()
    ev.migrator(0, FREEZE, [0x30, 7, 0, SELF, 2], cast=True).time(2000).tx_end()
    ev.migrator(0, STATE, [0x30, 7, 0, 0] + list(image(0x30, 2, 9, b"ab", held=1)))
    ev.time(2000).tx_end()
    ev.migrator(0, RESULT, [0x30, 7, 0, 0, SELF], cast=True)
    ev.migrator(0, FORWARD, [0x30, 7, PORT_0, 1, 0, ord("x")])
    ev.migrator(0, END, [0x30, 7, 1, 0, 0, 0, 0, 0]).time(2000)
    ev.migrator(0, CONFIRM, [0x30, 7, 0, SELF], cast=True).time(30000)
    seeds["migration-in"] = ev.out
    # The same with a multicast to the task's group taken before we join it
    # (at RESULT ok) and one after; the source forwards both with their
    # frames (port | 0x80, origin, number): we keep the first only.
    ev = Events()
    ev.migrator(0, FREEZE, [0x30, 8, 0, SELF, 2], cast=True).time(2000).tx_end()
    ev.migrator(0, STATE, [0x30, 8, 0, 0] + list(image(0x30, 2, 9, b"ab", groups=[(3, PORT_0)],
                                                       held=2)))
    ev.time(2000).tx_end()
    ev.frame(MCAST, 2, PID_MULTICAST, 3, b"a", src_pid=0x31)
    ev.migrator(0, RESULT, [0x30, 8, 0, 0, SELF], cast=True)
    ev.frame(MCAST, 2, PID_MULTICAST, 3, b"b", src_pid=0x31)
    ev.migrator(0, FORWARD, [0x30, 8, PORT_0 | 0x80, 1, 0, 2, 0, ord("a"),
                             PORT_0 | 0x80, 1, 0, 2, 1, ord("b")])
    ev.migrator(0, END, [0x30, 8, 2, 0, 0, 0, 0, 0]).time(2000)
    ev.migrator(0, CONFIRM, [0x30, 8, 0, SELF], cast=True).time(30000)
    seeds["migration-in-casts"] = ev.out
    # 0x30 moves here running program 10, whose state the kernel decodes in
    # its layout (u8, u16, 3 x u32: 15 bytes) as the chunks come: the
    # header and 4 state bytes, then the rest, an integer across the two.
    head = image(0x30, 2, 10, bytes(15))[:-15]
    state = bytes([5, 0x34, 0x12]) + struct.pack("<III", 1, 2, 3)
    ev = Events()
    ev.migrator(0, FREEZE, [0x30, 10, 0, SELF, 2], cast=True).time(2000).tx_end()
    ev.migrator(0, STATE, [0x30, 10, 0, 0] + list(head + state[:4]))
    ev.migrator(0, STATE, [0x30, 10] + list(struct.pack("<H", len(head) + 4)) + list(state[4:]))
    ev.time(2000).tx_end()
    ev.migrator(0, RESULT, [0x30, 10, 0, 0, SELF], cast=True)
    ev.migrator(0, END, [0x30, 10, 0, 0, 0, 0, 0, 0]).time(2000)
    ev.migrator(0, CONFIRM, [0x30, 10, 0, SELF], cast=True).time(30000)
    seeds["migration-in-layout"] = ev.out
    # Module 0 asks for 0x20 to move to module 2: we are the source.
    ev = Events()
    ev.migrator(0, REQUEST, [0x20, 2, 0, 1]).time(2000).tx_end()
    for m in (0, 2, 3):
        ev.migrator(m, REPLY, [0x20, 1, 0])
    ev.time(2000).tx_end()
    ev.migrator(2, ATTACHED, [0x20, 1, 0]).time(2000).tx_end(4).time(2000).tx_end(4)
    seeds["migration-out"] = ev.out
    # A migration through us that fails: the destination is silent.
    ev = Events()
    ev.migrator(0, FREEZE, [0x30, 9, 0, 2, 2], cast=True).time(2000).tx_end()
    ev.migrator(0, RESULT, [0x30, 9, 3, 0, 2], cast=True).time(60000).tx_end(2)
    ev.migrator(2, PING, [0x30, 9]).migrator(0, REFUSED, [0x20, 1])
    seeds["migration-fails"] = ev.out
    # A description from module 0, every module's outcome, then beacons.
    ev = Events()
    ev.frame(DESC, 0, PID_APPMGR, LOAD, desc, prio=7).time(1000).tx_end()
    for m in (0, 2, 3):
        ev.frame(CREATED, m, PID_APPMGR, VERDICT, outcome(0, 0, LOAD), prio=7)
    for k in range(4):
        ev.time(50000).frame(SYNC, 0, PID_TIMESYNC, PORT_0, struct.pack("<I", 1000 + k * 50000))
    seeds["load-and-sync"] = ev.out
    # A description from module 0 whose outcome from module 3 never comes:
    # module 0 asks us for ours, we ask module 3 after the verdict deadline
    # (200 ms), and give the load up after the asks (8 of them). First two
    # malformed ASKs, dropped as bad frames: one asking no module, one
    # asking modules the device does not have.
    ev = Events()
    ev.frame(DESC, 0, PID_APPMGR, LOAD, desc, prio=7).time(1000).tx_end()
    ev.frame(ASK, 0, PID_APPMGR, VERDICT, asked(0, LOAD, 0), prio=7)
    ev.frame(ASK, 2, PID_APPMGR, VERDICT, asked(0, LOAD, 0xFFFFFFF0), prio=7)
    for m in (0, 2):
        ev.frame(CREATED, m, PID_APPMGR, VERDICT, outcome(0, 0, LOAD), prio=7)
    ev.frame(ASK, 0, PID_APPMGR, VERDICT, asked(0, LOAD, 1 << SELF | 1 << 3), prio=7).tx_end()
    for _ in range(10):
        ev.time(250000).tx_end()
    seeds["load-asked"] = ev.out
    # Module 0's loads 1, 2 and 3, each superseding the one before on which
    # we reported MT_OK: our failures of 1 and 2 wait together, the earlier
    # followed to its copies' end. The first frame of ours reaches every
    # module, the next is rejected until given up, the rest go; then the
    # verdict deadline's expiries (an owed failure sent again).
    ev = Events()
    for number in (LOAD, LOAD + 1, LOAD + 2):
        ev.frame(DESC, 0, PID_APPMGR, number, desc, prio=7).time(1000)
    ev.tx_end().tx_end(8, result=1).tx_end(4)
    for _ in range(3):
        ev.time(250000).tx_end()
    seeds["loads-superseded"] = ev.out
    ev = Events()
    ev.raw(frame(DATA, 0, SELF, 3, 0x20, PORT_0, 0x30, 2, b"raw"))
    ev.raw(frame(DATA, 0, SELF, 4, 0x20, PORT_0, 0x30, 2, b"bad")[:-1] + b"\0")
    seeds["raw"] = ev.out
    return seeds


def seeds():
    desc = appc_text.compile_text(DESCRIPTION)
    hello = appc_text.compile_file(ROOT / "apps" / "hello" / "hello.toml")
    mcast = appc_text.compile_file(ROOT / "apps" / "pingpong" / "mcast.toml")
    hello_text = appc_text.read_text(ROOT / "apps" / "hello" / "hello.toml")
    named = hello + appc.names_trailer(*appc_text.names(hello_text))
    out = {
        "fuzz_app_file": {"named": named, "bare": hello,
                          "mcast": mcast + appc.names_trailer(["a"] * 5, ["g"])},
        "fuzz_appdesc": {"seed": desc, "hello": hello, "mcast": mcast},
        "fuzz_appmgr": {"seed": desc, "hello": hello},
        "fuzz_bus_frame": {
            "data": frame(DATA, 0, 1, 5, 0x20, PORT_0, 0x30, 2, b"payload"),
            "mcast": frame(MCAST, 2, BROADCAST, 9, PID_MULTICAST, 3, 0x31, 4, b"all"),
            "sync": frame(SYNC, 0, BROADCAST, 1, PID_TIMESYNC, PORT_0, 0, 7,
                          struct.pack("<I", 123456)),
            "desc": frame(DESC, 0, BROADCAST, 2, PID_APPMGR, LOAD, 0, 7, desc),
            "created": frame(CREATED | 0x80, 3, BROADCAST, 4, PID_APPMGR, VERDICT, 0, 7,
                             outcome(0, 0, LOAD)),
            "ask": frame(ASK, 2, BROADCAST, 5, PID_APPMGR, VERDICT, 0, 7,
                         asked(0, LOAD, 0b1010)),
        },
        "fuzz_migrate_image": {
            "bare": image(0x30, 2, 9, b"") + struct.pack("<I", 0),
            "full": image(0x30, 5, 9, b"state", routes=[(0x21, PORT_0), (PID_MULTICAST, 3)],
                          timers=[(0, 5000, 10000), (3, 70000, 0)], groups=[(3, PORT_0)],
                          held=2, tick_hz=10000) + struct.pack("<I", 12000),
        },
        "fuzz_timesync": {
            # window 8, local start, pairs 1 s apart with a 20 ppm drift
            "steady": bytes([8]) + struct.pack("<I", 5) + b"".join(
                bytes([4]) + struct.pack("<H", 62500) + struct.pack("<i", 20 * k)
                for k in range(1, 12)),
            # a new reference far off: the fit starts over
            "jump": bytes([3]) + struct.pack("<I", 0xFFFF0000) + b"".join(
                bytes([0x84]) + struct.pack("<H", 62500) + struct.pack("<I", w)
                for w in (1000000, 2000000, 0x80000000, 0x80100000)),
        },
        "fuzz_bus_rx": bus_rx_seeds(desc),
        # data_max, then an EVENT's body: u64 at, u8 kind, its fields
        "fuzz_hub_event": {
            "rx": bytes([0xFF]) + struct.pack("<QBI", 5000, 1, 77)
            + frame(DATA, 0, 1, 5, 0x20, PORT_0, 0x30, 2, b"payload"),
            "tx_done": bytes([0xFF]) + struct.pack("<QBB", 6000, 2, 1),
            "probe": bytes([0xFF]) + struct.pack("<QBI", 7000, 3, 9),
            "host": bytes([16]) + struct.pack("<QB", 8000, 4) + b"hello",
        },
        "fuzz_state_layout": {
            # u8 at 0, u16 at 2, u32 at 4, u16[4] at 8: 15 bytes on the wire
            "mixed": state_layout([(0, 1, 1), (2, 1, 2), (4, 1, 4), (8, 4, 2)],
                                  bytes([7]) + struct.pack("<HI4H", 0x1234, 0xDEADBEEF,
                                                           1, 2, 3, 4)),
            "array": state_layout([(0, 16, 4)], struct.pack("<16I", *range(16))),
            "short": state_layout([(0, 1, 4)], b"\x01\x02"),
        },
    }
    return out


def main():
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    for target, files in seeds().items():
        d = CORPUS / target
        d.mkdir(parents=True)
        for name, data in files.items():
            (d / name).write_bytes(bytes(data))
    print(f"wrote {sum(len(f) for f in seeds().values())} seeds under {CORPUS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
