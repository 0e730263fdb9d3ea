/*
 * One test of each outcome a runner must report, compiled twice by
 * //conformance:fork_runner_test: under Criterion's own workers and under
 * the forked workers of fork_runner.c. Both must give the same verdicts.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static int fixture_ran;

static void set_fixture(void) { fixture_ran = 42; }

Test(cases, passes) { cr_expect_eq(1 + 1, 2); }

Test(cases, expect_fails_and_goes_on) {
  cr_expect_eq(1, 2, "first expectation %d", 7);
  cr_expect_str_eq("a", "b", "second expectation");
}

Test(cases, assert_stops_the_test) {
  cr_assert_eq(1, 2, "the assert");
  cr_expect_fail("never reached");
}

Test(cases, skips) { cr_skip_test("no device here (%s)", "reason"); }

Test(cases, crashes) { raise(SIGSEGV); }

Test(cases, times_out, .timeout = 1) { sleep(5); }

Test(cases, fixture_runs, .init = set_fixture) { cr_expect_eq(fixture_ran, 42); }

Test(cases, expected_signal, .signal = SIGABRT) { abort(); }

Test(cases, expected_exit_code, .exit_code = 3) { exit(3); }

Test(cases, wrong_exit_code) { exit(4); }

Test(cases, disabled, .disabled = true) { cr_expect_fail("disabled tests do not run"); }
