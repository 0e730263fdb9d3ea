"""A plain `bazel build` or `bazel test` prints no warning that our own
.bazelrc causes (issue 30: "Stripping enabled, but '--copt=-g'" on every
command, and a test-size warning after every test run)."""
import os
import re
import unittest

RC = os.path.join(os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", ""), ".bazelrc")


def plain_lines():
    """The options every command gets: build and test lines without a :config."""
    with open(RC, encoding="utf-8") as f:
        return [line.split() for line in f if re.match(r"^(build|test) ", line)]


class Bazelrc(unittest.TestCase):
    def test_debug_info_is_not_stripped_with_a_warning(self):
        opts = [o for line in plain_lines() for o in line[1:]]
        if "--copt=-g" in opts:
            self.assertIn("--strip=never", opts, "-g with Bazel's default --strip=sometimes warns on every command")

    def test_no_timeout_warnings_asked_for(self):
        opts = [o for line in plain_lines() for o in line[1:]]
        self.assertNotIn("--test_verbose_timeout_warnings", opts)


if __name__ == "__main__":
    unittest.main()
