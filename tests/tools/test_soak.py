# SPDX-License-Identifier: MIT
"""`motet soak` (tools/motetlib/soak.py): a short soak of the five-module
device must deliver every message once and in order, with flat memory; and
the soak's own checker must catch what it is there to catch."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import build, soak  # noqa: E402


def sink_line(receiver, sender, seq):
    return f"m1| [     12.345 ms] sink 0x{receiver:02x} at m1: from 0x{sender:02x} seq {seq} in order"


def feed(check, lines):
    for line in lines:
        check.line(line)


def test_checker_accepts_every_stream_complete_and_in_order():
    check = soak.Checker(3)
    feed(check, [sink_line(r, s, k) for k in (1, 2, 3) for s, rs in soak.STREAMS.items()
                 for r in rs])
    assert check.delivered == 3 * soak.PER_ROUND
    assert (check.lost(), check.duplicates, check.reordered, check.unexpected) == (0, 0, 0, 0)


def test_checker_counts_duplicates_reordering_and_losses():
    check = soak.Checker(4)
    feed(check, [sink_line(0x10, 0x13, k) for k in (1, 2, 2, 4, 3)])  # 2 twice, 3 late
    feed(check, [sink_line(0x11, 0x15, k) for k in (1, 3)])  # 2 and 4 never come
    feed(check, [sink_line(0x12, 0x13, 1)])  # s0 does not send to sinkC
    assert check.duplicates == 1
    assert check.reordered == 1
    assert check.unexpected == 1
    # 0x11 from 0x15 misses 2 and 4; every other stream misses all 4 but
    # 0x10 from 0x13, which is complete.
    assert check.lost() == 2 + 4 * (soak.PER_ROUND - 2)


def test_checker_counts_completed_migrations_once():
    check = soak.Checker(1)
    feed(check, ["m2| [     25.117 ms] mig 0x10 LIVE m1 MT_OK live=1",
                 "m1| [     25.221 ms] mig 0x10 DONE m2 MT_OK live=0",
                 "m2| [     25.367 ms] mig 0x10 DONE m2 MT_OK live=1"])
    assert check.migrations == 1


def test_short_soak_delivers_everything_once_in_order_with_flat_memory():
    bdir = build.build_dir(os.environ.get("MOTET_BUILD_DIR"))
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "motet"), "soak", "--messages",
                          "3000", "--build-dir", str(bdir)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "soak: 3000 of 3000 deliveries (500 messages from each of 4 senders" in out, out
    assert "0 duplicates, 0 out of order, 0 missing" in out, out
    migrations = int(re.search(r"(\d+) migrations", out)[1])
    assert migrations > 10, out  # the sinks really moved while messages flowed
    assert "soak: PASS" in out
