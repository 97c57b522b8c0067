# SPDX-License-Identifier: MIT
"""The high-load benchmark's reading of a run (tools/motetlib/bench_energy_load.py):
the firmware's counts line with its per-cause counts, and the packet E_t
from each line's job ends, a lost pulse left out where it was lost."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import bench_energy_load as bel  # noqa: E402


def test_the_counts_line_with_and_without_the_causes():
    p = bel.parse_counts("boot\npreload 70 41 28 28 1 12 0 to 3 25\n")
    assert p == {"total": 70, "vol": 41, "invol": 28, "equal": 28, "kernel": 1, "nested": 12,
                 "pool_full": 0, "to_packet": 3, "to_sensing": 25}
    tasks = bel.parse_counts("preload 0 0 0 0 0 486 0\n")
    assert tasks["nested"] == 486 and tasks["to_packet"] == tasks["to_sensing"] == 0
    assert bel.parse_counts("no counts") is None


def test_mean_et_is_the_ends_less_the_arrivals_line_by_line():
    freq = 4_000_000
    arr = [(1_000_000, 0), (2_000_000, 1), (3_000_000, 0)]
    # Line 1's job ends before line 0's first: the order between lines does not matter.
    ends = {0: [1_040_000, 3_100_000], 1: [2_020_000]}
    expected = (40_000 + 100_000 + 20_000) / 3 / freq * 1e3
    assert bel.mean_et_ms(bel.reached(arr, ends), ends, freq) == pytest.approx(expected)
    none = {0: [], 1: []}
    assert bel.mean_et_ms(bel.reached([], none), none, freq) is None


def test_a_lost_pulse_is_the_one_that_came_right_after_its_predecessor():
    freq = 4_000_000
    # Pulses at 1.0 M, 1.001 M (MIN_GAP later: one edge to the chip), 2.0 M
    # and 3.0 M: three jobs end, the second pulse never had one.
    arr = [(1_000_000, 0), (1_000_000 + bel.MIN_GAP, 0), (2_000_000, 0), (3_000_000, 0)]
    ends = {0: [1_010_000, 2_010_000, 3_010_000]}
    assert bel._drop_lost([c for c, _ in arr], ends[0]) == [1_000_000, 2_000_000, 3_000_000]
    came = bel.reached(arr, ends)
    assert bel.mean_et_ms(came, ends, freq) == pytest.approx(10_000 / freq * 1e3)
    # The lost pulse never held a block: one packet at a time.
    assert bel.most_waiting(came, ends) == 1
    # More ends than pulses cannot be read.
    assert bel.reached(arr[:1], {0: ends[0]}) is None
    assert bel.mean_et_ms(None, ends, freq) is None and bel.most_waiting(None, ends) is None


def test_most_waiting_counts_the_packets_held_at_once_over_all_lines():
    # Line 0: three packets queue behind a long job; line 1's one comes
    # while they wait, and its job ends at the very cycle of the next
    # arrival (the end frees its block first).
    arr = [(100, 0), (200, 0), (300, 0), (250, 1), (900, 1)]
    ends = {0: [1000, 1100, 1200], 1: [900, 1300]}
    came = bel.reached(arr, ends)
    assert bel.most_waiting(came, ends) == 4
