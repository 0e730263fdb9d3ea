/* Leaks one block when given an argument, none without: the two cases
 * tools/valgrind_run_test.sh holds the valgrind wrapper to. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  (void)argv;
  char* volatile block = malloc(32);
  if (argc < 2) free(block);
  block = NULL;
  puts("ran");
  return 0;
}
