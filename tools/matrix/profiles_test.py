"""Tests of the version profiles: how a clause's since is read off the matrix."""
import unittest

from tools.matrix import profiles

ORDER = ["0.1.0", "0.1.4", "0.1.8.post0", "0.1.9"]


def case(name, status, message="", suite="s", version="0.1.0"):
    return {"suite": suite, "name": name, "status": status, "message": message,
            "impl": {"version": version}}


class States(unittest.TestCase):
    recorded = {"s::AAA_001_x": "0.1.16"}

    def test_pass_skip_fail(self):
        state = profiles.clause_state
        self.assertEqual(state([case("AAA_002_x", "PASSED"), case("AAA_002_y", "SKIPPED", "no GPU")],
                               "0.1.0", self.recorded), "holds")
        self.assertEqual(state([case("AAA_002_x", "FAILED")], "0.1.0", self.recorded), "breaks")
        self.assertEqual(state([case("AAA_002_x", "SKIPPED", "x.so does not export F")], "0.1.0",
                               self.recorded), "absent")
        self.assertEqual(state([case("AAA_002_x", "SKIPPED", "runs upstream's own package")], "0.1.0",
                               self.recorded), "untested")

    def test_recorded_failure_counts_against_the_release_up_to_where_it_is_recorded(self):
        state = profiles.clause_state
        self.assertEqual(state([case("AAA_001_x", "CRASHED")], "0.1.9", self.recorded), "deviates")
        self.assertEqual(state([case("AAA_001_x", "CRASHED")], "0.1.17", self.recorded), "breaks")


class Derive(unittest.TestCase):
    def derive(self, *states):
        return profiles.derive(dict(zip(ORDER, states)), ORDER)

    def test_oldest_of_the_newest_run_that_holds(self):
        self.assertEqual(self.derive("breaks", "absent", "holds", "holds")[0], "0.1.8.post0")
        self.assertEqual(self.derive("holds", "holds", "holds", "holds")[0], "0.1.0")
        self.assertEqual(self.derive("holds", "breaks", "deviates", "holds")[0], "0.1.8.post0")

    def test_newest_release_breaking_it_tells_nothing(self):
        self.assertEqual(self.derive("holds", "holds", "holds", "breaks")[0], "")

    def test_deviations_alone_date_it_from_the_first_release_that_has_it(self):
        derived, why, _ = self.derive("absent", "deviates", "deviates", "deviates")
        self.assertEqual(derived, "0.1.4")
        self.assertIn("deviates", why)

    def test_untested_releases_are_passed_over(self):
        derived, _, floor = self.derive("untested", "untested", "holds", "holds")
        self.assertEqual((derived, floor), ("0.1.8.post0", True))
        self.assertEqual(profiles.verdict("0.1.0", derived, floor), "ok")
        derived, _, floor = self.derive("breaks", "untested", "holds", "holds")
        self.assertEqual(profiles.verdict("0.1.0", derived, floor), "later")

    def test_verdicts(self):
        self.assertEqual(profiles.verdict("0.1.0", "0.1.4"), "later")
        self.assertEqual(profiles.verdict("0.1.9", "0.1.4"), "earlier")
        self.assertEqual(profiles.verdict("", "0.1.4"), "missing")
        self.assertEqual(profiles.verdict("0.1.4", ""), "unknown")


class FixLine(unittest.TestCase):
    def test_rewrites_only_the_version(self):
        fix = profiles.fix_line
        self.assertEqual(fix("A-001 [MUST] x (since 0.1.0)\n", "0.1.9"), "A-001 [MUST] x (since 0.1.9)\n")
        self.assertEqual(fix("A-001 [MUST] x (as of 0.1.16)\n", "0.1.0"), "A-001 [MUST] x (since 0.1.0)\n")
        self.assertEqual(fix("A-001 [MUST] x (since 0.1.0; before it, y)\n", "0.1.9"),
                         "A-001 [MUST] x (since 0.1.9; before it, y)\n")
        self.assertEqual(fix("A-001 [MUST] x\n", "0.1.4"), "A-001 [MUST] x (since 0.1.4)\n")


if __name__ == "__main__":
    unittest.main()
