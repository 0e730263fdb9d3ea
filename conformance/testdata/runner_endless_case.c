/*
 * A test that never ends, for //conformance:fork_runner_test: when its
 * runner is killed from outside, the forked child running it must go too.
 * It writes its pid where RUNNER_CHILD_PID_FILE says, then waits forever.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

Test(endless, waits_forever) {
  FILE* f = fopen(getenv("RUNNER_CHILD_PID_FILE"), "w");
  cr_assert_not_null(f);
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  for (;;) pause();
}
