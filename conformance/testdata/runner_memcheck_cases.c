/*
 * Memory errors inside tests run by the forked-worker runner: valgrind must
 * still see each one in the child that made it (tools/valgrind_run_test.sh).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

Test(memcheck, leaks_48_bytes) {
  char* volatile block = malloc(48);
  cr_expect_not_null(block);
  block = NULL;
}

Test(memcheck, branches_on_uninitialised_memory) {
  int* volatile cell = malloc(sizeof *cell);
  cr_assert_not_null(cell);
  if (*cell == 7) puts("seven");
  free(cell);
}

Test(memcheck, clean) { free(malloc(8)); }
