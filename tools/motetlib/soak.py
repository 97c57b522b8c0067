# SPDX-License-Identifier: MIT
"""`motet soak`: a long run of a five-module device under migrations,
multicasts and faults, checking that no message is lost, duplicated or
reordered and that the modules' memory stays flat.

The device is devices/migrate.toml running apps/migrate/soak.toml: four
senders (three unicast, one multicast to three sinks) send numbered
messages to sinks of which two keep moving between modules (every 20 and
31 ms), while the hub corrupts a few frames and delays one every so often
(the fault schedule below). Each sender sends the same count, so that
--messages M deliveries take ceil(M / 6) messages per sender (3 unicast
streams and one multicast to 3 receivers: 6 deliveries a round).

Per receiver and sender the soak follows the sink's lines (`sink 0x10 at
m2: from 0x13 seq 57 ...`) itself: every number 1 .. N must arrive once
and in order. A message that never arrives counts as lost; the bus does
not yet tell a sender that it gave a frame up, so a loss can only be
explained by the frames the kernels gave up (bus counter tx_given_up), and
is never counted as reported to its sender. The resident set of every
module process is read (/proc) as deliveries pass each tenth of the total:
the first reading is the start, after the warm-up, the last the end.

    motet soak                     # 10^6 deliveries
    motet soak --messages 20000    # a short one (the test's)
    motet soak --write             # also write the "soak" section of docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
import time

from . import build, cmdline, device as devmod, hub as hubmod, report as reportmod, run_device

DEVICE = build.ROOT / "devices" / "migrate.toml"
APP = "soak"
# Sender pid -> the receivers of its messages (apps/migrate/soak.toml).
STREAMS = {0x13: (0x10,), 0x14: (0x10,), 0x15: (0x11,), 0x16: (0x10, 0x11, 0x12)}
SENDER_NAMES = {0x13: "s0", 0x14: "s1", 0x15: "s2", 0x16: "s3 (multicast)"}
SINK_NAMES = {0x10: "sinkA (moves m1<->m2)", 0x11: "sinkB (moves m3<->m4)",
              0x12: "sinkC (m2, multicast only)"}
PER_ROUND = sum(len(r) for r in STREAMS.values())
LONGEST_PERIOD_S = 0.0017  # s3's; the others finish first
FAULT_EVERY_S = 0.25  # one fault of the schedule every this much simulated time
EXAMPLES = 10  # anomalous lines kept to show
RSS_SLACK_KB = 256  # growth of a module's resident set that still counts as flat

SINK = re.compile(r"^m\d+\| \[\s*[\d.]+ ms\] sink 0x([0-9a-f]+) at m\d+: from 0x([0-9a-f]+) "
                  r"seq (\d+) ")
MIGRATED = re.compile(r"^m\d+\| \[\s*[\d.]+ ms\] mig 0x([0-9a-f]+) DONE m\d+ MT_OK live=1")


def fault_schedule(until_s):
    """Every FAULT_EVERY_S, in turn: corrupt the next 3 frames any module
    receives (each is rejected and sent again; 3 is well below the retry
    limit), delay the next frame by 500 us, corrupt the next frame m1
    receives (sinkA's module half of the time)."""
    faults = []
    kinds = ("corrupt:*@{t}:3", "delay:*@{t}:500", "corrupt:1@{t}:1")
    t, i = FAULT_EVERY_S, 0
    while t < until_s:
        faults.append(hubmod.parse_fault(kinds[i % len(kinds)].format(t=f"{t:.3f}")))
        t += FAULT_EVERY_S
        i += 1
    return faults


def rss_kb(pid):
    """VmRSS of a process in KiB, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class Checker:
    """Follows every (receiver, sender) stream: next expected number,
    duplicates and numbers that arrived out of order or were skipped."""

    def __init__(self, per_sender):
        self.n = per_sender
        self.next = {(r, s): 1 for s, rs in STREAMS.items() for r in rs}
        self.duplicates = 0
        self.reordered = 0  # numbers that arrived after a later one
        self.unexpected = 0  # from a sender or to a receiver not in STREAMS
        self.missing = set()  # (receiver, sender, seq) skipped so far
        self.delivered = 0
        self.migrations = 0
        self.examples = []  # the first few anomalies, each with its line

    def line(self, text):
        m = SINK.match(text)
        if m:
            before = (self.duplicates, self.reordered, self.unexpected, len(self.missing))
            self.message(int(m[1], 16), int(m[2], 16), int(m[3]))
            after = (self.duplicates, self.reordered, self.unexpected, len(self.missing))
            if after != before and len(self.examples) < EXAMPLES:
                self.examples.append(text)
        elif MIGRATED.match(text):
            self.migrations += 1

    def message(self, receiver, sender, seq):
        key = (receiver, sender)
        if key not in self.next:
            self.unexpected += 1
            return
        want = self.next[key]
        if seq == want:
            self.next[key] = seq + 1
            self.delivered += 1
        elif seq > want:  # skipped some: missing unless they come later
            self.missing.update((receiver, sender, k) for k in range(want, seq))
            self.next[key] = seq + 1
            self.delivered += 1
        elif (receiver, sender, seq) in self.missing:
            self.missing.discard((receiver, sender, seq))
            self.reordered += 1
            self.delivered += 1
        else:
            self.duplicates += 1

    def lost(self):
        """Deliveries that never came: skipped ones and those after the last."""
        tail = sum(max(0, self.n + 1 - nxt) for nxt in self.next.values())
        return len(self.missing) + tail


def run(bdir, messages, *, seed=1, out=print, progress=False):
    """Run the soak; returns its result (a dict)."""
    per_sender = max(1, math.ceil(messages / PER_ROUND))
    expected = per_sender * PER_ROUND
    until_s = per_sender * LONGEST_PERIOD_S * 1.5 + 1.0
    dev = devmod.load(DEVICE)
    faults = fault_schedule(until_s)
    check = Checker(per_sender)
    samples = []  # (deliveries, {module: rss KiB})
    hub = None
    marks = [expected * k // 10 for k in range(1, 11)]

    def sample():
        samples.append((check.delivered, {m.id: rss_kb(m.proc.pid) for m in hub.mods.values()
                                          if m.proc is not None and not m.dead}))

    def on_line(text):
        check.line(text)
        while marks and check.delivered >= marks[0]:
            marks.pop(0)
            sample()
            if progress:
                sys.stderr.write(f"\rsoak: {check.delivered} of {expected} deliveries   ")
                sys.stderr.flush()
        if check.delivered >= expected and not hub.stop_requested:
            hub.stop_requested = True  # everything arrived: stop at the next step

    extra = ["--app", APP, "--count", str(per_sender)]
    wall = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="motet-soak-") as tmp:
        def launch(mod, path):
            return mod.kind.argv(bdir, dev, mod.spec, path, seed, None, extra)

        hub = hubmod.Hub(dev, os.path.join(tmp, "bus.sock"), launch, seed=seed, until_s=until_s,
                         faults=faults, out=on_line)
        report = hub.run()
    wall = time.monotonic() - wall
    if progress:
        sys.stderr.write("\r" + " " * 60 + "\r")
    kernels = [m["kernel"] or {} for m in report["modules"].values()]
    given_up = sum(k.get("tx_given_up", 0) for k in kernels)
    start = samples[0][1] if samples else {}
    end = samples[-1][1] if samples else {}
    growth = {mid: end[mid] - start[mid] for mid in start
              if start.get(mid) is not None and end.get(mid) is not None}
    lost = check.lost()
    result = {
        "messages": expected, "per_sender": per_sender, "delivered": check.delivered,
        "lost": lost, "duplicates": check.duplicates, "reordered": check.reordered,
        "unexpected": check.unexpected, "given_up_frames": given_up,
        "migrations": check.migrations, "faults": len([f for f in faults
                                                       if f.at_ns <= round(report["end_s"] * 1e9)]),
        "frames": report["bus"]["frames"], "retransmissions": report["bus"]["retransmissions"],
        "corrupted": report["bus"]["corrupted"], "delayed": report["bus"]["delayed"],
        "sim_s": report["end_s"], "wall_s": wall, "reason": report["reason"],
        "rss_start_kb": start, "rss_end_kb": end, "rss_growth_kb": growth,
        "rss_samples": len(samples), "examples": check.examples,
    }
    # Losses are explained only by frames the bus gave up, and even then
    # not reported to the sender (the bus does not report them yet).
    result["ok"] = (check.duplicates == 0 and check.reordered == 0 and check.unexpected == 0
                    and lost == 0 and check.delivered == expected
                    and len(growth) == len(dev.modules)
                    and all(g <= RSS_SLACK_KB for g in growth.values()))
    for line in summary(result):
        out(line)
    return result


def summary(r):
    """The result as lines of text."""
    rss = ", ".join(f"m{mid} {r['rss_start_kb'][mid]} -> {r['rss_end_kb'][mid]} KiB"
                    for mid in sorted(r["rss_growth_kb"]))
    return [
        f"soak: {r['delivered']} of {r['messages']} deliveries ({r['per_sender']} messages from "
        f"each of 4 senders, one of them multicast to 3 sinks) in {r['sim_s']:.1f} s of simulated "
        f"time, {r['wall_s']:.0f} s of wall time",
        f"  {r['migrations']} migrations, {r['faults']} faults injected ({r['corrupted']} frames "
        f"corrupted, {r['delayed']} delayed), {r['frames']} frames, {r['retransmissions']} "
        f"retransmitted",
        f"  per receiver and sender: {r['duplicates']} duplicates, {r['reordered']} out of order, "
        f"{r['lost']} missing when the run ended ({r['given_up_frames']} frames given up by the "
        f"bus; a loss is never "
        f"counted as reported to its sender: the bus does not report given-up frames yet)",
        f"  resident set, first and last of {r['rss_samples']} readings: {rss or 'not read'}",
        *(f"  anomaly: {line}" for line in r["examples"]),
        f"soak: {'PASS' if r['ok'] else 'FAIL'}",
    ]


def section(r, command, note=""):
    """The "soak" section of docs/benchmarks.md."""
    note = f"\n{note.strip()}\n" if note else ""
    anomalies = ""
    if r["examples"]:
        anomalies = ("\nThe first anomalous lines (a duplicate: a number at or below one "
                     "already received; a gap: numbers skipped):\n\n```\n"
                     + "\n".join(r["examples"]) + "\n```\n")
    rows = "\n".join(f"| m{mid} | {r['rss_start_kb'][mid]} | {r['rss_end_kb'][mid]} | "
                     f"{r['rss_growth_kb'][mid]:+d} |" for mid in sorted(r["rss_growth_kb"]))
    return f"""## Soak: a five-module device under migrations, multicasts and faults

Written by `{command}` (tools/motetlib/soak.py): `devices/migrate.toml`
running `apps/migrate/soak.toml`. Four senders send {r['per_sender']} numbered
messages each: three unicast streams (two to sinkA, which moves between m1
and m2 every 20 ms, one to sinkB, which moves between m3 and m4 every 31 ms)
and one multicast to sinkA, sinkB and sinkC; the hub injects a fault every
{FAULT_EVERY_S:g} s of simulated time (3 frames corrupted, one frame delayed
500 us, a frame to m1 corrupted, in turn). The soak follows every receiver's
lines itself: each number must arrive once and in order.

| | |
|---|---|
| deliveries | {r['delivered']} of {r['messages']} |
| duplicates, out of order | {r['duplicates']}, {r['reordered']} |
| missing when the run ended | {r['lost']} |
| frames given up by the bus | {r['given_up_frames']} |
| migrations completed | {r['migrations']} |
| faults injected | {r['faults']} ({r['corrupted']} frames corrupted, {r['delayed']} delayed) |
| bus frames, retransmitted | {r['frames']}, {r['retransmissions']} |
| simulated time | {r['sim_s']:.1f} s |
| wall time | {r['wall_s']:.0f} s (2 shared cores) |
| verdict | {'pass' if r['ok'] else 'FAIL'} |

A loss would count as reported to its sender only if the sender was told;
the bus does not yet report given-up frames to their senders, so any frame
given up counts as a loss here (there were {r['given_up_frames']}).

Resident set of each module process (VmRSS, KiB), at the first tenth of the
deliveries (after the warm-up) and at the end; flat means a growth of at
most {RSS_SLACK_KB} KiB:

| module | start | end | growth |
|---|---|---|---|
{rows}
{anomalies}{note}"""


def main(argv=None):
    p = cmdline.ArgumentParser(prog="motet soak", description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--messages", metavar="N", type=int, default=10**6,
                   help="deliveries to check, rounded up to a multiple of 6 (default 10^6)")
    p.add_argument("--seed", metavar="N", type=int, default=1, help="seed of the run (default 1)")
    p.add_argument("--write", action="store_true",
                   help="write the result as the 'soak' section of docs/benchmarks.md")
    p.add_argument("--note", metavar="TEXT", default="",
                   help="a paragraph to add to the section (--write), e.g. about other runs")
    p.add_argument("--no-build", action="store_true", help="do not build the programs first")
    p.add_argument("--build-dir", default=None,
                   help="build directory (default: $MOTET_BUILD_DIR or build)")
    args = p.parse_args(argv)
    if args.messages < 1:
        print(f"soak: error: --messages {args.messages}: expected at least 1", file=sys.stderr)
        return 2
    if not args.no_build:
        status = run_device.build_programs(args.build_dir, devmod.load(DEVICE))
        if status != 0:
            return status
    try:
        r = run(build.build_dir(args.build_dir), args.messages, seed=args.seed,
                progress=sys.stderr.isatty())
    except hubmod.HubError as e:
        print(f"soak: error: {e}", file=sys.stderr)
        return 1
    if args.write:
        command = "./motet soak" + (f" --messages {args.messages}" if args.messages != 10**6
                                    else "") + (f" --seed {args.seed}" if args.seed != 1 else "")
        path = reportmod.write_section("soak", section(r, command, args.note))
        print(f"soak: wrote the 'soak' section of {path}")
    return 0 if r["ok"] else 1
