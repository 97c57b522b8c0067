# SPDX-License-Identifier: MIT
"""The tree-position benchmark pairs each packet-job end with the pulse
whose interrupt the chip took; a pulse that merged with an earlier one
(interrupts off) is counted lost instead of shifting every later latency."""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from motetlib.bench_energy import pair_packets  # noqa: E402


class PairPackets(unittest.TestCase):
    def test_every_pulse_taken_pairs_one_to_one(self):
        self.assertEqual(pair_packets([100, 900, 2000], [110, 910, 2010]), ([100, 900, 2000], 0))

    def test_pulse_during_a_pending_edge_is_lost(self):
        # The second pulse's interrupt is entered only after the third pulse
        # came: the chip saw one edge for both.
        got, lost = pair_packets([1000, 2000, 3700, 9000], [1056, 4070, 9050])
        self.assertEqual(got, [1000, 2000, 9000])
        self.assertEqual(lost, 1)

    def test_later_latencies_are_not_shifted_by_a_loss(self):
        pulses, taken, ends = [0, 10, 20, 100], [5, 35, 105], [50, 60, 150]
        got, lost = pair_packets(pulses, taken)
        self.assertEqual([e - s for s, e in zip(got, ends)], [50, 50, 50])
        self.assertEqual(lost, 1)


if __name__ == "__main__":
    unittest.main()
