/* Unit tests of names.c: prefixed names on the heap and in a caller's
 * buffer, at the edge where the buffer stops being enough. */
#include "names.h"

#include <criterion/criterion.h>
#include <string.h>

#include "mem.h"
#include "unit_test_support.h"

Test(names, prefixed_in_uses_the_buffer_when_the_name_and_nul_fit) {
  char buf[8];
  char* s = tffi_prefixed_in(buf, sizeof buf, "ab", "cdefgXYZ", 5); /* 7 bytes + NUL */
  cr_assert_eq(s, buf);
  cr_expect_str_eq(s, "abcdefg");
  tffi_prefixed_done(s, buf);
}

Test(names, prefixed_in_allocates_when_the_nul_does_not_fit) {
  char buf[9];
  memset(buf, 'z', sizeof buf);
  char* s = tffi_prefixed_in(buf, 8, "ab", "cdefgh", 6); /* 8 bytes + NUL */
  cr_assert_not_null(s);
  cr_expect_neq(s, buf);
  cr_expect_str_eq(s, "abcdefgh");
  cr_expect_eq(buf[8], 'z', "a byte past the buffer was written");
  tffi_prefixed_done(s, buf);
}

Test(names, prefixed_in_allocates_for_a_name_longer_than_the_buffer) {
  char buf[4];
  char* s = tffi_prefixed_in(buf, sizeof buf, "", "abcdef", 6);
  cr_assert_not_null(s);
  cr_expect_neq(s, buf);
  cr_expect_str_eq(s, "abcdef");
  tffi_prefixed_done(s, buf);
}

Test(names, prefixed_in_takes_only_len_bytes_of_the_name) {
  char buf[32];
  char* s = tffi_prefixed_in(buf, sizeof buf, "ffi.", "kindXXXX", 4);
  cr_assert_eq(s, buf);
  cr_expect_str_eq(s, "ffi.kind");
}

Test(names, prefixed_in_out_of_memory_is_null) {
  char buf[4];
  tffi_mem_fail_at(1, 0);
  char* s = tffi_prefixed_in(buf, sizeof buf, "prefix", "name", 4);
  tffi_mem_fail_off();
  cr_expect_null(s, "the fallback allocation failed");
  expect_raised("MemoryError", NULL);
}
