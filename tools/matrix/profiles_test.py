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

    def test_a_clause_that_holds_on_no_release_has_no_since(self):
        # BIG-009 before the stand-ins: the suite crashed on the releases
        # that lack the function, which read as "deviates" and dated the
        # clause from the first release.
        derived, why, _ = self.derive("absent", "deviates", "deviates", "deviates")
        self.assertEqual(derived, "none")
        self.assertIn("holds on no release", why)
        self.assertEqual(self.derive("untested", "untested", "untested", "untested")[:2],
                         ("none", "no release tested it"))
        self.assertEqual(self.derive("breaks", "breaks", "deviates", "deviates")[0], "none")
        self.assertEqual(self.derive("holds", "breaks", "deviates", "deviates")[0], "none")

    def test_deviations_after_a_release_that_holds_date_it_from_there(self):
        self.assertEqual(self.derive("absent", "holds", "deviates", "deviates")[0], "0.1.4")

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
        self.assertEqual(profiles.verdict("none", "none"), "ok")
        self.assertEqual(profiles.verdict("0.1.0", "none"), "nowhere")
        self.assertEqual(profiles.verdict("none", "0.1.4"), "holds")

    def test_the_table_cell_reads_back(self):
        for derived, floor, text in (("0.1.4", False, "0.1.4"), ("0.1.4", True, "<=0.1.4"),
                                     ("none", False, "none"), ("", False, "?")):
            self.assertEqual(profiles.holds_from({"derived": derived, "floor": floor}), text)
            self.assertEqual(profiles.parse_holds_from(text), (derived, floor))


EVERY = ["0.1.0", "0.1.1", "0.1.2", "0.1.3", "0.1.4"]


def run_of(states):
    """Raw records of one clause AAA-001 per release: {release: status}."""
    return [(v, [dict(case("AAA_001_x", status, "x.so does not export F" if status == "SKIPPED" else ""),
                      impl={"version": v})]) for v, status in states.items()]


class Subsets(unittest.TestCase):
    """A run of some releases judges only the clauses whose deciding
    releases it covers (issue 30: --releases 0.1.0,0.1.15.post2 reported 117
    disagreements that were artifacts of the subset)."""

    def clause(self, since):
        return {"AAA-001": {"id": "AAA-001", "level": "MUST", "text": f"x (since {since})", "since": since}}

    def test_a_subset_that_skips_the_deciding_releases_cannot_tell(self):
        # Holds on 0.1.4, fails on 0.1.0; annotated 0.1.2: only 0.1.1 to
        # 0.1.4 decide it, and this run has neither 0.1.1 nor 0.1.3.
        (p,) = profiles.profile(self.clause("0.1.2"), run_of({"0.1.0": "FAILED", "0.1.4": "PASSED"}), [], EVERY)
        self.assertEqual(p["verdict"], "unknown")
        self.assertIn("covers 2 of the 5 releases", p["why"])

    def test_a_subset_that_covers_them_judges(self):
        (p,) = profiles.profile(self.clause("0.1.2"), run_of({"0.1.1": "FAILED", "0.1.2": "FAILED",
                                                              "0.1.3": "PASSED", "0.1.4": "PASSED"}), [], EVERY)
        self.assertEqual((p["derived"], p["verdict"]), ("0.1.3", "later"))

    def test_every_release_judges_all(self):
        (p,) = profiles.profile(self.clause("0.1.2"), run_of({v: "PASSED" for v in EVERY}), [], EVERY)
        self.assertEqual((p["derived"], p["verdict"]), ("0.1.0", "earlier"))


class FixLine(unittest.TestCase):
    def test_rewrites_only_the_version(self):
        fix = profiles.fix_line
        self.assertEqual(fix("A-001 [MUST] x (since 0.1.0)\n", "0.1.9"), "A-001 [MUST] x (since 0.1.9)\n")
        self.assertEqual(fix("A-001 [MUST] x (as of 0.1.16)\n", "0.1.0"), "A-001 [MUST] x (since 0.1.0)\n")
        self.assertEqual(fix("A-001 [MUST] x (since 0.1.0; before it, y)\n", "0.1.9"),
                         "A-001 [MUST] x (since 0.1.9; before it, y)\n")
        self.assertEqual(fix("A-001 [MUST] x\n", "0.1.4"), "A-001 [MUST] x (since 0.1.4)\n")
        self.assertEqual(fix("A-001 [MUST] x (since 0.1.4)\n", "none"), "A-001 [MUST] x (since none)\n")
        self.assertEqual(fix("A-001 [MUST] x (since none)\n", "0.1.4"), "A-001 [MUST] x (since 0.1.4)\n")


if __name__ == "__main__":
    unittest.main()
