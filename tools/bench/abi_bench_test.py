"""abi_bench says in words why a target is out of reach (issue 30: it ended
"the target is out of reach" and nothing more)."""
import unittest

from tools.bench import abi_bench


def row(op, target, mine, floor):
    return {"op": op, "target_ratio": target, "instructions": {"net_ratio": mine},
            "floor": {"op": abi_bench.FLOORS[op], "net_instructions": 100.0, "net_ratio_to_upstream": floor}}


class FloorLimited(unittest.TestCase):
    def test_a_floor_above_the_target_is_explained(self):
        why = abi_bench.floor_limited(row("owned_long", 0.5, 0.71, 0.62))
        self.assertEqual(why, "the target (at most 0.5 of upstream's instructions) is out of reach for any "
                         "runtime: strlen, malloc, memcpy and free of the string, which every runtime must do, "
                         "alone costs 0.62 of upstream's; the reference's 0.71 is 0.09 above that floor")

    def test_a_floor_below_the_target_says_nothing(self):
        self.assertEqual(abi_bench.floor_limited(row("load_1", 0.5, 0.3, 0.2)), "")


if __name__ == "__main__":
    unittest.main()
