# SPDX-License-Identifier: MIT
"""The tree-position benchmark pairs each packet-job end with the pulse
whose interrupt the chip took; a pulse that merged with an earlier one
(interrupts off) is counted lost instead of shifting every later latency.
The no-OS floor is shown beside the kernels but never counted as one."""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from motetlib import bench_energy  # noqa: E402
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


def _point(n, ls, it, ik, cycles=4_000_000, packets=255):
    return {"n": n, "ls": ls, "it": it, "ik": ik, "ikmax": ik, "et_ms": 1.0,
            "cycles": cycles, "packets": packets}


def _results(kernel_over, floor_over):
    """Every position of every configuration with the given overhead (pp)."""
    out = {}
    for v, over in (("tasks", kernel_over), ("fifo", kernel_over), ("floor", floor_over)):
        for ls in bench_energy.LS:
            out[(v, ls)] = [_point(n, ls, 90.0 - over, 90.0) for n in (1, 8)]
    return out


class FloorFigures(unittest.TestCase):
    def test_target_in_cycles_per_packet_at_n_8(self):
        # 0.3 % of 4 MHz over 255 packets/s.
        self.assertAlmostEqual(bench_energy.target_cycles_per_packet(8, 4_000_000), 47.06, 2)

    def test_overhead_per_packet_charges_the_run_to_its_packets(self):
        # 1 pp of 4,000,000 cycles over 250 packets.
        p = _point(8, 4000, 89.0, 90.0, packets=250)
        self.assertAlmostEqual(bench_energy.overhead_per_packet(p), 160.0)

    def test_overhead_per_packet_of_a_run_without_packets_is_undefined(self):
        p = _point(8, 4000, 89.0, 90.0, packets=0)
        self.assertNotEqual(bench_energy.overhead_per_packet(p),
                            bench_energy.overhead_per_packet(p))

    def test_floor_is_never_the_best_configuration(self):
        lines = bench_energy._verdicts(_results(1.0, 0.1), ["tasks", "fifo", "floor"], 4e6)
        best = next(x for x in lines if "best Motet configuration" in x)
        self.assertNotIn("floor", best)
        self.assertIn("NOT met", best)
        self.assertFalse(any("E_t independent" in x and "floor" in x for x in lines))

    def test_target_within_reach_when_the_floor_loses_less(self):
        lines = bench_energy._verdicts(_results(1.0, 0.1), ["tasks", "floor"], 4e6)
        reach = [x for x in lines if "pp target at n" in x]
        self.assertEqual(len(reach), 1)
        self.assertIn("within reach", reach[0])
        self.assertIn("0.900 pp above it", next(x for x in lines if x.startswith("- no OS")))

    def test_target_out_of_reach_when_the_floor_loses_more(self):
        lines = bench_energy._verdicts(_results(1.0, 0.5), ["tasks", "floor"], 4e6)
        self.assertTrue(any("out of reach of any kernel" in x for x in lines))


if __name__ == "__main__":
    unittest.main()
